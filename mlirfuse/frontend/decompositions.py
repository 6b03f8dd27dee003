"""Which composite ops the frontend decomposes before import, as Inductor does.

Inductor decomposes most composite ops (`linalg_vector_norm`, `divide`,
`round.decimals`, loss functions, `*_copy` ops, ...) into the pointwise ops,
reductions and indexing ops its lowerings turn into kernels; its table is
`torch._inductor.decomposition.select_decomp_table()`. mlirfuse applies the
same table, minus the ops it handles whole (`native_ops()`: the ops of its
op families, `mlirfuse.ops.registry`, from elementwise ops to attention and
views; the normalizations `fusion-decompose` expands itself; convolutions, `ops/conv.py`),
so that what Inductor fuses is fused here too.

Cost: torch.export's `run_decompositions` re-traces the graph whatever the
table holds, and the importer runs it once anyway (with `{}` to make the
graph functional). `table_for(graph)` returns `{}` unless the exported graph
calls an op that a decomposition would replace, so graphs without one (most
models: linear, softmax, layer_norm, gelu, sdpa ...) pay nothing, not even
the import of Inductor's table; graphs with one get the whole filtered table
in that same call, so ops that decompose into further composite ops
(`linalg_norm` -> `linalg_vector_norm` -> `pow`/`sum`) come out fully
decomposed from one re-trace.
"""

from __future__ import annotations

import functools

import torch

from mlirfuse.ops.registry import NATIVE_OPS
from mlirfuse.passes.decompose import OPERATOR_NAMES
from mlirfuse.passes.decompose import PATTERNS as EXPANDED
from mlirfuse.passes.legality_cat import CAT


@functools.cache
def native_ops() -> frozenset[str]:
    """torch-mlir names of the ops mlirfuse fuses, expands itself or templates: never decomposed by the frontend."""
    return frozenset({*NATIVE_OPS, CAT, *(name for name, _ in EXPANDED), *OPERATOR_NAMES})


def torch_mlir_name(op: torch._ops.OpOverload) -> str:
    """aten.add.Tensor -> torch.aten.add.Tensor; aten.relu.default -> torch.aten.relu (torch-mlir's spelling)."""
    namespace, name = op._schema.name.split("::")
    overload = op._overloadname
    return f"torch.{namespace}.{name}" + ("" if overload == "default" else f".{overload}")


def _is_view(op: torch._ops.OpOverload) -> bool:
    returns = op._schema.returns
    return bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in returns)


def _functional(op: torch._ops.OpOverload) -> torch._ops.OpOverload:
    """`add_.Tensor` -> `add.Tensor` (what functionalization turns an in-place op into); other ops unchanged."""
    if not op._schema.is_mutable:
        return op
    packet = getattr(getattr(torch.ops, op.namespace), _base_name(op).rstrip("_"), None)
    return getattr(packet, op._overloadname, op) if packet is not None else op


def _decomposable(op: torch._ops.OpOverload) -> bool:
    """Whether some decomposition (a registered one or the op's CompositeImplicitAutograd kernel) may replace `op`.

    Cheap, and true of every op of Inductor's table, so a graph without such an op
    never imports the table.
    """
    if not _wanted(op):
        return False
    from torch._decomp import decomposition_table

    return op in decomposition_table or op in _OWN or torch._C._dispatch_has_kernel_for_dispatch_key(
        op.name(), torch._C.DispatchKey.CompositeImplicitAutograd
    )


def _wanted(op) -> bool:
    """An aten op to decompose: not kept whole, not a view, not drawing random numbers (eager's stream stays)."""
    return (
        isinstance(op, torch._ops.OpOverload) and op.namespace == "aten" and not _is_view(op)
        and torch.Tag.nondeterministic_seeded not in op.tags and torch_mlir_name(op) not in native_ops()
    )


# Decompositions into prims ops, no kernel here either: the op stays whole (an ATen call with its views folded in).
_INTO_PRIMS = ("flip",)

# Inductor decompositions into Inductor's own prims (low-memory max pooling, fma): torch._decomp's
# decomposition where it has one, else the op stays whole.
_INDUCTOR_PRIMS = ("max_pool2d_with_indices", "max_pool3d_with_indices", "_softmax_backward_data")

# Ops Inductor lowers directly (so its table leaves them out) and mlirfuse has no rule for, whose
# torch._decomp decompositions are ops it fuses: any/all as a sum compared with 0, glu as two slices,
# repeat as an expand copied, the unsafe index ops as index.Tensor / index_put.
_LOWERED_BY_INDUCTOR = (
    "any", "all", "glu", "repeat", "_unsafe_index", "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate",
    "_unsafe_index_put",
)


def _copy(self: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """aten.copy (functionalized `copy_`) as Inductor's lowering computes it: `src` moved, cast, expanded, copied."""
    if src.device != self.device:
        src = torch.ops.aten._to_copy.default(src, device=self.device)
    if src.dtype != self.dtype:
        src = torch.ops.aten._to_copy.default(src, dtype=self.dtype)
    if src.shape != self.shape:
        src = torch.ops.aten.expand.default(src, self.shape)
    return torch.ops.aten.clone.default(src)


# Decompositions of ours, for ops neither table decomposes.
def _threshold_backward(grad_output: torch.Tensor, self: torch.Tensor, threshold) -> torch.Tensor:
    """threshold_backward typed as eager types it, in the promoted dtype of both tensors.

    torch._decomp's where(self <= threshold, 0, grad_output) keeps grad_output's dtype: an integer
    gradient of a float input gave int64 where eager gives float32.
    """
    dtype = torch.result_type(grad_output, self)
    return torch.where(self <= threshold, 0, grad_output).to(dtype)


_OWN = {torch.ops.aten.copy.default: _copy, torch.ops.aten.threshold_backward.default: _threshold_backward}


@functools.cache
def inductor_table() -> dict:
    """Inductor's decompositions of the aten ops mlirfuse does not handle whole (views left alone), and a few more."""
    from torch._decomp import decomposition_table
    from torch._inductor.decomposition import select_decomp_table

    table = {op: fn for op, fn in select_decomp_table().items() if _wanted(op) and _base_name(op) not in _INTO_PRIMS}
    for op in [op for op in table if _base_name(op) in _INDUCTOR_PRIMS]:
        if op in decomposition_table:
            table[op] = decomposition_table[op]
        else:
            del table[op]
    for op, fn in decomposition_table.items():
        if _wanted(op) and _base_name(op) in _LOWERED_BY_INDUCTOR:
            table[op] = fn
    table.update(_OWN)
    return table


def _base_name(op) -> str:
    return op._schema.name.split("::")[-1]


def table_for(graph: torch.fx.Graph) -> dict:
    """The decomposition table for `run_decompositions` on an exported program with this graph: `{}` unless needed."""
    ops = {
        _functional(node.target)
        for node in graph.nodes
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
    }
    if not any(_decomposable(op) for op in ops):
        return {}
    table = inductor_table()
    return table if any(op in table for op in ops) else {}


def canonicalize(graph: torch.fx.Graph) -> None:
    """Spell arguments the way the fused rules take them (what Inductor's lowerings see through).

    - `_to_copy(x, device=d)` with x already on d (or `layout=strided` of a
      strided x, `pin_memory=False`): the arguments are dropped, leaving a
      cast. Inductor's `_to_copy` decomposition moves a tensor only when its
      device differs. Guards key every specialization by its input devices,
      so the devices the trace saw are the devices it runs on.
    - A bool fill value or compared scalar (`ne.Scalar(x, False)` from the
      `any` decomposition, `full(..., True, dtype=bool)`) becomes 0 or 1: the
      FX importer spells a bool Scalar as `aten.Int.bool`, which is no
      constant to the rules. Only where the value alone counts: comparisons,
      and fills whose dtype is given.
    - `squeeze.dims` (batch norm's decompositions use it), which torch-mlir
      has no op for, becomes the `squeeze.dim` chain it is, highest dim first.
    """
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        if node.target is torch.ops.aten._to_copy.default and node.args:
            source = getattr(node.args[0], "meta", {}).get("val")
            if isinstance(source, torch.Tensor):
                same = {"device": source.device, "layout": source.layout, "pin_memory": False}
                node.kwargs = {k: v for k, v in node.kwargs.items() if not (k in same and v == same[k])}
        elif node.target is torch.ops.aten.squeeze.dims and len(node.args) == 2 and not node.kwargs:
            _squeeze_one_by_one(graph, node)
        elif node.target in _BOOL_AS_INT:
            position = _BOOL_AS_INT[node.target]
            typed = node.target is not torch.ops.aten.full.default or node.kwargs.get("dtype") is not None
            if typed and len(node.args) > position and isinstance(node.args[position], bool):
                args = list(node.args)
                args[position] = int(args[position])
                node.args = tuple(args)


def _squeeze_one_by_one(graph: torch.fx.Graph, node: torch.fx.Node) -> None:
    source, dims = node.args
    rank = getattr(source, "meta", {}).get("val")
    if not isinstance(rank, torch.Tensor) or not all(isinstance(d, int) for d in dims):
        return
    rank = max(rank.dim(), 1)
    value = source
    with graph.inserting_before(node):
        for d in sorted({d % rank for d in dims}, reverse=True):
            value = graph.call_function(torch.ops.aten.squeeze.dim, (value, d))
            value.meta["val"] = torch.ops.aten.squeeze.dim(value.args[0].meta["val"], d)
    value.meta = {**node.meta, "val": value.meta["val"]}
    node.replace_all_uses_with(value)
    graph.erase_node(node)


_BOOL_AS_INT = {
    **{getattr(torch.ops.aten, name).Scalar: 1 for name in ("eq", "ne", "lt", "le", "gt", "ge")},
    torch.ops.aten.fill.Scalar: 1,
    torch.ops.aten.full.default: 1,  # with a dtype (else a bool value makes the result bool)
    torch.ops.aten.full_like.default: 1,  # dtype: the input's, or given
    torch.ops.aten.new_full.default: 2,  # dtype: the input's, or given
}
