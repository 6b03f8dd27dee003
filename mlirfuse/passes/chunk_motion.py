"""fusion-chunk-motion: move chunk/split above the elementwise work that feeds it.

The LSTM cell computes `gates = x @ W_ih.T + h @ W_hh.T + b`, then
`gates.chunk(4, 1)` and elementwise math on each chunk. With the split in the
middle, the adds and the cell math are two kernels joined by a [1, 4h]
tensor. This pass

1. turns `ListUnpack(split.Tensor(x, size, dim))` (and split_with_sizes)
   into one `slice.Tensor(x, dim, start, end)` per piece, `unbind` into
   one `select.int` per piece, and
2. pushes the slices through the elementwise op they read when every user of
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

The pass is its own driver: one walk finds the splits and slices, then a
worklist holds only the ops whose result every reader slices
(`slice_motion.Motion`), each taken when that became true (an unrolled LSTM:
400 rewrites, where MLIR's greedy driver called a pattern 27,600 times, 23,200
of them for nothing). Where each piece's ops land does not depend on the
order: each is built just before the slice it replaces. A piece that would at
once move on through the op it slices is never built: that op's rewrite of it
is built in its place (`slice_motion._Producer`; an LSTM step builds its 28
final ops, not 44); a split of a structure split before is built from a
tape of that first build (`slice_motion.pieces_through`: an LSTM's 400
steps are built once and replayed 399 times). Constants and lists a rewrite
leaves unread are erased, as the greedy driver erased them.

Here: the split->slices rewrite and the driver. The worklist and the rewrites
that move slices through elementwise ops and GEMMs are in `slice_motion.py`;
the last step, reshapes moved below elementwise ops with single-element
operands (`reshape_motion.py`), runs after the slices have moved.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.dialect import TEMPLATE_KINDS, group_kind, has_kind
from mlirfuse.ir import constant_int_list, constant_value, defining_op, ir, op_id, tensor_type
from mlirfuse.ops.views import RESHAPES
from mlirfuse.passes.base import ModulePass, ops_named
from mlirfuse.passes.options import option
from mlirfuse.passes.reshape_motion import move_reshapes
from mlirfuse.passes.slice_motion import PIECES, Ints, Motion, erase_unread, pieces_through, plan_through

_SPLITS = ("torch.aten.split.Tensor", "torch.aten.split_with_sizes", "torch.aten.unbind.int")


def split_to_slices(unpack, motion: Motion) -> None:
    """ListUnpack of split.Tensor / split_with_sizes / unbind.int -> one slice (unbind: select) per piece."""
    split = defining_op(unpack.operands[0])
    if split is None or split.name not in _SPLITS:
        return
    x = tensor_type(split.operands[0].type)
    unbind = split.name == "torch.aten.unbind.int"
    dim = constant_value(split.operands[1 if unbind else 2])
    if x is None or not x.is_static or not x.shape or not isinstance(dim, int):
        return
    dim %= len(x.shape)
    sizes = [1] * x.shape[dim] if unbind else _piece_sizes(split, x.shape[dim])
    if sizes is None or len(sizes) != len(unpack.results):
        return
    ints = Ints(motion.b.at(unpack))
    source = split.operands[0]
    if unbind:
        specs = [(True, dim, i) for i in range(x.shape[dim])]
    else:
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        specs = [(False, dim, start, start + n, 1) for start, n in zip(starts, sizes)]
    # Where the split goes (its only reader is this unpack), its source's producer may take every piece at once.
    through = plan_through(source, x, 1, specs, motion) if _read_once(split.results[0]) else None
    unread = []
    if through is None:
        pieces = [motion.select(source, *spec[1:], ints) if spec[0] else motion.slice(source, *spec[1:], ints) for spec in specs]
    else:
        pieces = pieces_through(through, x, specs, motion, unread)
    for result, piece in zip(unpack.results, pieces):
        result.replace_all_uses_with(piece)
    unpack.operation.erase()
    if next(iter(split.results[0].uses), None) is None:
        arguments = list(split.operands)[1:]
        split.operation.erase()
        erase_unread(arguments + unread)
        if through is None:
            motion.offer(source)
        else:
            through[0].erase(through[1], motion)


def _read_once(value: ir.Value) -> bool:
    uses = iter(value.uses)
    return next(uses, None) is not None and next(uses, None) is None


def _piece_sizes(split, extent: int) -> list[int] | None:
    """Sizes of the pieces along the split dim: equal chunks (the last may be short), or the listed sizes."""
    if split.name == "torch.aten.split.Tensor":
        size = constant_value(split.operands[1])
        if not isinstance(size, int) or size <= 0:
            return None
        return [min(size, extent - start) for start in range(0, extent, size)]
    sizes = constant_int_list(split.operands[1])
    return sizes if sizes is not None and sum(sizes) == extent else None


def _collect(module: ir.Operation) -> tuple[list, list, list]:
    """The ListUnpacks, slices and selects, and reshapes under `module`, outside template group and kernel bodies.

    Found by name (`ops_named`); what is found in a template body is dropped.
    """
    unpacks, pieces, reshapes = [], [], []
    lists = {name: pieces for name in PIECES}
    lists["torch.prim.ListUnpack"] = unpacks
    lists.update((name, reshapes) for name in RESHAPES)
    for op in ops_named(module, lists):
        if not _in_template_body(op):
            lists[op.name].append(op)
    return unpacks, pieces, reshapes


def _in_template_body(op: ir.Operation) -> bool:
    """Is `op` inside the body of a template group or kernel (at any depth)?"""
    parent = op.parent
    while parent is not None and parent.name != "func.func" and parent.name != "builtin.module":
        if parent.name in ("fusion.group", "fusion.kernel") and has_kind(parent) and group_kind(parent) in TEMPLATE_KINDS:
            return True
        parent = parent.parent
    return False


@dataclasses.dataclass(frozen=True)
class ChunkMotion(ModulePass):
    """Turn chunk/split into slices and move them above the elementwise ops that feed them, so the chunked math fuses into one kernel (the LSTM cell); move column slices of a GEMM onto its B operand (matmul-slices, default true: one GEMM per piece, grouped by fusion-fuse-matmul); move reshapes below elementwise ops with scalar operands (group_norm + activation).
    """

    name = "fusion-chunk-motion"

    matmul_slices: bool = option(
        True, "move column slices of a GEMM's result onto its B operand (one GEMM per piece; for Triton GEMMs)"
    )

    def apply(self, module: ir.Operation, am=None) -> None:
        unpacks, pieces, reshapes = _collect(module)
        motion = Motion(self.matmul_slices)
        offered = set()
        for piece in pieces:  # the slices already there, before the splits' pieces join them
            source = piece.operands[0]
            owner = source.owner
            if isinstance(owner, ir.OpView) and op_id(owner) not in offered:
                offered.add(op_id(owner))
                motion.offer(source)
        for unpack in unpacks:
            split_to_slices(unpack, motion)
        motion.run()
        if reshapes:
            move_reshapes(reshapes)
