"""nn.Module + example inputs -> `torch` dialect, with weights left out of the IR.

`torch.export` traces the module; `run_decompositions` makes the graph
functional and decomposes the composite ops Inductor decomposes that
mlirfuse does not handle whole (`frontend/decompositions.py`; nothing at all
for graphs without one). torch-mlir's default table is not run: it costs
seconds on big graphs and breaks some attention exports; normalizations we
decompose in MLIR. The FX importer then imports the graph
*statelessly*: every placeholder - parameter, buffer, lifted constant, user
input - becomes a function argument. `bindings` says what each argument is
bound to at call time: the module's live parameters and buffers are looked
up on every call, so a weight update is seen by the next call and a 1 GB
model does not make 1 GB of IR. Non-persistent buffers (rotary `inv_freq`,
`position_ids`) are registered buffers of the module and bind the same way.
"""

from __future__ import annotations

import operator
import warnings
from dataclasses import dataclass, field

import sympy
import torch
from torch.export import ExportedProgram
from torch.export._tree_utils import reorder_kwargs
from torch.export.graph_signature import InputKind, OutputKind
from torch.utils import _pytree as pytree

from mlirfuse.dialect import make_context
from mlirfuse.errors import UnsupportedModelError
from mlirfuse.frontend.decompositions import canonicalize, table_for
from mlirfuse.frontend.local_decompositions import decompose_locally
from mlirfuse.ir import ir
from mlirfuse.ops.dtypes import TABLE


@dataclass
class ImportedProgram:
    """A torch-dialect module and how to feed and read its `forward` function."""

    module: ir.Module
    context: ir.Context
    # Per function argument: ("param", name) | ("buffer", name) | ("constant", tensor) | ("input", index)
    bindings: list[tuple[str, object]]
    # Per function result: ("output", index) | ("buffer", name) | ("input", index) (written back)
    results: list[tuple[str, object]]
    out_spec: object
    # How `(args, kwargs)` flatten: the order of keyword arguments among the user inputs.
    in_spec: object = None
    # Per flat user input: (shape, dtype, device) for tensors, the value itself otherwise.
    input_meta: list = field(default_factory=list)
    # User output index -> ("buffer", name) | ("input", index): the output *is* that mutated tensor
    # (`x.add_(1); return x`), so the caller gets the tensor itself, as from eager.
    output_aliases: dict = field(default_factory=dict)
    # Exported with dynamic shapes: flat user inputs -> None if this program covers them, else why not.
    covers: object = None
    # Exported with dynamic shapes: per flat user input, its dims (`symbolic_dims`); None for other values.
    input_dims: list | None = None
    # A backend graph's results that are inputs handed back untouched (process groups and other script
    # objects, which the function does not take): result position -> input index.
    passthrough: dict = field(default_factory=dict)
    # Layer deduplication (frontend/layers.py): the layers compiled once and called per occurrence, and the refusals.
    layers: object = None


def trace(
    model: torch.nn.Module, example_inputs: tuple, example_kwargs: dict | None = None, dynamic_shapes=None
) -> ExportedProgram:
    """torch.export's graph of `model` (training IR: not yet functional, composite ops whole)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.export.export(
                model, tuple(example_inputs), kwargs=example_kwargs or None, strict=False, dynamic_shapes=dynamic_shapes
            )
    except Exception as e:
        raise UnsupportedModelError(f"torch.export could not trace {type(model).__name__}: {e}") from e


def decompose(program: ExportedProgram, table: dict, what: str = "the program") -> ExportedProgram:
    """`program` made functional, the ops of `table` decomposed."""
    # The trace asserts the dtypes its fake tensors had; where an op's meta function types a result other than
    # eager does (threshold_backward of a bool or integer gradient and a float input: the gradient's dtype, where
    # eager promotes; fuzz seed 2780425), the decomposition's correct dtype must not fail that assertion.
    _erase_metadata_asserts(program.graph_module.graph)
    program.graph_module.recompile()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = program.run_decompositions(table)
    except Exception as e:
        raise UnsupportedModelError(f"torch.export could not trace {what}: {e}") from e
    # Export checks dtypes after casts with _assert_tensor_metadata; the IR's
    # types already say the same, and the op computes nothing.
    _erase_metadata_asserts(program.graph_module.graph)
    canonicalize(program.graph_module.graph)
    return program


def _erase_metadata_asserts(graph: torch.fx.Graph) -> None:
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is torch.ops.aten._assert_tensor_metadata.default:
            graph.erase_node(node)


def functional(program: ExportedProgram, what: str = "the program") -> ExportedProgram:
    """A traced program made functional, the composite ops of `table_for` decomposed.

    Where it is functional already and needs no table, its composite ops
    are decomposed where they stand (`decompose_locally`), without
    re-tracing the whole graph.
    """
    table = table_for(program.graph_module.graph)
    if not table:
        _erase_metadata_asserts(program.graph_module.graph)
        if decompose_locally(program):
            canonicalize(program.graph_module.graph)
            return program
    result = decompose(program, table, what)
    if not table:
        # Ops only functionalization shows (training-mode batch_norm becomes
        # _native_batch_norm_legit_functional): a second pass, for those graphs only.
        table = table_for(result.graph_module.graph)
        if table:
            result = decompose(result, table, what)
    return result


def export(model: torch.nn.Module, example_inputs: tuple, example_kwargs: dict | None = None) -> ExportedProgram:
    """`model` traced and made functional, the composite ops of `table_for` decomposed."""
    return functional(trace(model, example_inputs, example_kwargs), type(model).__name__)


def _import_graph(
    graph: torch.fx.Graph, func_name: str, what: str, into: ir.Module | None = None, private: bool = False
) -> tuple[ir.Module, ir.Context]:
    """`graph` as a func.func of a new module (or of `into`); every placeholder becomes an argument."""
    from torch_mlir.extras.fx_importer import FxImporter

    _install_hop_handlers()
    importer = FxImporter(context=make_context()) if into is None else FxImporter(module=into)
    try:
        importer.import_stateless_graph(graph, func_name=func_name, func_visibility="private" if private else None)
    except Exception as e:
        node = _failing_node(e.__traceback__)
        where = f" at op '{node.target}' (node {node.name})" if node is not None and node.op == "call_function" else ""
        raise UnsupportedModelError(f"torch-mlir could not import the {what}{where}: {str(e)[:500]}") from e
    return importer.module, importer.module.context


def _failing_node(tb) -> torch.fx.Node | None:
    """The FX node the importer was working on when it raised: the innermost frame's `node` local."""
    node = None
    while tb is not None:
        candidate = tb.tb_frame.f_locals.get("node")
        if isinstance(candidate, torch.fx.Node):
            node = candidate
        tb = tb.tb_next
    return node


def program_bindings(program: ExportedProgram) -> list[tuple[str, object]]:
    """Per argument of the exported function: ("param", name) | ("buffer", name) | ("constant", tensor) | ("input", index)."""
    bindings = []
    user_index = 0
    for spec in program.graph_signature.input_specs:
        if spec.kind == InputKind.PARAMETER:
            bindings.append(("param", spec.target))
        elif spec.kind == InputKind.BUFFER:
            bindings.append(("buffer", spec.target))
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            bindings.append(("constant", program.constants[spec.target]))
        elif spec.kind == InputKind.USER_INPUT:
            bindings.append(("input", user_index))
            user_index += 1
        else:
            raise UnsupportedModelError(f"exported input '{spec.arg.name}' of kind {spec.kind.name} is not supported")
    return bindings


def import_program(
    program: ExportedProgram, func_name: str = "forward", into: ir.Module | None = None, private: bool = False
) -> ImportedProgram:
    """Import an exported program's graph; placeholders become arguments.

    `into`: add the function to that module (beside the functions imported before), `private` if asked.
    """
    bindings = program_bindings(program)
    module, context = _import_graph(program.graph_module.graph, func_name, "exported graph", into, private)
    with context, ir.Location.unknown():
        inline_lifted_constants(_function(module, func_name), bindings)

    user_inputs = [spec.arg.name for spec in program.graph_signature.input_specs if spec.kind == InputKind.USER_INPUT]
    results = []
    output_nodes = []  # per user output, the graph value it returns
    mutated = {}  # graph value -> the buffer or input it is written back to
    for spec in program.graph_signature.output_specs:
        name = getattr(spec.arg, "name", None)
        if spec.kind == OutputKind.USER_OUTPUT:
            results.append(("output", len(output_nodes)))
            output_nodes.append(name)
        elif spec.kind == OutputKind.BUFFER_MUTATION:
            results.append(("buffer", spec.target))
            mutated[name] = results[-1]
        elif spec.kind == OutputKind.USER_INPUT_MUTATION:
            results.append(("input", user_inputs.index(spec.target)))
            mutated[name] = results[-1]
        else:
            raise UnsupportedModelError(f"exported output of kind {spec.kind.name} is not supported")
    aliases = {i: mutated[name] for i, name in enumerate(output_nodes) if name is not None and name in mutated}
    return ImportedProgram(
        module, context, bindings, results, program.call_spec.out_spec, program.call_spec.in_spec,
        output_aliases=aliases,
    )


# Lifted constants inlined as literals: integer tensors of at most this many elements (index tensors).
INLINED_CONSTANT_MAX_ELEMENTS = 1
# Signed integer dtypes only (dtypes.py's table, by torch dtype -> its element type asm).
_LITERAL_ELEMENTS = {getattr(torch, d.name): d.asm for d in TABLE if d.kind == "int" and d.asm.startswith("si")}


def _function(module: ir.Module, name: str):
    return next(op for op in module.body.operations if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name)


def inline_lifted_constants(func, bindings: list[tuple[str, object]]) -> None:
    """Read each small integer tensor constant the program copies before use from a `torch.vtensor.literal`.

    torch.export lifts a tensor the model's code makes (`qkv[..., [-2]]`'s
    index) to an argument read through `lift_fresh_copy` (a clone): the
    program takes a fresh copy every call, as eager makes the tensor anew,
    so its value is fixed. As a literal, fusion-fold-constant-indices sees
    it (an index by it becomes a view). The argument stays, bound, unread.
    A constant read otherwise (a plain tensor attribute of the module,
    which a user may change between calls) stays an argument.
    """
    block = func.regions[0].blocks[0]
    for arg, (kind, tensor) in zip(block.arguments, bindings):
        if kind != "constant" or tensor.dtype not in _LITERAL_ELEMENTS or tensor.numel() > INLINED_CONSTANT_MAX_ELEMENTS:
            continue
        uses = [use.owner for use in arg.uses]
        if not uses or any(owner.operation.name != "torch.aten.clone" for owner in uses):
            continue
        values = tensor.flatten().tolist()
        dense = f"{values[0]}" if values else "[]"
        shape = "x".join(map(str, tensor.shape))
        attr = ir.Attribute.parse(f"dense<{dense}> : tensor<{shape + 'x' if shape else ''}{_LITERAL_ELEMENTS[tensor.dtype]}>")
        literal = ir.Operation.create(
            "torch.vtensor.literal", results=[arg.type], attributes={"value": attr}, ip=ir.InsertionPoint.at_block_begin(block)
        )
        for owner in uses:
            owner.operation.operands[0] = literal.results[0]


def import_graph_module(gm: torch.fx.GraphModule, func_name: str = "forward") -> ImportedProgram:
    """Import an FX graph as Dynamo or AOTAutograd hands it to a backend (nodes carry `val` metadata).

    The placeholders are the call's arguments, in order; tensor constants the
    graph reads with get_attr follow them, bound to the module's tensors (the
    importer would bake them into the IR). The results are the output node's
    values, in order (returned as a flat list). Each distinct subgraph the
    graph invokes (`invoke_subgraph`, from `torch.compiler.nested_compile_region`)
    is imported once, as a private function each invocation calls (`func.call`).
    """
    graph, constants = _lift_constants(gm)
    kept, passthrough = _drop_script_objects(graph)
    canonicalize(graph)
    targets = invoked_subgraphs(gm)
    _SUBGRAPH_FUNCTIONS.clear()
    _SUBGRAPH_FUNCTIONS.update({target: f"{func_name}_{target}" for target in targets})
    try:
        module, context = _import_graph(graph, func_name, "FX graph")
        for target in targets:
            sub = operator.attrgetter(target)(gm)
            sub_graph, sub_constants = _lift_constants(sub)
            if sub_constants or invoked_subgraphs(sub):
                raise UnsupportedModelError(f"subgraph {target} holds tensor constants or subgraphs of its own")
            canonicalize(sub_graph)
            _import_graph(sub_graph, _SUBGRAPH_FUNCTIONS[target], f"subgraph {target}", into=module, private=True)
    finally:
        _SUBGRAPH_FUNCTIONS.clear()
    output = next(n for n in graph.nodes if n.op == "output").args[0]
    count = len(output) if isinstance(output, (tuple, list)) else 1
    bindings = [("input", i) for i in kept] + [("constant", t) for t in constants]
    return ImportedProgram(
        module, context, bindings, [("output", i) for i in range(count)], None, passthrough=passthrough
    )


# While a graph with subgraph calls imports: each invoked subgraph's get_attr target -> its function's name.
_SUBGRAPH_FUNCTIONS: dict[str, str] = {}


def invoked_subgraphs(gm: torch.fx.GraphModule) -> list[str]:
    """The get_attr targets of the subgraphs `gm` invokes (`invoke_subgraph`), each once, in order."""
    targets = []
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.higher_order.invoke_subgraph:
            sub = node.args[0]
            if sub.op == "get_attr" and sub.target not in targets:
                targets.append(sub.target)
    return targets


def _import_hop_invoke_subgraph(self, loc, node: torch.fx.Node, hop) -> None:
    """torch-mlir's FX importer has no handler for `invoke_subgraph`: a `func.call` of the subgraph's function,
    one result per value the subgraph returns (the getitem nodes read them)."""
    from torch_mlir.ir import FlatSymbolRefAttr, Operation

    sub, _identifier, *operands = node.args
    if sub.op != "get_attr" or sub.target not in _SUBGRAPH_FUNCTIONS:
        raise NotImplementedError(f"invoke_subgraph of {sub} (not a subgraph this graph holds)")
    values = [self._import_argument(loc, a) for a in operands]
    types = [self._cc.value_info_to_type(v) for v in node.meta["val"]]
    call = Operation.create(
        "func.call", attributes={"callee": FlatSymbolRefAttr.get(_SUBGRAPH_FUNCTIONS[sub.target])},
        results=types, operands=values, loc=loc,
    )
    self._multi_result_nodes.add(node)
    for i, result in enumerate(call.results):
        self.bind_node_value(node, result, i)


def _install_hop_handlers() -> None:
    from torch_mlir.extras.fx_importer import GraphNodeImporter

    if not hasattr(GraphNodeImporter, "_import_hop_invoke_subgraph"):
        GraphNodeImporter._import_hop_invoke_subgraph = _import_hop_invoke_subgraph


def _is_script_object(value) -> bool:
    """A process group or other TorchBind object (faked while tracing) in a graph Dynamo hands over."""
    from torch._library.fake_class_registry import FakeScriptObject

    return isinstance(value, (FakeScriptObject, torch.ScriptObject))


def _drop_script_objects(graph: torch.fx.Graph) -> tuple[list[int], dict[int, int]]:
    """Remove the placeholders holding script objects (a tensor-parallel graph's process groups) from `graph`.

    Such an input is no tensor torch-mlir can type; the functional collectives name their group by a
    string, so the object is only ever handed back (AOTAutograd saves it for the backward). Returns the
    indices of the placeholders kept, and per result that was such an input, its new position -> the
    input's index. An object an op reads is refused, naming the op.
    """
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    output = next(n for n in graph.nodes if n.op == "output")
    dropped = {}
    for i, node in enumerate(placeholders):
        if not _is_script_object(node.meta.get("val")):
            continue
        readers = [u for u in node.users if u is not output]
        if readers:
            raise UnsupportedModelError(
                f"graph input '{node.name}' is a {type(node.meta['val']).__name__} (a process group or other "
                f"script object) read by '{readers[0].target}': mlirfuse hands such objects through, it cannot pass them to ops"
            )
        dropped[node] = i
    if not dropped:
        return list(range(len(placeholders))), {}
    results = output.args[0]
    single = not isinstance(results, (tuple, list))
    results = [results] if single else list(results)
    passthrough, kept_results = {}, []
    for k, r in enumerate(results):
        if r in dropped:
            passthrough[k] = dropped[r]
        else:
            kept_results.append(r)
    output.args = (kept_results[0] if single and kept_results else tuple(kept_results),)
    for node in dropped:
        graph.erase_node(node)
    return [i for i, n in enumerate(placeholders) if n not in dropped], passthrough


def _lift_constants(gm: torch.fx.GraphModule) -> tuple[torch.fx.Graph, list[torch.Tensor]]:
    """A copy of `gm`'s graph: each tensor get_attr becomes a trailing placeholder, each detach its operand.

    detach is the identity on values (AOTAutograd leaves it on saved
    activations); left in, it would split fusion groups.
    """
    from torch.fx.passes.shape_prop import _extract_tensor_metadata

    graph = torch.fx.Graph()
    copies: dict = {}
    graph.output(graph.graph_copy(gm.graph, copies))
    first = next((copies[n] for n in gm.graph.nodes if n.op != "placeholder"), None)
    constants = []
    for node in gm.graph.nodes:
        copy = copies.get(node)
        if node.op == "call_function" and node.target is torch.ops.aten.detach.default:
            copies[node] = copies[node.args[0]]  # what a detach of this detach reads
            copy.replace_all_uses_with(copies[node])
            graph.erase_node(copy)
            continue
        value = operator.attrgetter(node.target)(gm) if node.op == "get_attr" else None
        if not isinstance(value, torch.Tensor):
            continue
        with graph.inserting_before(first):
            placeholder = graph.placeholder(f"constant_{len(constants)}")
        placeholder.meta = dict(node.meta)
        if not isinstance(node.meta.get("val"), torch.Tensor):
            placeholder.meta["tensor_meta"] = _extract_tensor_metadata(value)
        copy.replace_all_uses_with(placeholder)
        graph.erase_node(copy)
        constants.append(value)
    return graph, constants


def input_meta(x):
    """What a specialization guards of one flat input: a tensor's (shape, dtype, device), any other value itself."""
    return (tuple(x.shape), x.dtype, x.device) if isinstance(x, torch.Tensor) else x


def flatten_inputs(args: tuple, kwargs: dict, in_spec) -> list:
    """The user inputs in the exported function's order: keyword arguments in the example's order, not the caller's."""
    if in_spec is not None:
        kwargs = reorder_kwargs(kwargs, in_spec)
    return pytree.tree_flatten((tuple(args), kwargs))[0]


def import_module(
    model: torch.nn.Module, example_inputs: tuple, example_kwargs: dict | None = None, dynamic_shapes=None
) -> ImportedProgram:
    """Export `model` on `example_inputs` (and keyword arguments) and import it into the torch dialect.

    `dynamic_shapes` (torch.export's form, `torch.export.Dim`s): those sizes
    are `?` in the IR, and `covers` says which later inputs the program serves.
    """
    if not isinstance(model, torch.nn.Module):
        raise UnsupportedModelError(f"expected a torch.nn.Module, got {type(model).__name__}")
    program = trace(model, example_inputs, example_kwargs, dynamic_shapes)
    return import_traced(program, type(model).__name__, example_inputs, example_kwargs, dynamic_shapes)


def import_traced(
    program: ExportedProgram, what: str, example_inputs: tuple, example_kwargs: dict | None = None, dynamic_shapes=None
) -> ImportedProgram:
    """`import_module` after its trace: `program` (traced on these inputs) made functional and imported."""
    try:
        imported = import_program(functional(program, what))
    except UnsupportedModelError:
        # A decomposition torch.export or torch-mlir cannot take (one returning NotImplemented for these
        # arguments, an effectful check op): the ops stay whole. Without one, this raises the error again.
        imported = import_program(decompose(program, {}, what))
    flat = flatten_inputs(example_inputs, example_kwargs or {}, imported.in_spec)
    imported.input_meta = [input_meta(x) for x in flat]
    if dynamic_shapes is not None:
        imported.covers = _covers(program, imported.input_meta)
        imported.input_dims = symbolic_dims(program)
    return imported


def symbolic_dims(program: ExportedProgram) -> list:
    """Per user input of `program`: None for a non-tensor, else per dim an int, or [expression, min, max] for a
    symbolic size (the expression as text, `s0` or `2*s0`; its range from the export's range constraints, None
    where unbounded or an expression's)."""
    placeholders = {n.name: n for n in program.graph_module.graph.nodes if n.op == "placeholder"}
    dims = []
    for spec in program.graph_signature.input_specs:
        if spec.kind != InputKind.USER_INPUT:
            continue
        value = placeholders[spec.arg.name].meta.get("val")
        if not isinstance(value, torch.Tensor):
            dims.append(None)
            continue
        shape = []
        for d in value.shape:
            if not isinstance(d, torch.SymInt):
                shape.append(int(d))
                continue
            expr = d.node.expr
            bounds = program.range_constraints.get(expr)
            lower = upper = None
            if bounds is not None:
                lower, upper = (int(b) if isinstance(b, sympy.Integer) else None for b in (bounds.lower, bounds.upper))
            shape.append([str(expr), lower, upper])
        dims.append(shape)
    return dims


def _covers(program: ExportedProgram, example_meta: list):
    """A check of later flat inputs against `program`'s symbolic input shapes and ranges, dtypes and devices."""
    from torch._export.utils import _check_input_constraints_for_graph

    placeholders = {n.name: n for n in program.graph_module.graph.nodes if n.op == "placeholder"}
    users = [placeholders[s.arg.name] for s in program.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]

    def covers(flat: list) -> str | None:
        if len(flat) != len(example_meta):
            return f"expected {len(example_meta)} inputs, got {len(flat)}"
        for i, (x, meta) in enumerate(zip(flat, example_meta)):
            if isinstance(x, torch.Tensor) and isinstance(meta, tuple) and (x.dtype, x.device) != meta[1:]:
                return f"input {i}: compiled for {meta[1]} on {meta[2]}, got {x.dtype} on {x.device}"
        try:  # the shapes and ranges: the check torch.export's own module runs on its inputs
            _check_input_constraints_for_graph(users, [((), x) for x in flat], program.range_constraints)
        except Exception as e:
            return str(e)
        return None

    return covers
