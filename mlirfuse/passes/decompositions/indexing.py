"""Indexing ops as the gathers `mlirfuse/ops/indexing.py` fuses."""

from __future__ import annotations

import math

import numpy as np

from mlirfuse.ir import DTYPE_CODES, constant_value, ir, static_tensor_types
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


# The most bins a histogram is computed as a one-hot reduction for: each bin's row reads the whole input, so the
# reduction re-reads it once per bin where ATen's histc reads it once; an MoE router's expert count fits.
HISTC_MAX_BINS = 64


def why_not_histc(op) -> str | None:
    """Why `histc` (a `torch.operator`) stays an ATen call (None: it becomes a reduction, `decompose_histc`)."""
    x, bins, lo, hi = op.operands
    types = static_tensor_types(x)
    bins, lo, hi = constant_value(bins), constant_value(lo), constant_value(hi)
    if types is None or types[0].dtype != "float32" or not types[0].shape or math.prod(types[0].shape) == 0:
        return "histc of a tensor that is not a static non-empty float32 one (ATen bins in the input's dtype)"
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in (bins, lo, hi)):
        return "histc with bins or range not constant"
    if not 0 < bins <= HISTC_MAX_BINS:
        return f"histc of more than {HISTC_MAX_BINS} bins (a one-hot reduction re-reads its input once per bin)"
    if not np.float32(lo) < np.float32(hi):
        return "histc over the input's own range (min >= max: found at run time)"
    if _device(op) is _SEVERAL:
        return "histc in a function naming several devices (which one its bins' arange is on is not known)"
    return None


_SEVERAL = "several"


def _device(op) -> str | None:
    """The device the `torch.constant.device`s of `op`'s function all name, None where it names none (the default
    device), `_SEVERAL` where they differ. The bins' arange is created there (it is a kernel's, unless a policy vetoes)."""
    devices = {
        str(constant_value(each.results[0]))
        for each in op.operation.parent.regions[0].blocks[0].operations
        if each.operation.name == "torch.constant.device"
    }
    return None if not devices else devices.pop() if len(devices) == 1 else _SEVERAL


# Casts a histc input typically is (`expert_ids.float()`): viewed before the cast, the column view is of its operand.
_CASTS = ("torch.aten._to_copy", "torch.prims.convert_element_type", "torch.aten.to.dtype")


def _column(b: Builder, x, col):
    """`x` viewed as the column `col`; for a cast of a value that only the histc reads, the cast of its operand's
    column (a reduction kernel reads views of its inputs, not of values it computes)."""
    cast = x.owner
    if isinstance(cast, ir.OpView) and cast.operation.name in _CASTS and len(list(x.uses)) == 1:
        source = cast.operands[0]
        if (t := static_tensor_types(source)) is not None:
            return b.op(cast.operation.name, [b.view(source, col, t[0].dtype), *list(cast.operands)[1:]], col, "float32")
    return b.view(x, col, "float32")


def decompose_histc(op, rewriter) -> bool:
    """histc(x, bins, lo, hi) = sum over x of one-hot(bin(x)) over [N, bins], one reduction kernel; with its only
    reader a `cumsum` over the bins (an MoE's expert offsets), that cumsum is sum over x of (bin(x) <= b) instead.

    bin(x) is ATen's CPU histc (LINEAR_INTERPOLATION) in float32: trunc((x - lo) * bins / (hi - lo)), the last edge
    in the last bin, x outside [lo, hi] (or NaN) in none. Counts are summed as int64, exact, then converted.
    """
    if why_not_histc(op) is not None:
        return False
    x = op.operands[0]
    xt = static_tensor_types(x)[0]
    bins = constant_value(op.operands[1])
    lo, hi = (np.float32(constant_value(v)) for v in op.operands[2:])  # ATen's edges are in the input's dtype
    users = [u.owner for u in op.results[0].uses]
    scan = users[0] if len(users) == 1 and users[0].operation.name == "torch.aten.cumsum" else None
    if scan is not None and (constant_value(scan.operands[1]) not in (0, -1) or static_tensor_types(scan.results[0]) is None):
        scan = None
    # Elements down dim 0, bins along dim 1: the input's column view and the bins' arange broadcast into
    # [N, bins] with no view of a computed value (a reduction kernel reads views of its inputs only).
    n, col = math.prod(xt.shape), [math.prod(xt.shape), 1]
    b = Builder(op)
    x = _column(b, x, col)
    inside = b.op("torch.aten.logical_and", [b.op("torch.aten.ge.Scalar", [x, b.float(float(lo))], col, "bool"),
                                             b.op("torch.aten.le.Scalar", [x, b.float(float(hi))], col, "bool")], col, "bool")
    scaled = b.op("torch.aten.mul.Scalar", [b.op("torch.aten.sub.Scalar", [x, b.float(float(lo)), b.int(1)], col, "float32"),
                                            b.int(bins)], col, "float32")
    pos = b.convert(b.op("torch.aten.div.Scalar", [scaled, b.float(float(hi - lo))], col, "float32"), col, "int64")
    pos = b.op("torch.aten.clamp_max", [pos, b.int(bins - 1)], col, "int64")
    device = b.none() if _device(op) is None else b.device(_device(op))
    iota = b.op("torch.aten.arange", [b.int(bins), b.int(DTYPE_CODES["int64"]), b.none(), device,
                                      b.bool(False)], [bins], "int64")
    compare = "torch.aten.le.Tensor" if scan is not None else "torch.aten.eq.Tensor"
    hit = b.op("torch.aten.logical_and", [b.op(compare, [pos, iota], [n, bins], "bool"), inside], [n, bins], "bool")
    counts, _ = b.reduce("torch.aten.sum.dim_IntList", b.convert(hit, [n, bins], "int64"), [0], [n, bins], "int64")
    out = (static_tensor_types(scan.results[0]) if scan is not None else static_tensor_types(op.results[0]))[0]
    result = b.view(b.convert(counts, [1, bins], out.dtype), [bins], out.dtype)
    if scan is not None:
        rewriter.replace_op(scan, [result])
        rewriter.erase_op(op)
    else:
        rewriter.replace_op(op, [result])
    return True


def _lone_index(op):
    """(table, index) of `index.Tensor` `op` indexing dim 0 only by one static integer tensor; None otherwise."""
    items = op.operands[1].owner
    if not isinstance(items, ir.OpView) or items.operation.name != "torch.prim.ListConstruct" or len(items.operands) != 1:
        return None
    table, index = op.operands[0], items.operands[0]
    types = static_tensor_types(table, index, op.results[0])
    if types is None or not types[0].shape or types[1].dtype not in ("int64", "int32"):
        return None
    return table, index


def _gather(b: Builder, table, index, shape, dtype):
    return b.op("torch.aten.index.Tensor", [table, b.tensor_list([index])], shape, dtype)


@pattern
def view_of_gather(op, rewriter) -> bool:
    """view(x[i], [a, b, *rest]) = x[view(i, [a, b])] where the view only splits the gathered dim 0 (an MoE's
    per-token rows, `y[inv].view(tokens, k, d)`): a reduction kernel then reads the gather through an index that is
    a view of its input, not a view of a value it computes."""
    gather = op.operands[0].owner
    if not isinstance(gather, ir.OpView) or gather.operation.name != "torch.aten.index.Tensor" or len(list(op.operands[0].uses)) != 1:
        return False
    found = _lone_index(gather)
    types = static_tensor_types(op.results[0])
    if found is None or types is None:
        return False
    table, index = found
    (it, tt), rt = static_tensor_types(index, table), types[0]
    rest = tt.shape[1:]
    lead = rt.shape[: len(rt.shape) - len(rest)]
    if len(it.shape) != 1 or tuple(rt.shape[len(lead):]) != tuple(rest) or math.prod(lead) != it.shape[0]:
        return False
    b = Builder(op)
    rewriter.replace_op(op, [_gather(b, table, b.view(index, list(lead), it.dtype), rt.shape, rt.dtype)])
    _erase_gather(gather, rewriter)
    return True


def _erase_gather(gather, rewriter) -> None:
    """Erase `gather`, which nothing reads any more, and its list of indices if only it read that."""
    items = gather.operands[1].owner
    rewriter.erase_op(gather)
    if not list(items.results[0].uses):
        rewriter.erase_op(items)


# Binary arithmetic a gather is pushed through: x[i] * y[i] reads no computed table.
_GATHERED_ARITHMETIC = ("torch.aten.mul.Tensor", "torch.aten.add.Tensor", "torch.aten.sub.Tensor", "torch.aten.div.Tensor")


@pattern
def gather_of_arithmetic(op, rewriter) -> bool:
    """(x * y)[i] = x[i] * y[i] where x and y both span the gathered dim 0 (an MoE's expert outputs scaled by their
    routing weights, then gathered back per token): the gathers read kernel inputs, which reduction kernels take."""
    found = _lone_index(op)
    if found is None:
        return False
    table, index = found
    arith = table.owner
    if not isinstance(arith, ir.OpView) or arith.operation.name not in _GATHERED_ARITHMETIC or len(list(table.uses)) != 1:
        return False
    tt = static_tensor_types(table)[0]
    operands = list(arith.operands)
    tensors = operands[:2]
    types = static_tensor_types(*tensors)
    if types is None or any(len(t.shape) != len(tt.shape) or t.shape[0] != tt.shape[0] for t in types):
        return False
    ishape = tuple(static_tensor_types(index)[0].shape)
    b = Builder(op)
    gathered = [_gather(b, v, index, ishape + tuple(t.shape[1:]), t.dtype) for v, t in zip(tensors, types)]
    rt = static_tensor_types(op.results[0])[0]
    items = op.operands[1].owner
    rewriter.replace_op(op, [b.op(arith.operation.name, gathered + operands[2:], rt.shape, rt.dtype)])
    rewriter.erase_op(arith)
    if not list(items.results[0].uses):
        rewriter.erase_op(items)
    return True
