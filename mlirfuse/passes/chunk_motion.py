"""fusion-chunk-motion: move chunk/split above the elementwise work that feeds it.

The LSTM cell computes `gates = x @ W_ih.T + h @ W_hh.T + b`, then
`gates.chunk(4, 1)` and elementwise math on each chunk. With the split in the
middle, the adds and the cell math are two kernels joined by a [1, 4h]
tensor. This pass

1. turns `ListUnpack(split.Tensor(x, size, dim))` (and split_with_sizes)
   into one `slice.Tensor(x, dim, start, end)` per piece, `unbind` into
   one `select.int` per piece, and
2. pushes a slice through the elementwise op it reads when every user of
   that op is a slice: `slice(a + b) = slice(a) + slice(b)`, slicing each
   operand along the same dim (or not at all where it broadcasts);
3. (`matmul-slices`, on by default) pushes column slices through a GEMM
   whose result is only ever sliced along its last dim:
   `slice(A @ B) = A @ slice(B)`, B (and a bias) sliced along N. Each
   piece is a GEMM over the same A, which fusion-fuse-matmul runs as one
   grouped GEMM whose epilogue is the math on the pieces.

The slices end up on the matmul results, where a fused group reads them by
index arithmetic (matmul-slices=false: each step is one kernel plus the two
matmuls), or on the weights, read by strides: with the Triton GEMMs an
unrolled LSTM step is one kernel.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.ir import (
    NO_CONSTANT,
    TorchBuilder,
    constant_int_list,
    constant_value,
    defining_op,
    ir,
    static_tensor_types,
    tensor_type,
)
from mlirfuse.ops.elementwise import RULES, fusible
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, gemm
from mlirfuse.ops.reductions import REDUCTIONS
from mlirfuse.ops.views import RESHAPES, view_args
from mlirfuse.passes.base import ModulePass, apply_patterns, pattern
from mlirfuse.passes.options import option


def slice_args(op) -> tuple[int, int, int, int] | None:
    """(dim, start, end, step) of a `slice.Tensor` with constant, normalized arguments."""
    x = tensor_type(op.operands[0].type)
    values = [constant_value(v) for v in op.operands[1:]]
    if x is None or not x.is_static or any(v is NO_CONSTANT for v in values):
        return None
    dim, start, end, step = values
    if not all(isinstance(v, int) or v is None for v in values) or dim is None:
        return None
    dim %= len(x.shape)
    size = x.shape[dim]
    start = 0 if start is None else (start + size if start < 0 else start)
    end = size if end is None else (end + size if end < 0 else end)
    start, end = max(0, min(start, size)), max(0, min(end, size))
    return dim, start, end, step or 1


def _build_slice(b: TorchBuilder, x: ir.Value, dim: int, start: int, end: int, step: int, pool: dict) -> ir.Value:
    t = tensor_type(x.type)
    shape = list(t.shape)
    shape[dim] = max(0, (end - start + step - 1) // step)
    ints = [_int(b, pool, v) for v in (dim, start, end, step)]
    return b.op("torch.aten.slice.Tensor", [x, *ints], shape, t.dtype)


def _int_pool(op) -> dict:
    """`op`'s int constant operands by value: reusable by ops built where `op` is (see `_int`)."""
    pool = {}
    for v in op.operands:
        c = constant_value(v)
        if type(c) is int:
            pool.setdefault(c, v)
    return pool


def _int(b: TorchBuilder, pool: dict, value: int) -> ir.Value:
    """An int constant holding `value`: `pool`'s (constants defined before `b`'s insertion point), else a new one, pooled.

    Each constant the rewrites build is an op at function level that every later
    pass walks, clones into groups and erases (an unrolled LSTM: ~45k of them);
    the pieces of one rewrite share theirs, and reuse those of the op rewritten.
    """
    v = pool.get(value)
    if v is None:
        v = pool[value] = b.int(value)
    return v


@pattern
def split_to_slices(op, rewriter) -> bool:
    """ListUnpack of split.Tensor / split_with_sizes / unbind.int -> one slice (unbind: select) per piece."""
    split = defining_op(op.operands[0])
    if split is None or split.name not in _SPLITS:
        return False
    x = tensor_type(split.operands[0].type)
    dim = constant_value(split.operands[1 if split.name == "torch.aten.unbind.int" else 2])
    if x is None or not x.is_static or not x.shape or not isinstance(dim, int):
        return False
    dim %= len(x.shape)
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    pool = {}
    source = split.operands[0]
    if split.name == "torch.aten.unbind.int":
        shape = x.shape[:dim] + x.shape[dim + 1 :]
        pieces = [b.op("torch.aten.select.int", [source, _int(b, pool, dim), _int(b, pool, i)], shape, x.dtype)
                  for i in range(x.shape[dim])]
    else:
        sizes = _piece_sizes(split, x.shape[dim])
        if sizes is None:
            return False
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        pieces = [_build_slice(b, source, dim, start, start + n, 1, pool) for start, n in zip(starts, sizes)]
    if len(pieces) != len(op.results):
        return False
    rewriter.replace_op(op, pieces)
    if not list(split.results[0].uses):
        rewriter.erase_op(split.opview)
    return True


_SPLITS = ("torch.aten.split.Tensor", "torch.aten.split_with_sizes", "torch.aten.unbind.int")


def _piece_sizes(split, extent: int) -> list[int] | None:
    """Sizes of the pieces along the split dim: equal chunks (the last may be short), or the listed sizes."""
    if split.name == "torch.aten.split.Tensor":
        size = constant_value(split.operands[1])
        if not isinstance(size, int) or size <= 0:
            return None
        return [min(size, extent - start) for start in range(0, extent, size)]
    sizes = constant_int_list(split.operands[1])
    return sizes if sizes is not None and sum(sizes) == extent else None


@pattern
def slice_through_elementwise(op, rewriter) -> bool:
    """slice(f(a, b)) -> f(slice(a), slice(b)) when f's result is only ever sliced or selected (select likewise)."""
    producer = defining_op(op.operands[0])
    if producer is None or producer.name not in RULES:
        return False
    is_select = op.operation.name == "torch.aten.select.int"
    args = _select_args(op) if is_select else slice_args(op)
    if args is None or not fusible(producer.opview):
        return False
    if any(use.owner.operation.name not in _PIECES for use in producer.results[0].uses):
        return False
    dim = args[0]
    out = tensor_type(producer.results[0].type)
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    pool = _int_pool(op)
    operands = []
    for v in producer.operands:
        t = tensor_type(v.type)
        d = dim - (len(out.shape) - len(t.shape)) if t is not None else -1
        if t is None or d < 0:
            operands.append(v)  # a scalar, or broadcast along a dim it does not have
        elif is_select:  # a size-1 dim is broadcast: its only element
            index = 0 if t.shape[d] == 1 else args[1]
            shape = t.shape[:d] + t.shape[d + 1 :]
            operands.append(b.op("torch.aten.select.int", [v, _int(b, pool, d), _int(b, pool, index)], shape, t.dtype))
        elif t.shape[d] == 1:
            operands.append(v)  # broadcast along the sliced dim
        else:
            operands.append(_build_slice(b, v, d, *args[1:], pool))
    result = tensor_type(op.results[0].type)
    new = b.op(producer.name, operands, result.shape, out.dtype)
    rewriter.replace_op(op, [new])
    if not list(producer.results[0].uses):
        rewriter.erase_op(producer.opview)
    return True


_PIECES = ("torch.aten.slice.Tensor", "torch.aten.select.int")


# At most this many pieces: fusion-fuse-matmul's default max-grouped, so the pieces stay one grouped GEMM.
MAX_PIECES = 8


@pattern
def slice_through_matmul(op, rewriter) -> bool:
    """slice(A @ B, last dim) -> A @ slice(B) for each slice when every user of the unbatched product is such a slice (none empty, at most MAX_PIECES).

    B is sliced along its N dim (dim 0 of linear's [N, K] weight), a bias
    along its last dim unless it broadcasts there. The GEMM must be one the
    template takes (`mlirfuse.ops.matmul.gemm`); a 1-column slice stays 2-D.
    """
    mm = defining_op(op.operands[0])
    if mm is None or mm.name not in MATMUL_OPS:
        return False
    args = slice_args(op)
    if args is None:
        return False
    g = gemm(mm.opview)
    if not isinstance(g, Gemm) or g.batch:
        return False  # batched GEMMs are never grouped: each piece would be a launch
    last = len(g.out) - 1
    users = [use.owner for use in mm.results[0].uses]
    if len(users) > MAX_PIECES:
        return False
    pieces = []
    for user in users:
        piece = slice_args(user.opview) if user.name == "torch.aten.slice.Tensor" else None
        if piece is None or piece[0] != last or piece[1] >= piece[2]:
            return False
        pieces.append((user.opview, piece))
    # Every piece at once (each where its slice was): checked once, not once per piece.
    for user, (_, start, end, step) in pieces:
        b = TorchBuilder(ir.InsertionPoint(user), user.location)
        pool = _int_pool(user)  # each piece is built where its slice was: its own constants only
        operands = list(mm.operands)
        weight = tensor_type(operands[g.b].type)
        operands[g.b] = _build_slice(b, operands[g.b], 0 if g.b_transposed else len(weight.shape) - 1, start, end, step, pool)
        if g.bias is not None:
            bias = tensor_type(operands[g.bias].type)
            if bias.shape and bias.shape[-1] != 1:
                operands[g.bias] = _build_slice(b, operands[g.bias], len(bias.shape) - 1, start, end, step, pool)
        result = tensor_type(user.results[0].type)
        rewriter.replace_op(user, [b.op(mm.name, operands, result.shape, result.dtype)])
    rewriter.erase_op(mm.opview)
    return True


def _select_args(op) -> tuple[int, int] | None:
    """(dim, index) of a `select.int` with constant, normalized arguments."""
    x = tensor_type(op.operands[0].type)
    dim, index = constant_value(op.operands[1]), constant_value(op.operands[2])
    if x is None or not x.is_static or not x.shape or not isinstance(dim, int) or not isinstance(index, int):
        return None
    dim %= len(x.shape)
    return dim, index % x.shape[dim]


@pattern
def reshape_below_elementwise(op, rewriter) -> bool:
    """f(reshape(a), s) -> reshape(f(a, s)) when every other tensor operand s is a single element.

    The elementwise work moves into `a`'s shape, where it can join the group
    computing `a`; the reshape ends up after it (an exit reshape, free). The
    group_norm decomposition ends in such a reshape, so its activation
    (SiLU, ReLU, a scale) fuses into the normalization kernel.
    """
    if not any(owner is not None and owner.name in RESHAPES for owner in map(defining_op, op.operands)):
        return False  # the cheap test first: most elementwise ops read no reshape
    if not fusible(op):
        return False
    out = tensor_type(op.results[0].type)
    reshaped = None
    for v in op.operands:
        t = tensor_type(v.type)
        if t is None or (reshaped is not None and v == reshaped):
            continue  # a constant, or the reshaped operand again (x * x)
        owner = defining_op(v)
        if reshaped is None and owner is not None and owner.name in RESHAPES and t.shape == out.shape:
            if view_args(owner) is not None and static_tensor_types(owner.operands[0]):
                reshaped = v
                continue
        if not t.is_static or t.numel != 1:
            return False
    if reshaped is None:
        return False
    reshape = defining_op(reshaped)
    source = reshape.operands[0]
    producer = defining_op(source)
    if producer is None or not (producer.name in REDUCTIONS or (producer.name in RULES and fusible(producer.opview))):
        return False  # a view of an input is read in place by the group; moving it gains nothing
    shape = tensor_type(source.type).shape
    if any(len(tensor_type(v.type).shape) > len(shape) for v in op.operands if tensor_type(v.type) and v != reshaped):
        return False  # a rank-raising scalar would change the result's rank
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    moved = b.op(op.operation.name, [source if v == reshaped else v for v in op.operands], shape, out.dtype)
    rewriter.replace_op(op, [b.view(moved, out.shape, out.dtype)])
    if not list(reshape.results[0].uses):
        rewriter.erase_op(reshape.opview)
    return True


@dataclasses.dataclass(frozen=True)
class ChunkMotion(ModulePass):
    """Turn chunk/split into slices and move them above the elementwise ops that feed them, so the chunked math fuses into one kernel (the LSTM cell); move column slices of a GEMM onto its B operand (matmul-slices, default true: one GEMM per piece, grouped by fusion-fuse-matmul); move reshapes below elementwise ops with scalar operands (group_norm + activation).
    """

    name = "fusion-chunk-motion"

    matmul_slices: bool = option(
        True, "move column slices of a GEMM's result onto its B operand (one GEMM per piece; for Triton GEMMs)"
    )

    def apply(self, module: ir.Operation, am=None) -> None:
        patterns = [("torch.prim.ListUnpack", split_to_slices)]
        patterns += [(name, slice_through_elementwise) for name in _PIECES]
        if self.matmul_slices:
            patterns.append(("torch.aten.slice.Tensor", slice_through_matmul))
        if _any_op(module, RESHAPES):  # only reshape_below_elementwise builds reshapes: without one it never matches
            patterns += [(name, reshape_below_elementwise) for name in RULES]
        apply_patterns(module, patterns)


def _any_op(root: ir.Operation, names) -> bool:
    """Is an op named in `names` anywhere under `root`? (A walk asks the bindings for names only: no
    pattern callback per elementwise op, which an unrolled LSTM without reshapes paid 32,800 times.)"""
    found = []

    def visit(op):
        if op.name in names:
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return bool(found)
