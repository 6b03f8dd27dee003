"""fusion-decompose: composite normalizations into reductions and pointwise ops.

The FX import keeps `softmax`, `log_softmax`, `layer_norm`,
`native_layer_norm`, `rms_norm`, `group_norm`, inference `batch_norm`,
`var`/`std`/`var_mean`/`std_mean`, `logsumexp` and `max.dim`/`min.dim` whole (we do not run torch-mlir's Python decompositions: they
cost seconds on big graphs). This pass rewrites each into `amax`/`sum`/`mean`
reductions (always keepdim, so results broadcast back over the reduced
axes) and elementwise ops, the form `fusion-fuse-elementwise` turns into one
reduction kernel. Variance is two-pass: mean, then the mean of squared
deviations, which is numerically sound without Welford.
"""

from __future__ import annotations

import dataclasses
import math

from mlirfuse.elementwise import FLOAT_DTYPES, compute_dtype
from mlirfuse.ir import (
    DTYPE_CODES,
    NO_CONSTANT,
    TorchBuilder,
    constant_int_list,
    constant_value,
    ir,
    static_tensor_types,
    tensor_type,
)
from mlirfuse.passes.base import ModulePass, apply_patterns, pattern


class _Builder(TorchBuilder):
    """TorchBuilder plus the handful of ATen ops the decompositions use, shape-aware."""

    def __init__(self, op):
        super().__init__(ir.InsertionPoint(op), op.location)

    def binary(self, name, a, b, shape, dtype):
        operands = [a, b] + ([self.int(1)] if name in ("torch.aten.add.Tensor", "torch.aten.sub.Tensor") else [])
        return self.op(name, operands, shape, dtype)

    def unary(self, name, a, shape, dtype):
        return self.op(name, [a], shape, dtype)

    def add_scalar(self, a, value: float, shape, dtype):
        return self.op("torch.aten.add.Scalar", [a, self.float(value), self.int(1)], shape, dtype)

    def reduce(self, name, x, dims, shape, dtype, keepdim=True):
        reduced = _reduced_shape(shape, dims, keepdim)
        operands = [x, self.int_list(dims), self.bool(keepdim)]
        if name not in ("torch.aten.amax", "torch.aten.amin"):
            operands.append(self.none())
        return self.op(name, operands, reduced, dtype), reduced

    def convert(self, x, shape, dtype):
        return self.op("torch.prims.convert_element_type", [x, self.int(DTYPE_CODES[dtype])], shape, dtype)


def _reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in dims)


def _dims(value, rank: int) -> list[int] | None:
    """A dim operand (int, list of ints or None = all) as sorted non-negative dims."""
    const = constant_value(value)
    if const is NO_CONSTANT:
        const = constant_int_list(value)
        if const is None:
            return None
    if const is None:
        return list(range(rank))
    if isinstance(const, int):
        const = [const]
    if rank == 0:
        return []
    dims = sorted({d % rank for d in const})
    return dims if dims or rank == 0 else list(range(rank))


def _softmax(op, rewriter, log: bool) -> bool:
    x = op.operands[0]
    out = tensor_type(op.results[0].type)
    (xt,) = static_tensor_types(x) or [None]
    if xt is None or out is None:
        return False
    dims = _dims(op.operands[1], len(xt.shape))
    if dims is None or len(dims) != (1 if xt.shape else 0) or any(xt.shape[d] == 0 for d in dims):
        return False  # softmax over an empty dim is empty; amax over it would be an error
    b = _Builder(op)
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
    (xt,) = static_tensor_types(x) or [None]
    if xt is None:
        return False
    normalized = constant_int_list(op.operands[1])
    if normalized is None:
        return False
    rank = len(xt.shape)
    dims = list(range(rank - len(normalized), rank))
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
    b = _Builder(op)
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
    """layer_norm(x) = (x - mean) * rsqrt(mean((x - mean)^2) + eps) * w + b."""
    return _layer_norm(op, rewriter, rms=False)


@pattern
def decompose_rms_norm(op, rewriter) -> bool:
    """rms_norm(x) = x * rsqrt(mean(x^2) + eps) * w."""
    return _layer_norm(op, rewriter, rms=True)


@pattern
def decompose_variance(op, rewriter) -> bool:
    """var = sum((x - mean)^2) / max(N - correction, 0); std = sqrt(var)."""
    return _variance(op, rewriter, op.operation.name)


@pattern
def decompose_operator(op, rewriter) -> bool:
    """`torch.operator` spellings of ops torch-mlir has no definition for (std_mean, inference batch norm)."""
    name = ir.StringAttr(op.attributes["name"]).value
    if name in ("torch.aten.std_mean.correction", "torch.aten.std_mean.dim"):
        return _variance(op, rewriter, name)
    if name == "torch.aten._native_batch_norm_legit_no_training":
        # (x, weight, bias, running_mean, running_var, momentum, eps) -> (y, [0], [0])
        if any(list(r.uses) for r in list(op.results)[1:]):
            return False
        x, w, bias, mean, var, _, eps = op.operands
        return _batch_norm(op, rewriter, x, w, bias, mean, var, eps)
    return False


@pattern
def decompose_batch_norm(op, rewriter) -> bool:
    """Inference batch_norm(x) = (x - running_mean) * rsqrt(running_var + eps) * w + b, per channel (dim 1)."""
    x, w, bias, mean, var, training, _, eps, _ = op.operands
    if constant_value(training) is not False:
        return False
    return _batch_norm(op, rewriter, x, w, bias, mean, var, eps)


def _batch_norm(op, rewriter, x, w, bias, mean, var, eps) -> bool:
    types = static_tensor_types(x, mean, var)
    eps = constant_value(eps)
    if types is None or len(types[0].shape) < 2 or not isinstance(eps, (int, float)) or isinstance(eps, bool):
        return False
    shape, dtype = types[0].shape, types[0].dtype
    if tensor_type(op.results[0].type).dtype != dtype or any(t.dtype != dtype for t in types[1:]):
        return False
    b = _Builder(op)
    per_channel = [shape[1]] + [1] * (len(shape) - 2)  # broadcasts against [N, C, ...]

    def channel(v):
        return b.view(v, per_channel, dtype)

    rstd = b.unary("torch.aten.rsqrt", b.add_scalar(channel(var), float(eps), per_channel, dtype), per_channel, dtype)
    y = b.binary("torch.aten.mul.Tensor", b.binary("torch.aten.sub.Tensor", x, channel(mean), shape, dtype), rstd, shape, dtype)
    if constant_value(w) is NO_CONSTANT:
        y = b.binary("torch.aten.mul.Tensor", y, channel(w), shape, dtype)
    if constant_value(bias) is NO_CONSTANT:
        y = b.binary("torch.aten.add.Tensor", y, channel(bias), shape, dtype)
    op.results[0].replace_all_uses_with(y)  # the other results (empty saved stats) are unused
    rewriter.erase_op(op)
    return True


@pattern
def decompose_group_norm(op, rewriter) -> bool:
    """group_norm over [N, C, *S] as layer norm of the [N, G, C/G, prod(S)] view, reduced over its last two dims.

    Weight and bias are viewed as [1, G, C/G, 1] so the affine step runs in
    the same iteration space; the result is reshaped back (an exit reshape).
    """
    x, groups, w, bias, eps, _ = op.operands
    (xt,) = static_tensor_types(x) or [None]
    groups, eps = constant_value(groups), constant_value(eps)
    if xt is None or len(xt.shape) < 2 or not isinstance(groups, int) or not isinstance(eps, (int, float)):
        return False
    n, c = xt.shape[0], xt.shape[1]
    if groups <= 0 or c % groups or tensor_type(op.results[0].type).dtype != xt.dtype:
        return False
    b = _Builder(op)
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
    rewriter.replace_op(op, [b.view(y, xt.shape, dtype)])
    return True


def _variance(op, rewriter, name: str) -> bool:
    x = op.operands[0]
    (xt,) = static_tensor_types(x) or [None]
    if xt is None:
        return False
    dims = _dims(op.operands[1], len(xt.shape))
    correction = constant_value(op.operands[2])  # .dim variants: `unbiased` (bool)
    keepdim = constant_value(op.operands[3])
    if dims is None or correction is NO_CONSTANT or not isinstance(keepdim, bool):
        return False
    if isinstance(correction, bool):
        correction = int(correction)
    correction = 1 if correction is None else correction
    n = math.prod(xt.shape[d] for d in dims)
    b = _Builder(op)
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
        out_shape = _reduced_shape(shape, dims, False)
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
    b = _Builder(op)
    shape, dtype = xt.shape, xt.dtype
    values, rshape = b.reduce("torch.aten.amax" if is_max else "torch.aten.amin", x, [dim], shape, dtype)
    index = "torch.aten.argmax" if is_max else "torch.aten.argmin"
    indices = b.op(index, [x, b.int(dim), b.bool(True)], rshape, "int64")
    results = [values, indices]
    if not keepdim:
        out_shape = _reduced_shape(shape, [dim], False)
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
    dims = _dims(op.operands[1], len(xt.shape))
    keepdim = constant_value(op.operands[2])
    out = tensor_type(op.results[0].type)
    if dims is None or not isinstance(keepdim, bool) or out.dtype != xt.dtype or any(xt.shape[d] == 0 for d in dims):
        return False
    b = _Builder(op)
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


PATTERNS = [
    ("torch.aten.softmax.int", decompose_softmax),
    ("torch.aten._softmax", decompose_softmax),
    ("torch.aten.log_softmax.int", decompose_softmax),
    ("torch.aten._log_softmax", decompose_softmax),
    ("torch.aten.layer_norm", decompose_layer_norm),
    ("torch.aten.native_layer_norm", decompose_layer_norm),
    ("torch.aten.rms_norm", decompose_rms_norm),
    ("torch.aten.var.correction", decompose_variance),
    ("torch.aten.std.correction", decompose_variance),
    ("torch.aten.var_mean.correction", decompose_variance),
    ("torch.aten.std_mean.correction", decompose_variance),
    ("torch.aten.var.dim", decompose_variance),
    ("torch.aten.std.dim", decompose_variance),
    ("torch.aten.var_mean.dim", decompose_variance),
    ("torch.aten.std_mean.dim", decompose_variance),
    ("torch.operator", decompose_operator),
    ("torch.aten.batch_norm", decompose_batch_norm),
    ("torch.aten.group_norm", decompose_group_norm),
    ("torch.aten.logsumexp", decompose_logsumexp),
    ("torch.aten.max.dim", decompose_max_dim),
    ("torch.aten.min.dim", decompose_max_dim),
]


@dataclasses.dataclass(frozen=True)
class Decompose(ModulePass):
    """Decompose softmax, log_softmax, layer_norm, native_layer_norm, rms_norm, group_norm, inference batch_norm, var/std(_mean), logsumexp and max/min.dim into keepdim reductions and elementwise ops.

    Ops with dynamic shapes or non-constant dims stay whole.
    """

    name = "fusion-decompose"

    def apply(self, module: ir.Operation, am=None) -> None:
        apply_patterns(module, PATTERNS)
