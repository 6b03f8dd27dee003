"""Indexing ops as the gathers `mlirfuse/ops/indexing.py` fuses."""

from __future__ import annotations

import math

from mlirfuse.ir import constant_value, static_tensor_types
from mlirfuse.ops.dtypes import FLOAT_DTYPES
from mlirfuse.passes.base import pattern
from mlirfuse.passes.decompositions.builder import Builder


def decompose_take_along_dim(op, rewriter) -> bool:
    """take_along_dim(x, i, dim) = gather(x', dim, remainder(i', x.size(dim))), x' and i' broadcast outside dim.

    With a dim eager wraps every index into range (-1 is the last, size + 1
    the second), as the remainder does, so the gather never reads out of
    range. Without one both are flattened and eager raises for an index out
    of range, as the gather does. The broadcasts and flattenings are views.
    """
    x, index, dim = op.operands
    types = static_tensor_types(x, index, op.results[0])
    dim = constant_value(dim)
    if types is None or isinstance(dim, bool) or not (dim is None or isinstance(dim, int)):
        return False
    xt, it, rt = types
    if it.dtype != "int64" or not xt.shape or math.prod(xt.shape) == 0:
        return False
    if dim is None:  # over the flattened input
        xshape, ishape, view = (math.prod(xt.shape),), (math.prod(it.shape),), "torch.aten.view"
        wrap = False
    else:
        rank = len(xt.shape)
        if len(it.shape) != rank or not -rank <= dim < rank:
            return False
        dim %= rank
        outer = [max(a, c) for a, c in zip(xt.shape, it.shape)]
        if any(d != dim and (a not in (1, n) or c not in (1, n)) for d, (a, c, n) in enumerate(zip(xt.shape, it.shape, outer))):
            return False
        xshape = tuple(xt.shape[d] if d == dim else n for d, n in enumerate(outer))
        ishape = tuple(it.shape[d] if d == dim else n for d, n in enumerate(outer))
        view, wrap = "torch.aten.expand", True
    if rt.shape != ishape:
        return False
    b = Builder(op)

    def reshaped(v, shape, old, dtype):
        if shape == old:
            return v
        if view == "torch.aten.view":
            return b.view(v, shape, dtype)
        return b.op(view, [v, b.int_list(shape), b.bool(False)], shape, dtype)

    x, index = reshaped(x, xshape, xt.shape, xt.dtype), reshaped(index, ishape, it.shape, "int64")
    dim = dim or 0
    if wrap:
        index = b.op("torch.aten.remainder.Scalar", [index, b.int(xshape[dim])], ishape, "int64")
    rewriter.replace_op(op, [b.op("torch.aten.gather", [x, b.int(dim), index, b.bool(False)], rt.shape, rt.dtype)])
    return True


@pattern
def decompose_scatter_reduce(op, rewriter) -> bool:
    """scatter_reduce(x, dim, i, src, "sum") = scatter_add(x, dim, i, src); without include_self, of x with the
    scattered-to places zeroed first (a scatter of 0), as eager starts them from the sum's identity."""
    x, dim, index, src, reduce, include_self = op.operands
    types = static_tensor_types(x, op.results[0])
    if types is None or constant_value(reduce) != "sum" or not isinstance(constant_value(include_self), bool):
        return False
    xt = types[0]
    b = Builder(op)
    if not constant_value(include_self):
        zero = b.float(0.0) if xt.dtype in FLOAT_DTYPES else b.int(0)
        x = b.op("torch.aten.scatter.value", [x, dim, index, zero], xt.shape, xt.dtype)
    rewriter.replace_op(op, [b.op("torch.aten.scatter_add", [x, dim, index, src], xt.shape, xt.dtype)])
    return True
