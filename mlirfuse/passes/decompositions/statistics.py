"""Statistics: var/std(_mean), logsumexp and max.dim/min.dim.

Variance is two-pass: mean, then the mean of squared deviations, which is
numerically sound without Welford.
"""

from __future__ import annotations

import math

from mlirfuse.ir import NO_CONSTANT, constant_value, static_tensor_types, tensor_type
from mlirfuse.ops.dtypes import FLOAT_DTYPES
from mlirfuse.ops.reductions import reduced_shape, reduction_dims
from mlirfuse.passes.base import pattern
from mlirfuse.passes.decompositions.builder import Builder


@pattern
def decompose_variance(op, rewriter) -> bool:
    """var = sum((x - mean)^2) / max(N - correction, 0); std = sqrt(var)."""
    return variance(op, rewriter, op.operation.name)


def variance(op, rewriter, name: str) -> bool:
    x = op.operands[0]
    (xt,) = static_tensor_types(x) or [None]
    if xt is None:
        return False
    dims = reduction_dims(op.operands[1], len(xt.shape))
    correction = constant_value(op.operands[2])  # .dim variants: `unbiased` (bool)
    keepdim = constant_value(op.operands[3])
    if dims is None or correction is NO_CONSTANT or not isinstance(keepdim, bool):
        return False
    if isinstance(correction, bool):
        correction = int(correction)
    correction = 1 if correction is None else correction
    n = math.prod(xt.shape[d] for d in dims)
    b = Builder(op)
    shape, dtype = xt.shape, tensor_type(op.results[0].type).dtype
    mean, rshape = b.reduce("torch.aten.mean.dim", x, dims, shape, dtype)
    xc = b.binary("torch.aten.sub.Tensor", x, mean, shape, dtype)
    sq = b.binary("torch.aten.mul.Tensor", xc, xc, shape, dtype)
    # Reduce with keepdim and drop the dims with a view at the end, so that
    # the division (and sqrt) fuse as a row-space epilogue.
    total, _ = b.reduce("torch.aten.sum.dim_IntList", sq, dims, shape, dtype)
    divisor = max(n - correction, 0)
    divisor = b.int(divisor) if isinstance(divisor, int) else b.float(float(divisor))
    result = b.op("torch.aten.div.Scalar", [total, divisor], rshape, dtype)
    if "std" in name:
        result = b.unary("torch.aten.sqrt", result, rshape, dtype)
    results = [result, mean] if "_mean." in name else [result]
    if not keepdim:
        out_shape = reduced_shape(shape, dims, False)
        results = [b.view(r, out_shape, dtype) for r in results]
    rewriter.replace_op(op, results)
    return True


@pattern
def decompose_max_dim(op, rewriter) -> bool:
    """max.dim(x, d) = (amax(x, d), argmax(x, d)); min.dim likewise: one reduction kernel for both."""
    x = op.operands[0]
    (xt,) = static_tensor_types(x) or [None]
    dim, keepdim = constant_value(op.operands[1]), constant_value(op.operands[2])
    if xt is None or not xt.shape or not isinstance(dim, int) or not isinstance(keepdim, bool):
        return False
    dim %= len(xt.shape)
    if xt.shape[dim] == 0:
        return False
    # amax/argmax fuse on floats only (reductions.py); for other dtypes one ATen
    # max.dim is cheaper, and ATen has no argmax/argmin on bool.
    if xt.dtype not in FLOAT_DTYPES:
        return False
    is_max = op.operation.name == "torch.aten.max.dim"
    b = Builder(op)
    shape, dtype = xt.shape, xt.dtype
    values, rshape = b.reduce("torch.aten.amax" if is_max else "torch.aten.amin", x, [dim], shape, dtype)
    index = "torch.aten.argmax" if is_max else "torch.aten.argmin"
    indices = b.op(index, [x, b.int(dim), b.bool(True)], rshape, "int64")
    results = [values, indices]
    if not keepdim:
        out_shape = reduced_shape(shape, [dim], False)
        results = [b.view(r, out_shape, t) for r, t in zip(results, (dtype, "int64"))]
    rewriter.replace_op(op, results)
    return True


@pattern
def decompose_logsumexp(op, rewriter) -> bool:
    """logsumexp(x) = log(sum(exp(x - m))) + m, m = amax(x) with infinities replaced by 0."""
    x = op.operands[0]
    (xt,) = static_tensor_types(x) or [None]
    if xt is None:
        return False
    dims = reduction_dims(op.operands[1], len(xt.shape))
    keepdim = constant_value(op.operands[2])
    out = tensor_type(op.results[0].type)
    if dims is None or not isinstance(keepdim, bool) or out.dtype != xt.dtype or any(xt.shape[d] == 0 for d in dims):
        return False
    b = Builder(op)
    shape, dtype = xt.shape, xt.dtype
    m, rshape = b.reduce("torch.aten.amax", x, dims, shape, dtype)
    inf = b.op("torch.aten.eq.Scalar", [b.unary("torch.aten.abs", m, rshape, dtype), b.float(math.inf)], rshape, "bool")
    m = b.op("torch.aten.where.ScalarSelf", [inf, b.float(0.0), m], rshape, dtype)
    e = b.unary("torch.aten.exp", b.binary("torch.aten.sub.Tensor", x, m, shape, dtype), shape, dtype)
    s, _ = b.reduce("torch.aten.sum.dim_IntList", e, dims, shape, dtype)
    result = b.binary("torch.aten.add.Tensor", b.unary("torch.aten.log", s, rshape, dtype), m, rshape, dtype)
    if not keepdim:
        result = b.view(result, out.shape, dtype)
    rewriter.replace_op(op, [result])
    return True
