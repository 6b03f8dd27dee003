"""Normalizations: softmax and log_softmax, layer_norm / native_layer_norm / rms_norm, inference batch_norm, group_norm."""

from __future__ import annotations

import math

from mlirfuse.ir import (
    NO_CONSTANT,
    constant_int_list,
    constant_value,
    reduced_static_type,
    static_tensor_types,
    tensor_type,
)
from mlirfuse.ops.elementwise import compute_dtype
from mlirfuse.ops.reductions import reduction_dims
from mlirfuse.passes.base import pattern
from mlirfuse.passes.decompositions.builder import Builder


def _softmax(op, rewriter, log: bool) -> bool:
    x = op.operands[0]
    out, xt = tensor_type(op.results[0].type), tensor_type(x.type)
    if xt is None or out is None:
        return False
    dims = reduction_dims(op.operands[1], len(xt.shape))
    # Any dim may be `?`; a `?` softmax dim that is empty at run time leaves every result empty.
    if dims is None or len(dims) != (1 if xt.shape else 0) or any(xt.shape[d] == 0 for d in dims):
        return False  # softmax over an empty dim is empty; amax over it would be an error
    b = Builder(op)
    shape, dtype = xt.shape, out.dtype
    if dtype != xt.dtype:
        x = b.convert(x, shape, dtype)
    m, rshape = b.reduce("torch.aten.amax", x, dims, shape, dtype)
    d = b.binary("torch.aten.sub.Tensor", x, m, shape, dtype)
    e = b.unary("torch.aten.exp", d, shape, dtype)
    s, _ = b.reduce("torch.aten.sum.dim_IntList", e, dims, shape, dtype)
    if log:
        ls = b.unary("torch.aten.log", s, rshape, dtype)
        result = b.binary("torch.aten.sub.Tensor", d, ls, shape, dtype)
    else:
        result = b.binary("torch.aten.div.Tensor", e, s, shape, dtype)
    rewriter.replace_op(op, [result])
    return True


@pattern
def decompose_softmax(op, rewriter) -> bool:
    """softmax(x) = exp(x - amax(x)) / sum(exp(x - amax(x)))."""
    name = op.operation.name
    if name in ("torch.aten._softmax", "torch.aten._log_softmax"):
        # half_to_float: the result type already says f32.
        return _softmax(op, rewriter, log=name.endswith("log_softmax"))
    return _softmax(op, rewriter, log=name.startswith("torch.aten.log_softmax"))


def _layer_norm(op, rewriter, rms: bool) -> bool:
    x = op.operands[0]
    xt = tensor_type(x.type)
    normalized = constant_int_list(op.operands[1])
    if xt is None or normalized is None or len(normalized) > len(xt.shape):
        return False
    rank = len(xt.shape)
    dims = list(range(rank - len(normalized), rank))
    if reduced_static_type(x, dims) is None:  # the leading dims may be `?`
        return False
    weight = op.operands[2]
    if rms:
        bias, eps = None, constant_value(op.operands[3])
        if eps is None:
            import torch

            # eager's default: epsilon of the dtype it computes in (f32 for f16/bf16 inputs)
            eps = torch.finfo(getattr(torch, compute_dtype(xt.dtype))).eps
    else:
        bias, eps = op.operands[3], constant_value(op.operands[4])
    if not isinstance(eps, float) and not isinstance(eps, int):
        return False
    out = tensor_type(op.results[0].type)
    b = Builder(op)
    # f16/bf16 are normalized in f32 and rounded once, as eager (and torch's own
    # decomposition) does: intermediates of the input's dtype would be rounded
    # wherever they leave a kernel (a few ulp off eager, issue 9).
    shape, dtype = xt.shape, compute_dtype(xt.dtype)
    if dtype != xt.dtype:
        x = b.convert(x, shape, dtype)
    if rms:
        sq = b.binary("torch.aten.mul.Tensor", x, x, shape, dtype)
        ms, rshape = b.reduce("torch.aten.mean.dim", sq, dims, shape, dtype)
        rstd = b.unary("torch.aten.rsqrt", b.add_scalar(ms, float(eps), rshape, dtype), rshape, dtype)
        y = b.binary("torch.aten.mul.Tensor", x, rstd, shape, dtype)
        mean = None
    else:
        mean, rshape = b.reduce("torch.aten.mean.dim", x, dims, shape, dtype)
        xc = b.binary("torch.aten.sub.Tensor", x, mean, shape, dtype)
        sq = b.binary("torch.aten.mul.Tensor", xc, xc, shape, dtype)
        var, _ = b.reduce("torch.aten.mean.dim", sq, dims, shape, dtype)
        rstd = b.unary("torch.aten.rsqrt", b.add_scalar(var, float(eps), rshape, dtype), rshape, dtype)
        y = b.binary("torch.aten.mul.Tensor", xc, rstd, shape, dtype)
    if constant_value(weight) is NO_CONSTANT:
        y = b.binary("torch.aten.mul.Tensor", y, weight, shape, dtype)
    if bias is not None and constant_value(bias) is NO_CONSTANT:
        y = b.binary("torch.aten.add.Tensor", y, bias, shape, dtype)
    elif not rms:
        # ATen's CPU kernel adds a zero bias where there is none: a -0.0 result is 0.0 in eager.
        y = b.add_scalar(y, 0.0, shape, dtype)
    if out.dtype != dtype:
        y = b.convert(y, shape, out.dtype)
    results = [y]
    if len(op.results) == 3:  # native_layer_norm: (y, mean, rstd)
        for value, result in ((mean, op.results[1]), (rstd, op.results[2])):
            want = tensor_type(result.type)
            if want.shape != rshape:
                return False
            results.append(value if want.dtype == dtype else b.convert(value, rshape, want.dtype))
    rewriter.replace_op(op, results)
    return True


@pattern
def decompose_layer_norm(op, rewriter) -> bool:
    """layer_norm(x) = (x - mean) * rsqrt(mean((x - mean)^2) + eps) * w + b (b = 0 when absent, as in eager)."""
    return _layer_norm(op, rewriter, rms=False)


@pattern
def decompose_rms_norm(op, rewriter) -> bool:
    """rms_norm(x) = x * rsqrt(mean(x^2) + eps) * w."""
    return _layer_norm(op, rewriter, rms=True)


@pattern
def decompose_batch_norm(op, rewriter) -> bool:
    """Inference batch_norm(x) = x * a + c with a = rsqrt(running_var + eps) * w, c = b - running_mean * a, per channel (dim 1)."""
    x, w, bias, mean, var, training, _, eps, _ = op.operands
    if constant_value(training) is not False:
        return False
    return batch_norm(op, rewriter, x, w, bias, mean, var, eps)


def batch_norm(op, rewriter, x, w, bias, mean, var, eps) -> bool:
    """Eager's CPU inference kernel, step for step: per-channel a and c in f32, then one fma per element.

    a = rsqrt(var + eps) * w and c = b - mean * a are f32 whatever the
    dtype (an f16/bf16 model's parameters are widened first); the result is
    fma(x, a, c) rounded once to x's dtype. c is an fma too for f32 and bf16,
    and a product then a difference for f16, as ATen's kernels round them: so
    precision="eager" rounds only what eager stores (fuzz seed 2750712: an f16
    batch norm rounded after each step of (x - mean) * rstd * w + b).
    """
    types = static_tensor_types(x, mean, var)
    eps = constant_value(eps)
    if types is None or len(types[0].shape) < 2 or not isinstance(eps, (int, float)) or isinstance(eps, bool):
        return False
    shape, dtype = types[0].shape, types[0].dtype
    if tensor_type(op.results[0].type).dtype != dtype or any(t.dtype != dtype for t in types[1:]):
        return False
    b = Builder(op)
    per_channel = [shape[1]] + [1] * (len(shape) - 2)  # broadcasts against [N, C, ...]
    f32 = "float32"

    def wide(v, v_shape):
        return v if dtype == f32 else b.convert(v, v_shape, f32)

    def channel(v):
        return wide(b.view(v, per_channel, dtype), per_channel)

    scale = b.unary("torch.aten.rsqrt", b.add_scalar(channel(var), float(eps), per_channel, f32), per_channel, f32)
    if constant_value(w) is NO_CONSTANT:
        scale = b.binary("torch.aten.mul.Tensor", scale, channel(w), per_channel, f32)
    if constant_value(bias) is NO_CONSTANT and dtype != "float16":
        shift = b.addcmul(channel(bias), channel(mean), scale, -1, per_channel, f32)
    else:
        shifted = b.binary("torch.aten.mul.Tensor", channel(mean), scale, per_channel, f32)
        if constant_value(bias) is NO_CONSTANT:
            shift = b.binary("torch.aten.sub.Tensor", channel(bias), shifted, per_channel, f32)
        else:
            shift = b.unary("torch.aten.neg", shifted, per_channel, f32)
    y = b.addcmul(shift, wide(x, shape), scale, 1, shape, f32)
    if dtype != f32:
        y = b.convert(y, shape, dtype)
    op.results[0].replace_all_uses_with(y)  # the other results (empty saved stats) are unused
    rewriter.erase_op(op)
    return True


@pattern
def decompose_group_norm(op, rewriter) -> bool:
    """group_norm over [N, C, *S] as layer norm of the [N, G, C/G, prod(S)] view, reduced over its last two dims.

    Weight and bias are viewed as [1, G, C/G, 1] so the affine step runs in
    the same iteration space; the result is reshaped back (an exit reshape).
    Eager's kernels compute x * (rstd * w) + (b - mean * rstd * w) instead,
    which cancels where |mean| >> std (a group of one element gives b only up
    to the rounding of x * rstd * w); this form is exact there and differs
    from eager only for an infinite weight (known.ACCEPTED in tests/fuzz).
    """
    x, groups, w, bias, eps, _ = op.operands
    (xt,) = static_tensor_types(x) or [None]
    groups, eps = constant_value(groups), constant_value(eps)
    if xt is None or len(xt.shape) < 2 or not isinstance(groups, int) or not isinstance(eps, (int, float)):
        return False
    n, c = xt.shape[0], xt.shape[1]
    if groups <= 0 or c % groups or tensor_type(op.results[0].type).dtype != xt.dtype:
        return False
    b = Builder(op)
    dtype = xt.dtype
    grouped = [n, groups, c // groups, math.prod(xt.shape[2:])]
    affine = [1, groups, c // groups, 1]
    xg = b.view(x, grouped, dtype)
    mean, rshape = b.reduce("torch.aten.mean.dim", xg, [2, 3], grouped, dtype)
    xc = b.binary("torch.aten.sub.Tensor", xg, mean, grouped, dtype)
    var, _ = b.reduce("torch.aten.mean.dim", b.binary("torch.aten.mul.Tensor", xc, xc, grouped, dtype), [2, 3], grouped, dtype)
    rstd = b.unary("torch.aten.rsqrt", b.add_scalar(var, float(eps), rshape, dtype), rshape, dtype)
    y = b.binary("torch.aten.mul.Tensor", xc, rstd, grouped, dtype)
    if constant_value(w) is NO_CONSTANT:
        y = b.binary("torch.aten.mul.Tensor", y, b.view(w, affine, dtype), grouped, dtype)
    if constant_value(bias) is NO_CONSTANT:
        y = b.binary("torch.aten.add.Tensor", y, b.view(bias, affine, dtype), grouped, dtype)
    else:  # eager adds a zero bias where there is none: a -0.0 result is 0.0 in eager
        y = b.add_scalar(y, 0.0, grouped, dtype)
    rewriter.replace_op(op, [b.view(y, xt.shape, dtype)])
    return True
