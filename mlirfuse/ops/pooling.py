"""Pooling ops mlirfuse fuses, as data: windowed reductions computed per output element.

(Nearest upsampling is here too: a window of one position at a computed
source index, `upsample`.)

`max_pool*d` (with or without indices), `avg_pool*d`, `adaptive_avg_pool*d`
and `adaptive_max_pool*d` over the last 1, 2 or 3 dims. Each output element
reduces its window of the input: in a pointwise kernel the op's value at the
output coordinates is a loop over the window, one masked load per position
at a computed address, combined as eager's CPU kernels combine (max: a value
replaces the running one when greater or NaN, its flat index with it, so
the first maximum and the last NaN win; avg: summed in window order in f32
(f64 for f64), divided by eager's count). Adaptive windows vary per output
index (start = o*I // O, end = ceil((o+1)*I / O)): the loop runs over the
largest window, masked beyond each one's end.

The input is read at any place by any lane: it is a kernel input (or a
view chain of one) read through its own strides, or a pointwise *window
prologue* (elementwise ops of kernel inputs that only pools read, see
`window_ops`) recomputed at each window position, as Inductor inlines
pointwise producers into its pooling loops. The output joins pointwise
consumers as any value does. `pool(op)` describes a fusible pool or says
why it is not; the Triton side is `mlirfuse.lowering.pooling`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from mlirfuse.ir import constant_int_list, constant_value, op_id, tensor_type, torch_name
from mlirfuse.ops.dtypes import FLOAT_DTYPES
from mlirfuse.ops.elementwise import RULES
from mlirfuse.ops.family import Family

# name -> (combine, spatial dims, adaptive, argument layout after the input)
_WINDOWED_MAX = ("kernel", "stride", "padding", "dilation", "ceil_mode")
POOLS = {
    **{f"torch.aten.max_pool{n}d": ("max", n, False, _WINDOWED_MAX) for n in (1, 2, 3)},
    **{f"torch.aten.max_pool{n}d_with_indices": ("max", n, False, _WINDOWED_MAX) for n in (1, 2, 3)},
    "torch.aten.avg_pool1d": ("avg", 1, False, ("kernel", "stride", "padding", "ceil_mode", "count_include_pad")),
    **{
        f"torch.aten.avg_pool{n}d": ("avg", n, False, ("kernel", "stride", "padding", "ceil_mode", "count_include_pad", "divisor"))
        for n in (2, 3)
    },
    **{f"torch.aten.adaptive_avg_pool{n}d": ("avg", n, True, ("output_size",)) for n in (1, 2, 3)},
    **{f"torch.aten._adaptive_avg_pool{n}d": ("avg", n, True, ("output_size",)) for n in (2, 3)},
    **{f"torch.aten.adaptive_max_pool{n}d": ("max", n, True, ("output_size",)) for n in (1, 2, 3)},
}


UPSAMPLES = {f"torch.aten.upsample_nearest{n}d.vec": n for n in (1, 2, 3)}
# Ops that read their input (operand 0) at computed places only: a window prologue may feed them.
WINDOWED = frozenset(POOLS) | frozenset(UPSAMPLES)


@dataclass(frozen=True)
class Pool:
    """A pool over the last `len(kernel)` dims of `shape`.

    Fixed windows: output o along a spatial dim reads input o*stride - padding
    + k*dilation for k < kernel. Adaptive windows (`adaptive`): o reads
    [o*I // O, ceil((o+1)*I / O)); `kernel` is then the largest window.
    """

    combine: str  # "max" | "avg"
    shape: tuple[int, ...]  # the input's
    out: tuple[int, ...]  # the output's
    kernel: tuple[int, ...]
    stride: tuple[int, ...] = ()
    padding: tuple[int, ...] = ()
    dilation: tuple[int, ...] = ()
    adaptive: bool = False
    count_include_pad: bool = True
    divisor: int | None = None

    @property
    def spatial(self) -> int:
        return len(self.kernel)


def _expand(values, n: int, what: str) -> tuple[int, ...] | str:
    if values is None:
        return f"{what} is not a list of constant ints"
    if len(values) == 1:
        values = values * n
    if len(values) != n:
        return f"{what} has {len(values)} entries for {n} spatial dims"
    return tuple(values)


def pooled_size(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """The output size along one dim, as eager's `pooling_output_shape` computes it."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def adaptive_window(o: int, size: int, out: int) -> tuple[int, int]:
    """[start, end) of output index `o`'s window along a dim of `size` pooled to `out`."""
    return o * size // out, -(-(o + 1) * size // out)


def pool(op) -> Pool | str:
    """The plan of a fusible pool, or why it is not fusible."""
    combine, n, adaptive, layout = POOLS[op.operation.name]
    x = tensor_type(op.operands[0].type)
    results = [tensor_type(r.type) for r in op.results]
    if x is None or not x.is_static or any(r is None or not r.is_static for r in results):
        return "input or result is not a statically shaped tensor"
    if x.dtype not in FLOAT_DTYPES:
        return f"pools {x.dtype} (fused for floating dtypes)"
    if len(x.shape) not in (n + 1, n + 2) or not all(x.shape[-n:]):
        return f"input is not a non-empty {n + 1}-d or {n + 2}-d tensor"
    if len(results) > 1 and results[1].dtype != "int64":
        return "indices are not int64"
    out = results[0].shape
    args = dict(zip(layout, op.operands[1:]))
    sizes = x.shape[-n:]
    if adaptive:
        wanted = _expand(constant_int_list(args["output_size"]), n, "output_size")
        if isinstance(wanted, str):
            return wanted
        if tuple(out[-n:]) != wanted or any(o <= 0 for o in wanted):
            return "result shape is not the output_size"
        kernel = tuple(max(e - s for s, e in (adaptive_window(o, i, w) for o in range(w))) for i, w in zip(sizes, wanted))
        plan = Pool(combine, x.shape, out, kernel, adaptive=True)
    else:
        kernel = _expand(constant_int_list(args["kernel"]), n, "kernel_size")
        stride = constant_int_list(args["stride"])
        stride = kernel if stride == [] else _expand(stride, n, "stride")
        padding = _expand(constant_int_list(args["padding"]), n, "padding")
        dilation = _expand(constant_int_list(args["dilation"]), n, "dilation") if "dilation" in args else (1,) * n
        for what in (kernel, stride, padding, dilation):
            if isinstance(what, str):
                return what
        flags = {k: constant_value(args[k]) for k in ("ceil_mode", "count_include_pad") if k in args}
        if any(not isinstance(v, bool) for v in flags.values()):
            return "ceil_mode or count_include_pad is not a constant bool"
        divisor = constant_value(args["divisor"]) if "divisor" in args else None
        if divisor is not None and (isinstance(divisor, bool) or not isinstance(divisor, int) or divisor == 0):
            return "divisor_override is not a constant nonzero int"
        if min(kernel + stride + dilation) < 1 or min(padding) < 0 or any(2 * p > k for p, k in zip(padding, kernel)):
            return "kernel, stride, dilation or padding out of range"
        expected = tuple(pooled_size(*a, flags["ceil_mode"]) for a in zip(sizes, kernel, stride, padding, dilation))
        if tuple(out[-n:]) != expected:
            return "result shape is not the one the window gives"
        plan = Pool(combine, x.shape, out, kernel, stride, padding, dilation,
                    count_include_pad=flags.get("count_include_pad", True), divisor=divisor)
    if tuple(out[:-n]) != tuple(x.shape[:-n]) or any(tuple(r.shape) != tuple(out) for r in results):
        return "result shape is not the input's outside the pooled dims"
    return plan


@dataclass(frozen=True)
class Upsample:
    """Nearest upsampling of the last `len(scales)` dims: output o reads min(floor(o * scale), size - 1), in f32 as eager."""

    shape: tuple[int, ...]  # the input's
    out: tuple[int, ...]
    scales: tuple[float, ...]  # f32 values


def _f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _constant_list(value):
    """The constants of a list construct; None for `none`; NO_LIST otherwise."""
    if constant_value(value) is None:
        return None
    owner = value.owner
    if getattr(owner, "name", None) != "torch.prim.ListConstruct":
        return "no list"
    return [constant_value(v) for v in owner.operands]


def upsample(op) -> Upsample | str:
    """The plan of a fusible nearest upsampling, or why it is not fusible."""
    n = UPSAMPLES[op.operation.name]
    x, result = tensor_type(op.operands[0].type), tensor_type(op.results[0].type)
    if x is None or not x.is_static or result is None or not result.is_static:
        return "input or result is not a statically shaped tensor"
    if x.dtype not in FLOAT_DTYPES:
        return f"upsamples {x.dtype} (fused for floating dtypes)"
    if len(x.shape) != n + 2 or tuple(result.shape[:2]) != tuple(x.shape[:2]) or not all(x.shape[2:]):
        return f"input is not a non-empty {n + 2}-d tensor like the result outside the upsampled dims"
    factors = _constant_list(op.operands[2])
    if factors is not None and (factors == "no list" or len(factors) != n or not all(isinstance(f, (int, float)) for f in factors)):
        return "scale_factors are not constant numbers"
    scales = []
    for i, (size, out) in enumerate(zip(x.shape[2:], result.shape[2:])):
        # eager (area_pixel_compute_scale): 1 / factor where one is given, else input size / output size, in f32
        given = None if factors is None else float(factors[i])
        scales.append(_f32(1.0 / given) if given is not None and given > 0 else _f32(float(size) / float(out)))
    return Upsample(tuple(x.shape), tuple(result.shape), tuple(scales))


def why_not_fusible(op) -> str | None:
    """None if the pool or upsampling `op` can join a group; otherwise the reason."""
    plan = pool(op) if op.operation.name in POOLS else upsample(op)
    return plan if isinstance(plan, str) else None


def window_ops(block) -> set[int]:
    """The elementwise ops of a group body (by `op_id`) computed for pools' windows only: all their uses are
    pools' inputs or other such ops. The lowering recomputes them at each window position, never at the lanes."""
    window: set[int] = set()
    for op in reversed(list(block.operations)):
        if torch_name(op) not in RULES or len(op.results) != 1:
            continue
        uses = list(op.results[0].uses)
        if uses and all(
            (u.owner.operation.name in WINDOWED and u.operand_number == 0) or op_id(u.owner.operation) in window for u in uses
        ):
            window.add(op_id(op.operation))
    return window


__all__ = [
    "POOLS", "Pool", "UPSAMPLES", "Upsample", "WINDOWED", "adaptive_window", "pool", "pooled_size", "upsample",
    "window_ops", "why_not_fusible", "FAMILY",
]


FAMILY = Family(
    __name__, WINDOWED, why_not_fusible, fused=WINDOWED, pure=WINDOWED, lowering="mlirfuse/lowering/pooling.py",
    limits="static shapes, floating dtypes, windows over the last 1, 2 or 3 dims with constant sizes",
)
