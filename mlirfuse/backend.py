"""`torch.compile(model, backend="mlirfuse")`: Dynamo's FX graphs through the mlirfuse pipeline.

    compiled = torch.compile(model, backend="mlirfuse")        # no import of mlirfuse needed (entry point)
    compiled = torch.compile(model, backend="mlirfuse", options={"explain": True})
    loss = compiled(x).sum(); loss.backward()                  # forward and backward both fused

    from mlirfuse.backend import backend
    backend.stats            # {"forward": {...}, "backward": {...}, "inference": {...}}, summed per role
    backend.graphs           # one CompiledFxGraph per graph handed over: role, stats, mlir, kernels, eager_reason
    backend.clear()          # forget the records (compiled code stays with torch.compile)

Every graph Dynamo captures goes through AOTAutograd: it functionalizes it
(buffer and input mutations become extra outputs its runtime copies back;
where it can, the kernel computing one stores it in the input itself, and
the copy moves nothing: `written_back`, runtime/liveness.py),
applies the decompositions below (backward ops such as gelu_backward and
native_layer_norm_backward become pointwise ops and reductions the fuser
groups; so do the composite ops Inductor decomposes, as for `mlirfuse.compile`,
see `frontend/decompositions.py`) and splits it into a forward and a backward graph with the min-cut
partitioner, which recomputes cheap pointwise values in the backward
instead of saving them. Each graph is imported with torch-mlir's FX
importer (no second torch.export) and run through the same pipeline and
runtime as `mlirfuse.compile`. Without gradients (`torch.no_grad()`, or
nothing requires grad) AOTAutograd hands over one "inference" graph.

Dynamo's `invoke_subgraph` (a `torch.compiler.nested_compile_region`) is
imported as a call of one private function per distinct subgraph
(frontend/importer.py): the block is compiled once, called per occurrence.

A graph that cannot be compiled (an op the importer or the runtime does
not know) runs eagerly, with one warning on the `mlirfuse` logger naming
the op or the reason; the other graphs stay compiled.
Symbolic sizes (`dynamic=True`, or Dynamo's automatic dynamic shapes after
a second size) are compiled like `mlirfuse.compile(..., dynamic_shapes=...)`:
the importer makes each symbolic size an int input and a `?` dim, size
arithmetic (`s0 * 8`) runs as Python ints, and kernels take the sizes as
arguments, so one graph serves every size Dynamo's guards let through.

Options (`torch.compile(..., options={...})` or `Backend(**options)`):
`pipeline` (a pass pipeline string or list of pass names, as for
`mlirfuse.compile`), `explain` (record why neighbours were not fused),
`straight_line` (False: interpret the program's steps per call instead of
running its generated straight-line Python; as for `mlirfuse.compile`),
`mode` ("reduce-overhead": an inference graph's calls replay a CUDA graph,
runtime/graphs.py, with the parameters AOTAutograd marks static read in
place and the other inputs copied in; training graphs run as usual).
"""

from __future__ import annotations

import logging
import operator
import time
from dataclasses import dataclass, field

import torch
from torch._functorch.aot_autograd import make_boxed_func

from mlirfuse.compiler import CompiledGraph
from mlirfuse.errors import MlirfuseError, PipelineError
from mlirfuse.frontend.decompositions import inductor_table
from mlirfuse.frontend.importer import import_graph_module
from mlirfuse.runtime.graphs import GraphedProgram, check_mode

logger = logging.getLogger("mlirfuse")

OPTIONS = ("pipeline", "explain", "straight_line", "mode")

# Decomposed by AOTAutograd before import: backward (and training-mode
# batch norm) ops into the pointwise ops and reductions the fuser groups.
# Forward normalizations (softmax, layer_norm) stay whole: fusion-decompose
# handles them in MLIR.
_DECOMPOSED = (
    "gelu_backward",
    "native_layer_norm_backward",
    "_softmax_backward_data",
    "_log_softmax_backward_data",
    "threshold_backward",
    "sigmoid_backward",
    "tanh_backward",
    "silu_backward",
    "hardswish_backward",
    "leaky_relu_backward",
    "elu_backward",
    "mse_loss",
    "mse_loss_backward",
    "native_batch_norm",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_functional",
    "native_batch_norm_backward",
)


def decompositions() -> dict:
    """Inductor's decompositions of the ops mlirfuse does not handle whole, and the backward ops above."""
    from torch._decomp import get_decompositions

    return {**inductor_table(), **get_decompositions([getattr(torch.ops.aten, name) for name in _DECOMPOSED])}


@dataclass
class CompiledFxGraph:
    """One graph the backend was handed: compiled (`graph`) or run eagerly (`eager_reason`)."""

    role: str  # "forward" | "backward" | "inference"
    graph: CompiledGraph | None = None
    eager_reason: str | None = None
    compile_seconds: float = 0.0
    runner: GraphedProgram | None = None  # mode="reduce-overhead": the graph's calls through CUDA graphs
    stats: dict = field(default_factory=dict)


def unsupported_node(gm: torch.fx.GraphModule) -> str | None:
    """Why `gm` cannot be compiled, naming the first node in the way; None if nothing is known to be."""
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            continue  # symbolic sizes arrive as int inputs and `?` dims (the importer's)
        elif node.op == "call_function":
            target = node.target
            if target is operator.getitem or isinstance(target, torch._ops.OpOverload):
                continue
            if target is torch.ops.higher_order.invoke_subgraph and node.args[0].op == "get_attr":
                # nested_compile_region: the subgraph is compiled once, a function each invocation calls
                why = unsupported_node(operator.attrgetter(node.args[0].target)(gm))
                if why is None:
                    continue
                return f"subgraph {node.args[0].target}: {why}"
            if isinstance(node.meta.get("val"), torch.SymInt) and getattr(target, "__module__", None) == "_operator":
                continue  # arithmetic on symbolic sizes (s0 * 8): imported as torch.aten.*.int, run as Python ints
            name = getattr(target, "name", None)
            name = name() if callable(name) else getattr(target, "__name__", str(target))
            return f"op '{name}' is a higher-order op or a Python function, not an operator mlirfuse runs"
        elif node.op == "get_attr":
            continue  # tensor constants become arguments; subgraphs are read only by higher-order ops (above)
        elif node.op in ("call_module", "call_method"):
            return f"node '{node.name}' ({node.op} {node.target}) is not a functional ATen op"
    return None


def _forward_metadata():
    context = torch._guards.TracingContext.try_get()
    return context.fw_metadata if context is not None else None


def written_back(imported) -> dict[int, int]:
    """Result position -> argument position, for the inputs a forward or inference graph mutates whose data
    AOTAutograd's runtime copies the result into (`original.copy_(updated)`; batch norm's running stats) and
    nothing else: no new size or strides, no `set_`. Empty where a result is handed back outside the program
    (its positions would shift)."""
    meta = _forward_metadata()
    if meta is None or imported.passthrough:
        return {}
    arguments = {what: a for a, (kind, what) in enumerate(imported.bindings) if kind == "input"}
    pairs = {}
    for position, index in enumerate(meta.mutated_inp_runtime_indices):
        info = meta.input_info[index]
        if info.mutates_data and not info.mutates_metadata and not info.mutates_storage_metadata and index in arguments:
            pairs[position] = arguments[index]
    return pairs


def writebacks(gm: torch.fx.GraphModule, in_place: frozenset = frozenset()) -> tuple[int, int]:
    """The inputs a forward or inference graph mutates, which AOTAutograd's runtime copies its results into after
    each call (buffers updated in place: batch norm's running stats): how many copies move data, and the bytes
    they move; a result a launch stored in its input already (position in `in_place`) moves nothing."""
    meta = _forward_metadata()
    if meta is None:
        return 0, 0
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    results = output.args[0] if isinstance(output.args[0], (tuple, list)) else [output.args[0]]
    count = nbytes = 0
    for position, index in enumerate(meta.mutated_inp_runtime_indices):
        if not meta.input_info[index].mutates_data or position in in_place:
            continue
        count += 1
        value = results[position].meta.get("val") if isinstance(results[position], torch.fx.Node) else None
        if isinstance(value, torch.Tensor) and isinstance(value.numel(), int):  # not a symbolic size
            nbytes += 2 * value.numel() * value.element_size()  # read once, written once
    return count, nbytes


class Backend:
    """A torch.compile backend running each graph through mlirfuse; `backend` below is the registered one."""

    __name__ = "mlirfuse"

    def __init__(self, **options):
        self.options = self._check_options(options)
        self.graphs: list[CompiledFxGraph] = []

    @staticmethod
    def _check_options(options: dict | None) -> dict:
        options = dict(options or {})
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise PipelineError(f"unknown mlirfuse backend option(s) {unknown}; known: {', '.join(OPTIONS)}")
        if "mode" in options:
            check_mode(options["mode"])
        return options

    def __call__(self, gm: torch.fx.GraphModule, example_inputs, options: dict | None = None, **unused):
        from functorch.compile import min_cut_rematerialization_partition
        from torch._dynamo.backends.common import aot_autograd

        opts = {**self.options, **self._check_options(options)}

        def compiler(role):
            return lambda g, inputs: self.compile_graph(g, inputs, role, opts)

        return aot_autograd(
            fw_compiler=compiler("forward"),
            bw_compiler=compiler("backward"),
            inference_compiler=compiler("inference"),
            partition_fn=min_cut_rematerialization_partition,
            decompositions=decompositions(),
        )(gm, example_inputs)

    def compile_graph(self, gm: torch.fx.GraphModule, example_inputs, role: str, options: dict):
        """One functional ATen graph -> a callable on its flat inputs; `gm` itself if it cannot be compiled."""
        record = CompiledFxGraph(role)
        self.graphs.append(record)
        start = time.perf_counter()
        reason = unsupported_node(gm)
        graphed = role == "inference" and check_mode(options.get("mode")) == "reduce-overhead"
        if reason is None:
            try:
                imported = import_graph_module(gm)
                record.graph = CompiledGraph(
                    imported, options.get("pipeline"), bool(options.get("explain", False)),
                    straight_line=options.get("straight_line"),
                    # Mutated inputs' new values stored in them by the kernels (not under CUDA graphs: copied out).
                    written_back=written_back(imported) if role != "backward" and not graphed else None,
                )
            except MlirfuseError as e:
                reason = str(e).split("\n", 1)[0]
            except Exception as e:  # a bug in mlirfuse: the graph still runs, eagerly
                reason = f"internal error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        record.compile_seconds = time.perf_counter() - start
        if record.graph is None:
            record.eager_reason = reason
            logger.warning("%s graph runs eagerly: %s", role, reason)
            return make_boxed_func(gm.forward)
        record.stats = dict(record.graph.stats)
        # AOTAutograd's runtime copies the inputs a forward or inference graph mutates back after each call.
        program = record.graph.program
        in_place = program.written_back_in_place
        record.stats["writebacks"], record.stats["writeback_bytes"] = (
            writebacks(gm, in_place) if role != "backward" else (0, 0))
        imported = record.graph.imported
        if graphed:
            # Dynamo passes parameters as inputs; AOTAutograd says which are static (read in place, guarded).
            meta = _forward_metadata()
            static = set(meta.static_input_indices or ()) if meta is not None else set()
            kinds = ["param" if kind == "input" and what in static else kind for kind, what in imported.bindings]
            program = record.runner = GraphedProgram(program, kinds)
        constants = [what for kind, what in imported.bindings if kind == "constant"]
        inputs = [what for kind, what in imported.bindings if kind == "input"]
        passthrough = sorted(imported.passthrough.items())  # script objects handed back: (result position, input)

        def run(args: list):
            # AOTAutograd's boxed convention: one list, which we empty so inputs are freed as early as eager frees them.
            if not passthrough and len(inputs) == len(args):
                arguments = [*args, *constants]
                args.clear()
                return program.execute(arguments)
            handed_back = [(k, args[i]) for k, i in passthrough]
            arguments = [*(args[i] for i in inputs), *constants]
            args.clear()
            results = program.execute(arguments)
            for k, value in handed_back:
                results.insert(k, value)
            return results

        run._boxed_call = True
        return run

    @property
    def stats(self) -> dict:
        """Per role ("forward", "backward", "inference"): each stat summed over its compiled graphs, plus counts."""
        totals: dict[str, dict] = {}
        for record in self.graphs:
            role = totals.setdefault(record.role, {"graphs": 0, "eager_graphs": 0, "compile_seconds": 0.0})
            role["graphs"] += 1
            role["eager_graphs"] += record.graph is None
            role["compile_seconds"] += record.compile_seconds
            for key, value in record.stats.items():
                # A peak is the largest of the graphs' (they run one at a time), the rest add up.
                role[key] = max(role.get(key, 0), value) if key.endswith("peak_bytes") else role.get(key, 0) + value
            if record.runner is not None:  # mode="reduce-overhead": captures, replays, calls without a graph
                for key in ("captures", "replays", "ungraphed_calls"):
                    role[f"cuda_graph_{key}"] = role.get(f"cuda_graph_{key}", 0) + record.runner.stats[key]
                if record.runner.stats["not_graphed"]:
                    role["cuda_graph_not_graphed"] = record.runner.stats["not_graphed"]
        return totals

    def clear(self) -> None:
        """Forget the records of compiled graphs (what torch.compile compiled keeps running)."""
        self.graphs.clear()


# What `torch.compile(backend="mlirfuse")` finds through the `torch_dynamo_backends` entry point.
backend = Backend()
