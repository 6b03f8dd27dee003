"""Indexing ops as the gathers `mlirfuse/indexing.py` fuses."""

from __future__ import annotations

from mlirfuse.ir import constant_value, static_tensor_types
from mlirfuse.passes.decompositions.builder import Builder


def decompose_take_along_dim(op, rewriter) -> bool:
    """take_along_dim(x, i, dim) = gather(x, dim, remainder(i, x.size(dim))) where no broadcast is needed.

    Eager wraps every index into range (-1 is the last, size + 1 the second),
    as the remainder does; the gather then never reads out of range.
    """
    x, index, dim = op.operands
    types = static_tensor_types(x, index, op.results[0])
    dim = constant_value(dim)
    if types is None or isinstance(dim, bool) or not isinstance(dim, int):
        return False
    xt, it, rt = types
    rank = len(xt.shape)
    if rank == 0 or len(it.shape) != rank or it.dtype != "int64" or not -rank <= dim < rank:
        return False
    dim %= rank
    size = xt.shape[dim]
    if size == 0 or rt.shape != it.shape or any(a != b for d, (a, b) in enumerate(zip(xt.shape, it.shape)) if d != dim):
        return False
    b = Builder(op)
    wrapped = b.op("torch.aten.remainder.Scalar", [index, b.int(size)], it.shape, "int64")
    rewriter.replace_op(op, [b.op("torch.aten.gather", [x, b.int(dim), wrapped, b.bool(False)], rt.shape, rt.dtype)])
    return True
