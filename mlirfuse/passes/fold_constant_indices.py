"""fusion-fold-constant-indices: an index by a one-element constant is a slice, a view.

torch.export lifts the index tensors a model writes in its code (Falcon's
`qkv[:, :, :, [-2]]`) as tensor constants, copied before use
(`lift_fresh_copy`, imported as a clone); the importer inlines the small
integer ones as `torch.vtensor.literal` (`frontend/importer.py`). Here a
clone of a literal is the literal (value semantics: nothing can write it),
and `index.Tensor(x, [None, ..., c])` with a literal `c` of one element is
`slice.Tensor(x, d, i, i + 1)` (`select.int(x, d, i)` for a 0-d `c`).
A slice is a view: its consumers read it by index arithmetic (the attention
kernel reads key and value through the strides of the qkv GEMM's result),
where the gather was a kernel of its own, and the clones two more.

Left alone: several index tensors, a literal of more than one element, bool
and uint8 (mask) indices, an index out of range (eager raises; so does the
gather kernel's check) and non-static shapes.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.ir import TorchBuilder, defining_op, ir, tensor_type
from mlirfuse.passes.base import ModulePass, apply_patterns, pattern

LITERAL = "torch.vtensor.literal"
# Element types of an index tensor (bool and uint8 tensors index as masks).
INDEX_DTYPES = ("int64", "int32", "int16", "int8")


def one_element_literal(value: ir.Value) -> int | None:
    """The integer held by `value` when a literal of one integer element defines it, else None."""
    op = defining_op(value)
    t = tensor_type(value.type)
    if op is None or op.name != LITERAL or t is None or not t.is_static or t.numel != 1 or t.dtype not in INDEX_DTYPES:
        return None
    attr = op.attributes["value"]
    if not isinstance(attr, ir.DenseIntElementsAttr):
        return None
    return ir.IntegerAttr(attr.get_splat_value()).value if attr.is_splat else ir.DenseIntElementsAttr(attr)[0]


@pattern
def fold_clone_of_literal(op, rewriter) -> bool:
    """clone(literal) = literal: a constant is never written, so its copy is itself."""
    source = op.operands[0]
    owner = defining_op(source)
    if owner is None or owner.name != LITERAL or source.type != op.results[0].type:
        return False
    rewriter.replace_op(op, [source])
    return True


@pattern
def index_by_constant(op, rewriter) -> bool:
    """index.Tensor(x, [None, ..., c, None, ...]) with a one-element literal c = slice (or select, c 0-d) of x."""
    x, indices = op.operands
    items = defining_op(indices)
    if items is None or items.name != "torch.prim.ListConstruct":
        return False
    tensors = [(d, v) for d, v in enumerate(items.operands) if tensor_type(v.type) is not None]
    nones = [v for v in items.operands if defining_op(v) is not None and defining_op(v).name == "torch.constant.none"]
    if len(tensors) != 1 or len(tensors) + len(nones) != len(items.operands):
        return False
    (dim, index), = tensors
    at = one_element_literal(index)
    xt, out = tensor_type(x.type), tensor_type(op.results[0].type)
    if at is None or xt is None or out is None or not xt.is_static or not out.is_static or dim >= len(xt.shape):
        return False
    size = xt.shape[dim]
    if not -size <= at < size:
        return False
    at %= size
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    if len(tensor_type(index.type).shape) == 0:
        view = b.op("torch.aten.select.int", [x, b.int(dim), b.int(at)], out.shape, out.dtype)
    else:
        view = b.op("torch.aten.slice.Tensor", [x, b.int(dim), b.int(at), b.int(at + 1), b.int(1)], out.shape, out.dtype)
    rewriter.replace_op(op, [view])
    return True


PATTERNS = [
    ("torch.aten.clone", fold_clone_of_literal),
    ("torch.aten.index.Tensor", index_by_constant),
]


@dataclasses.dataclass(frozen=True)
class FoldConstantIndices(ModulePass):
    """Fold a clone of a literal into the literal and an index by a one-element integer literal into a slice (select for a 0-d index).

    The index must be the only tensor of the index list, in range of its
    dim; the literal no op reads any more is erased.
    """

    name = "fusion-fold-constant-indices"

    def apply(self, module: ir.Operation, am=None) -> None:
        apply_patterns(module, PATTERNS)
