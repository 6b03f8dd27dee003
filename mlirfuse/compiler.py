"""`mlirfuse.compile`: nn.Module -> a callable running fused Triton kernels.

    cm = mlirfuse.compile(model, example_inputs)
    cm(*inputs)      # what model(*inputs) returns
    cm = mlirfuse.compile(model, (ids,), {"attention_mask": mask})
    cm(ids, attention_mask=mask)
    cm.stats         # aten_ops, groups, kernels, launches, unfused_ops, unfused_views, operand_views, writebacks,
                     # passes_run, kernels_compiled, program_cache_hits/misses, kernel_cache_hits/misses
    cm.mlir          # the final IR
    cm.kernels       # kernel name -> TritonKernel (source included)
    cm.guard_stats   # compiles, hits, eager_calls: how calls met the specializations
    cm.program_source()  # the generated Python each call runs (runtime/codegen.py)

Inference only: calls run under `torch.no_grad()`.

Guards: each call's inputs are keyed by what a specialization assumes
(positional/keyword structure; per tensor shape, dtype and device; other
values by value). Strides are not part of the key: every launch reads its
inputs' strides at run time and view ops fall back to copying reshapes, so
a non-contiguous input reuses the kernels. A new key exports and compiles a
new specialization, cached; past `max_specializations` (default 8) a new key
runs the eager model with a `RecompileLimitWarning`. `strict=True` raises
`InputMismatchError` instead of compiling anything new.

With `dynamic_shapes` (torch.export's form) a specialization is exported
with `?` sizes, and a call whose inputs it covers (`ImportedProgram.covers`:
torch.export's shape and range check, same dtypes and devices) is a hit
under a key of its own, without a new export or kernel.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import warnings

import torch
from torch.utils import _pytree as pytree

from mlirfuse.analysis.cost import program_cost, sum_sizes, value_bytes
from mlirfuse.dialect import constant_merges
from mlirfuse.errors import CompilationError, InputMismatchError, MlirfuseError, PipelineError, RecompileLimitWarning
from mlirfuse.frontend.importer import ImportedProgram, flatten_inputs, import_module, input_meta
from mlirfuse.frontend.layers import LayerReport, dedup_enabled, import_with_layers
from mlirfuse.ir import ir, last_op
from mlirfuse.passes import MLIRFUSE_PIPELINE, default_pipeline
from mlirfuse.passes.pipeline import build_pass_manager, gc_paused
from mlirfuse.passes.pipeline_text import as_pipeline, aten_matmul_pipeline, our_pipeline
from mlirfuse.passes.policy import using as using_policy
from mlirfuse.progress import Progress
from mlirfuse.runtime.aot import AotCompiles, parse_target, start_workers
from mlirfuse.runtime.cache import KernelCache, ProgramCache
from mlirfuse.runtime.dryrun import launch_specializations, meta_inputs
from mlirfuse.runtime.graphs import GraphedProgram, check_mode
from mlirfuse.runtime.program import Program

logger = logging.getLogger("mlirfuse")

DEFAULT_MAX_SPECIALIZATIONS = 8


def count_aten_ops(module: ir.Module) -> int:
    """torch ops that compute something, per run of the first function: constants and list construction
    excluded, a called function's (a layer compiled once) counted per call."""
    functions = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in module.body.operations
                 if f.operation.name == "func.func"}
    counts: dict[str, int] = {}

    def count(name: str) -> int:
        if name not in counts:
            total = 0

            def visit(op):
                nonlocal total
                if op.name.startswith(("torch.aten.", "torch.prims.")) or op.name == "torch.operator":
                    total += 1
                elif op.name == "func.call":
                    total += count(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
                return ir.WalkResult.ADVANCE

            functions[name].operation.walk(visit)
            counts[name] = total
        return counts[name]

    return count(next(iter(functions))) if functions else 0


def straight_line_enabled(option: bool | None) -> bool:
    """`straight_line=` as given, else on unless `MLIRFUSE_STRAIGHT_LINE` is "0"."""
    if option is not None:
        return bool(option)
    return os.environ.get("MLIRFUSE_STRAIGHT_LINE", "") != "0"


def run_pipeline(module: ir.Module, context: ir.Context, pipeline=None, explain: bool = False, progress=None) -> int:
    """Run the fusion pipeline on `module`; returns how many of mlirfuse's passes ran."""
    ran = 0

    def on_pass(index: int, total: int, name: str) -> None:
        nonlocal ran
        ran += 1
        if progress is not None:
            progress.step("pass", index, total, name)

    pm = build_pass_manager(pipeline or default_pipeline(), context, explain=explain, progress=on_pass)
    try:
        with gc_paused():
            pm.run(module.operation)
    except ir.MLIRError as e:
        raise CompilationError(f"the fusion pipeline failed: {e}") from None
    return ran


def example_arguments(imported: ImportedProgram, model: torch.nn.Module) -> list:
    """The program's arguments for the example's flat inputs as meta tensors and `model`'s parameters and buffers
    (what a dry run of the program takes: runtime/dryrun.py)."""
    return bind_arguments(imported, meta_inputs(imported.input_meta), model.get_parameter, model.get_buffer)


class CompiledGraph:
    """One imported function through the fusion pipeline: its IR, kernels, runnable steps and stats.

    Shared by `mlirfuse.compile` (one per specialization) and the
    `torch.compile` backend (one per FX graph Dynamo or AOTAutograd hands over).
    """

    def __init__(
        self, imported: ImportedProgram, pipeline=None, explain: bool = False, progress: Progress | None = None,
        cache: bool = True, straight_line: bool | None = None, aot_archs: tuple[int, ...] = (),
        written_back: dict[int, int] | None = None,
    ):
        """`cache`: use the persistent cache (runtime/cache.py; MLIRFUSE_NO_CACHE=1 turns it off everywhere).
        `straight_line`: run the program as generated straight-line Python (runtime/codegen.py) instead of
        interpreting its steps; None: `straight_line_enabled`. `aot_archs`: the kernels are to be compiled for
        these sm_<arch> (`self.aot`, which `CompiledModule` fills and `mlirfuse.save` collects).
        `written_back`: result position -> argument position, for results the caller copies into that argument
        after each call (mutated buffers): the program may store them there in place (`Program`)."""
        self.imported = imported
        self.aot = AotCompiles() if aot_archs else None
        # sm_<arch> -> (kernel name -> the launch its cubin is compiled for, why the dry run stopped early)
        self.aot_specialized: dict[int, tuple[dict, str | None]] = {}
        aten_ops = count_aten_ops(imported.module)
        # --- persistent cache: a program hit replaces the pipeline by the stored final IR (runtime/cache.py)
        programs, lowering = ProgramCache(imported, pipeline, explain, cache), KernelCache(cache)
        self.mlir = programs.lookup(imported)
        passes_run = 0
        if self.mlir is None:
            passes_run = run_pipeline(imported.module, imported.context, pipeline, explain, progress)
            self.mlir = str(imported.module)
        func = next(op for op in imported.module.body.operations if op.operation.name == "func.func")
        on_kernel = None if progress is None else functools.partial(progress.step, "lowering kernel")
        self.program = Program(func, imported.module, on_kernel=on_kernel, lower=lowering,
                               straight_line=straight_line_enabled(straight_line), written_back=written_back)
        # What a call runs: the program, or (mode="reduce-overhead") its calls through CUDA graphs.
        self.runner = self.program
        programs.store(self.mlir)
        # --- end persistent cache
        self.kernels = self.program.kernels
        steps = list(self.program.flat_steps())  # a deduplicated layer's steps once per call
        launches = sum(1 for s in steps if s.kind == "launch")
        self.stats = {
            "aten_ops": aten_ops,
            # Outlining turns every fusion.group into one fusion.launch: the two counts agree by construction.
            "groups": launches,
            "kernels": len(self.kernels),
            # Of the kernels groups would have had, how many sharing one modulo constants saved (lift-constants).
            "constant_merges": constant_merges(imported.module),
            "launches": launches,
            "unfused_ops": sum(1 for s in steps if s.kind == "aten" and not s.operand_view),
            # Of those, views (view, transpose, split, ...): they launch no kernel.
            "unfused_views": sum(1 for s in steps if s.kind == "aten" and s.view and not s.operand_view),
            # Views folded into an extern call's operands (fusion-extern-operands), not counted above.
            "operand_views": sum(1 for s in steps if s.operand_view),
            # What this compile did: passes run and kernels lowered, and how the persistent cache served it.
            "passes_run": passes_run,
            **programs.stats(),
            **lowering.stats(),
        }
        if imported.layers is not None and imported.layers.classes:  # frontend/layers.py
            self.stats["layer_classes"] = len(imported.layers.classes)
            self.stats["layer_calls"] = imported.layers.calls
        # Bytes of intermediates (runtime/liveness.py): the most live at once during a call, and all
        # allocated per call; absent where sizes are only known at call time.
        plan = self.program.plan
        if plan.planned_peak_bytes is not None:
            self.stats["planned_peak_bytes"] = plan.planned_peak_bytes
            self.stats["allocated_bytes"] = self.program.allocated_bytes
        # The cost model (analysis/cost.py): bytes moved and FLOPs per call, the bytes any implementation
        # must move, and the roofline time in ns on an H100 (sm_90); absent where sizes are only known at call time.
        self.cost = program_cost(imported.module)
        if self.cost is not None:
            self.stats["bytes"] = self.cost.total.bytes
            self.stats["bytes_lower_bound"] = self.cost.lower_bound_bytes
            self.stats["flops"] = self.cost.total.flops
            self.stats["roofline_ns"] = round(self.cost.seconds("sm_90") * 1e9)
        # Mutated buffers and inputs: each result is copied into its tensor after the call (`call_program`),
        # a device call outside the kernels (counted apart from launches, and not in `bytes`), unless a launch
        # stored it in that tensor already (the copy then moves nothing).
        returned = list(last_op(func.regions[0].blocks[0]).operands)
        written_back = [returned[i] for i, (kind, _) in enumerate(imported.results)
                        if kind != "output" and i not in self.program.written_back_in_place]
        self.stats["writebacks"] = len(written_back)
        writeback_bytes = sum_sizes(value_bytes(v) for v in written_back)
        if writeback_bytes is not None:
            self.stats["writeback_bytes"] = 2 * writeback_bytes  # each read once and written once

    def explain(self) -> dict[str, list[str]]:
        """Kernel name -> why its neighbours were not fused (compile with explain=True); torch op name -> why attention around it was not fused (always)."""
        reasons: dict[str, list[str]] = {}

        def visit(op):
            if "fusion.explain" in op.attributes and (op.name == "fusion.launch" or op.name.startswith("torch.")):
                # An unfused torch op (attention left unfused) is keyed by its op name.
                name = ir.FlatSymbolRefAttr(op.attributes["kernel"]).value if op.name == "fusion.launch" else op.name
                items = ir.ArrayAttr(op.attributes["fusion.explain"])
                reasons.setdefault(name, []).extend(ir.StringAttr(a).value for a in items)
            return ir.WalkResult.ADVANCE

        self.imported.module.operation.walk(visit)
        return reasons


def input_key(args: tuple, kwargs: dict) -> tuple:
    """What a specialization assumes about a call: the inputs' structure, tensor shapes/dtypes/devices, other values."""
    leaves, spec = pytree.tree_flatten((tuple(args), dict(sorted(kwargs.items()))))
    key = []
    for x in leaves:
        meta = input_meta(x)
        try:
            hash(meta)
        except TypeError:
            meta = (type(x).__name__, repr(x))
        key.append(meta)
    return str(spec), tuple(key)


def describe_mismatch(meta: list, flat: list) -> str:
    """How `flat` (a call's inputs) differs from `meta` (a specialization's)."""
    if len(flat) != len(meta):
        return f"expected {len(meta)} inputs (as in the example), got {len(flat)}"
    for i, (x, m) in enumerate(zip(flat, meta)):
        if isinstance(m, tuple):
            if not isinstance(x, torch.Tensor):
                return f"input {i}: expected a tensor, got {type(x).__name__}"
            got = input_meta(x)
            if got != m:
                return (
                    f"input {i}: compiled for shape {list(m[0])} {m[1]} on {m[2]}, "
                    f"got shape {list(got[0])} {got[1]} on {got[2]}"
                )
        elif x != m:
            return f"input {i}: compiled for the value {m!r}, got {x!r}"
    return "inputs differ from the example's"


@contextlib.contextmanager
def heap_frozen():
    """The objects alive before a compile left out of the garbage collector's full scans during it.

    A full collection scans every object the process tracks (torch and transformers
    imported: ~450k, 0.2 s a scan), and a deeper model's compile allocates enough to
    set off more of them: the collector's cost grew with depth though the garbage is
    the compile's own. `gc.freeze` moves the live objects aside; `gc.unfreeze` puts them
    back afterwards, so nothing is lost, only collected after the compile. Left alone
    where the process froze objects itself (a forking server's), whose freeze this must
    not undo.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class CompiledModule:
    """`model` compiled per input specialization; see the module docstring for the guards."""

    def __init__(
        self,
        model: torch.nn.Module,
        example_inputs: tuple,
        example_kwargs: dict | None = None,
        *,
        pipeline=None,
        explain: bool = False,
        max_specializations: int = DEFAULT_MAX_SPECIALIZATIONS,
        strict: bool = False,
        imported: ImportedProgram | None = None,
        dynamic_shapes=None,
        policy=None,
        cache: bool = True,
        dedup_layers: bool | None = None,
        straight_line: bool | None = None,
        mode: str | None = None,
        aot_targets=(),
    ):
        """`imported`: the example inputs' program, where the caller imported it already."""
        if not isinstance(max_specializations, int) or isinstance(max_specializations, bool) or max_specializations < 1:
            raise ValueError(f"max_specializations must be a positive int, got {max_specializations!r}")
        self.model = model
        self.pipeline = pipeline
        self.explain_unfused = explain
        self.max_specializations = max_specializations
        self.strict = strict
        self.dynamic_shapes = dynamic_shapes
        self.policy = policy
        self.cache = cache
        self.dedup_layers = dedup_enabled(dedup_layers)
        self.straight_line = straight_line_enabled(straight_line)
        self.mode = check_mode(mode)
        self.aot_archs = tuple(parse_target(target) for target in aot_targets)  # ValueError now, not after the export
        if self.aot_archs:
            start_workers(self.aot_archs)  # they import Triton and warm up while this process exports and fuses
        # input_key -> CompiledGraph; None for keys that run eagerly (past the bound or not compilable).
        self.specializations: dict[tuple, CompiledGraph | None] = {}
        self.guard_stats = {"compiles": 0, "hits": 0, "eager_calls": 0}
        kwargs = example_kwargs or {}
        self._current = self._specialize(input_key(example_inputs, kwargs), example_inputs, kwargs, imported)

    # The specialization the last call ran (at first: the example's).
    imported = property(lambda self: self._current.imported)
    program = property(lambda self: self._current.program)
    mlir = property(lambda self: self._current.mlir)
    kernels = property(lambda self: self._current.kernels)
    stats = property(lambda self: self._current.stats)
    cost = property(lambda self: self._current.cost)  # analysis.cost.ProgramCost, or None for `?` sizes
    # runtime.aot.AotCompiles: the kernels' compiles for `aot_targets`, started once compiled (else None).
    aot = property(lambda self: self._current.aot)
    # frontend/layers.LayerReport: the layers compiled once and called per occurrence, and those refused, with why.
    layers = property(lambda self: self._current.imported.layers or LayerReport(disabled="not asked for"))

    def explain(self) -> dict[str, list[str]]:
        """Kernel name -> why its neighbours were not fused (compile with explain=True)."""
        return self._current.explain()

    def program_source(self) -> str:
        """The Python each call of the last specialization runs: `def call(args):`, one line per launch or ATen
        call (runtime/codegen.py), each called layer's function after it."""
        return self._current.program.source

    def _specialize(self, key: tuple, args: tuple, kwargs: dict, imported: ImportedProgram | None = None) -> CompiledGraph:
        progress = Progress()
        try:
            with heap_frozen():
                if imported is None:
                    progress.phase("exporting and importing the model")
                    imported = self._import(args, kwargs)
                with using_policy(self.policy):
                    # Under CUDA graphs results are copied out of the graph's buffers: no result is stored in place.
                    written_back = buffer_write_backs(imported) if self.mode != "reduce-overhead" else None
                    graph = CompiledGraph(imported, self.pipeline, self.explain_unfused, progress, self.cache,
                                          self.straight_line, self.aot_archs, written_back)
        finally:
            progress.done()
        if self.mode == "reduce-overhead":
            graph.runner = GraphedProgram(graph.program, [kind for kind, _ in graph.imported.bindings])
        if graph.aot is not None:  # each kernel's compile for the launches a dry run of the program makes
            arguments = example_arguments(graph.imported, self.model)
            for arch in self.aot_archs:
                specialized, stopped = graph.aot_specialized[arch] = launch_specializations(
                    graph.program, graph.kernels, list(arguments), arch)
                for kernel in graph.kernels.values():
                    graph.aot.submit(kernel, arch, specialized.get(kernel.name))
        self.specializations[key] = graph
        self.guard_stats["compiles"] += 1
        return graph

    def _import(self, args: tuple, kwargs: dict) -> ImportedProgram:
        """The program for these inputs: with `dynamic_shapes`, symbolic where they allow, else static.

        The example's export must honour `dynamic_shapes` (else the error is the user's to see);
        a later specialization (another dtype, a size outside the Dims' ranges) may be static.
        """
        if self.dynamic_shapes is not None:
            try:
                imported = import_module(self.model, tuple(args), kwargs, self.dynamic_shapes)
                why = imported.covers(flatten_inputs(args, kwargs, imported.in_spec))
            except (MlirfuseError, ValueError) as e:
                if not self.specializations:
                    raise
                why = str(e)
            if why is None:
                if self.dedup_layers:
                    imported.layers = LayerReport(disabled="dynamic_shapes: each layer is compiled where it is called")
                return imported
            logger.info("mlirfuse: dynamic shapes do not cover these inputs (%s); compiling them static", why)
        if self.dedup_layers:
            return import_with_layers(self.model, tuple(args), kwargs)
        return import_module(self.model, tuple(args), kwargs)

    def _covering(self, args: tuple, kwargs: dict) -> CompiledGraph | None:
        """A specialization compiled with dynamic shapes whose sizes and ranges cover these inputs."""
        for graph in self.specializations.values():
            if graph is None or graph.imported.covers is None:
                continue
            try:
                flat = flatten_inputs(args, kwargs, graph.imported.in_spec)
            except ValueError:
                continue
            if graph.imported.covers(flat) is None:
                return graph
        return None

    def _lookup(self, args: tuple, kwargs: dict) -> CompiledGraph | None:
        """The specialization for these inputs, compiled if new and allowed; None: run eagerly."""
        key = input_key(args, kwargs)
        if key not in self.specializations and (graph := self._covering(args, kwargs)) is not None:
            self.specializations[key] = graph  # the next call with these shapes finds it at once
        if key in self.specializations:
            graph = self.specializations[key]
            if graph is not None:
                self.guard_stats["hits"] += 1
            return graph
        if self.strict:
            try:
                flat = flatten_inputs(args, kwargs, self.imported.in_spec)
            except ValueError:
                raise InputMismatchError(f"keyword arguments {sorted(kwargs)} differ from the example's") from None
            raise InputMismatchError(describe_mismatch(self.imported.input_meta, flat) + "; recompile for new shapes")
        compiled = len({id(g) for g in self.specializations.values() if g is not None})
        if compiled >= self.max_specializations:
            self._run_eagerly(
                key, f"{compiled} specializations compiled (max_specializations={self.max_specializations})"
            )
            return None
        try:
            return self._specialize(key, args, kwargs)
        except MlirfuseError as e:
            self._run_eagerly(key, f"compiling a specialization for them failed: {e}")
            return None

    def _run_eagerly(self, key: tuple, why: str) -> None:
        self.specializations[key] = None
        message = f"mlirfuse: {type(self.model).__name__} called with inputs no specialization covers; they run eagerly: {why}"
        logger.warning(message)
        warnings.warn(message, RecompileLimitWarning, stacklevel=4)

    def bind(self, imported: ImportedProgram, flat: list) -> list:
        """The program's arguments for flat inputs `flat`: the module's live parameters and buffers bound."""
        return bind_arguments(imported, flat, self.model.get_parameter, self.model.get_buffer)

    def __call__(self, *inputs, **kwargs):
        graph = self._lookup(inputs, kwargs)
        if graph is None:
            self.guard_stats["eager_calls"] += 1
            with torch.no_grad():
                return self.model(*inputs, **kwargs)
        self._current = graph
        flat = flatten_inputs(inputs, kwargs, graph.imported.in_spec)
        return call_program(graph.runner, graph.imported, flat, self.model.get_parameter, self.model.get_buffer)

    @property
    def cuda_graphs(self) -> dict | None:
        """With mode="reduce-overhead", how the last specialization's calls ran (runtime/graphs.py): warm-ups,
        captures, replays, calls run without a graph and why (`not_graphed`); else None."""
        runner = self._current.runner
        return runner.stats if isinstance(runner, GraphedProgram) else None


def bind_arguments(signature, flat: list, parameter, buffer) -> list:
    """The function's arguments for flat user inputs `flat` (see `call_program`)."""
    arguments = []
    for kind, what in signature.bindings:
        if kind == "param":
            arguments.append(parameter(what))
        elif kind == "buffer":
            arguments.append(buffer(what))
        elif kind == "constant":
            arguments.append(what)
        else:
            arguments.append(flat[what])
    return arguments


def buffer_write_backs(signature) -> dict[int, int]:
    """Result position -> argument position, for the mutated buffers `call_program` copies results into.

    Buffers only: a mutated user input may be passed twice or share its storage with another input, where a
    kernel storing the new value in it would change what a later step reads (and CUDA graphs copy inputs).
    """
    arguments = {binding: a for a, binding in enumerate(signature.bindings) if binding[0] == "buffer"}
    return {r: arguments[result] for r, result in enumerate(signature.results)
            if result[0] == "buffer" and result in arguments}


def _unshared(arguments: list, signature, written: tuple[int, ...]) -> None:
    """Replace by a copy each argument a launch stores a result in (`written`) whose storage a user input shares
    (a buffer passed as an input too): the kernel then writes the copy, and the write-back moves the data."""
    inputs = {a.untyped_storage().data_ptr() for (kind, _), a in zip(signature.bindings, arguments)
              if kind == "input" and isinstance(a, torch.Tensor)}
    for a in written:
        if arguments[a].untyped_storage().data_ptr() in inputs:
            arguments[a] = arguments[a].clone()


def call_program(program, signature, flat: list, parameter, buffer):
    """Run `program` on flat user inputs `flat`; the outputs, unflattened.

    `signature` says how the function's arguments and results meet the
    model (an `ImportedProgram`, or a package's record of one: `bindings`,
    `results`, `output_aliases`, `out_spec`); `parameter(name)` and
    `buffer(name)` are the live tensors bound to them. Mutated buffers and
    inputs are written back; an output that is a mutated input or buffer
    (`x.add_(1); return x`) is that tensor, as in eager.
    """
    arguments = bind_arguments(signature, flat, parameter, buffer)
    written = getattr(program, "arguments_written_in_place", ())
    if written:
        _unshared(arguments, signature, written)
    with torch.no_grad():
        results = program.execute(arguments)
        outputs = []
        for (kind, what), value in zip(signature.results, results):
            if kind == "output":
                outputs.append(value)
            elif kind == "buffer":
                buffer(what).copy_(value)
            else:
                flat[what].copy_(value)
    for index, (kind, what) in signature.output_aliases.items():
        outputs[index] = buffer(what) if kind == "buffer" else flat[what]
    return pytree.tree_unflatten(outputs, signature.out_spec)


MATMUL_MODES = ("triton", "aten")


def compile(
    model: torch.nn.Module,
    example_inputs,
    example_kwargs: dict | None = None,
    *,
    pipeline=None,
    explain: bool = False,
    max_specializations: int = DEFAULT_MAX_SPECIALIZATIONS,
    strict: bool = False,
    options: dict | None = None,
    matmul: str = "triton",
    dynamic_shapes=None,
    policy=None,
    cache: bool = True,
    dedup_layers: bool | None = None,
    straight_line: bool | None = None,
    mode: str | None = None,
    aot_targets=(),
) -> CompiledModule:
    """Compile `model` for inputs shaped like `example_inputs` (a tuple) and `example_kwargs`.

    `pipeline`: a pass pipeline string or list of pass names (default: the
    mlirfuse pipeline). `explain`: record on each launch which neighbours
    were not fused and why (`cm.explain()`). `max_specializations`: how many
    input signatures get their own compiled code before new ones run eagerly
    (with a warning). `strict`: raise `InputMismatchError` on inputs unlike
    the example's instead of recompiling. `options`: the mlirfuse pipeline's
    options, spelled as in `--pass-pipeline` (`{"max-args": 64, "horizontal":
    False}` is `mlirfuse-pipeline{max-args=64 horizontal=false}`); with a
    `pipeline`, put them in its text instead. On a terminal, stderr shows
    progress (`mlirfuse.progress`). `matmul`: "triton" (default) makes
    matmuls Triton GEMMs with their prologue and epilogue (fusion-fuse-matmul);
    "aten" leaves them ATen calls. `dynamic_shapes`: as `torch.export.export`
    takes it (`{"x": {0: Dim("batch")}}` or a tuple per input): those sizes
    are `?` in the IR and arguments of the kernels, so inputs differing only
    there (within the Dims' ranges) reuse the compiled code. `policy`: a
    function given each legal merge as a `mlirfuse.passes.policy.Candidate`
    (its kinds, ops, the bytes it saves, what it recomputes), returning None
    to accept or a reason to veto (the reason shows in `cm.explain()`).
    `cache`: look up and store the compiled program and its kernels in the
    persistent cache (`mlirfuse.runtime.cache`; `cm.stats` says how it
    served them); False compiles everything anew.
    `dedup_layers`: compile each distinct repeated layer once and call it per
    occurrence (frontend/layers.py; `cm.layers` says which, and what was
    refused and why); default on unless `MLIRFUSE_NO_LAYER_DEDUP=1`; off with
    `dynamic_shapes`.
    `straight_line`: each call runs the program as generated straight-line
    Python, one line per launch or ATen call with the launches' grids, blocks
    and output shapes computed once (`cm.program_source()` shows it); False
    interprets the program's steps per call (A/B, debugging); default on
    unless `MLIRFUSE_STRAIGHT_LINE=0`.
    `mode`: "default" (or None), or "reduce-overhead": on a CUDA device each
    specialization's calls replay a CUDA graph captured at its second call
    (runtime/graphs.py: the inputs copied in, the results copied out; what is
    never graphed and why is in `cm.cuda_graphs`).
    `aot_targets`: GPU targets ("sm_80", "sm_90") to compile every kernel
    for ahead of time, in the background: the worker pool starts now, so
    its start-up overlaps the export, and once compiled each kernel is
    handed to it for the launches a dry run of the program makes
    (runtime/dryrun.py); `mlirfuse.save` with those targets collects the
    cubins (what `mlirfuse compile` does).
    """
    if matmul not in MATMUL_MODES:
        raise ValueError(f"matmul must be one of {', '.join(map(repr, MATMUL_MODES))}, got {matmul!r}")
    # Parsed once, here: a bad pass or option fails now, not after the export.
    parsed = None
    if options:
        if pipeline is not None:
            raise PipelineError("options= applies to the default pipeline; with pipeline=, write them in its text")
        parsed = our_pipeline(MLIRFUSE_PIPELINE, options)
    elif pipeline is not None:
        parsed = as_pipeline(pipeline) if pipeline else None  # "" or []: the default pipeline
    if matmul == "aten":
        if options or pipeline is not None:
            raise ValueError("matmul='aten' selects the default pipeline without fusion-fuse-matmul; give no pipeline or options")
        parsed = aten_matmul_pipeline()
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    if policy is not None and not callable(policy):
        raise TypeError(f"policy must be a function of a mlirfuse.passes.policy.Candidate, got {policy!r}")
    return CompiledModule(
        model, tuple(example_inputs), example_kwargs,
        pipeline=parsed, explain=explain, max_specializations=max_specializations, strict=strict,
        dynamic_shapes=dynamic_shapes, policy=policy, cache=cache, dedup_layers=dedup_layers,
        straight_line=straight_line, mode=check_mode(mode), aot_targets=tuple(aot_targets),
    )
