"""Triton lines for the pools of `mlirfuse.ops.pooling`: one loop over each output element's window.

    acc = identity (max: -inf and eager's first window index; avg: 0)
    for k0 in range(K0):              # one loop per pooled dim
        for k1 in range(K1):
            h = base0 + k0 * dilation0    # (adaptive: start0 + k0, valid below end0)
            w = ...
            v = load(in + n * st0 + c * st1 + h * st2 + w * st3, mask=lanes & inside)
            acc = where(inside & (v > acc | v != v), v, acc); idx = ... (max)
            acc = acc + v                                           (avg)
    value = acc (max) | acc / eager's count (avg)

The input is a table site (its own strides, see `indexing_sites`); the
coordinates of the output come from the schedule (`result_coord`), so the
same lines serve any `IndexingEmitter`.
"""

from __future__ import annotations

import math

from mlirfuse.ir import is_constant_like, tensor_type
from mlirfuse.lowering.emitter import Site, Value, cast
from mlirfuse.ops.dtypes import TRITON_DTYPES
from mlirfuse.ops.elementwise import compute_dtype
from mlirfuse.ops.pooling import pool, upsample


def emit_pool(em, op) -> list[Value]:
    """The pool `op`'s results (values, and indices for max pools that have them) at the lanes' output coordinates."""
    plan = pool(op)
    out, n = plan.out, plan.spatial
    rank = len(out)
    dtype = tensor_type(op.operands[0].type).dtype
    acc_dtype = "float64" if dtype == "float64" else "float32"
    block = em.block_shape()
    sizes = plan.shape[-n:]
    coord = [em.result_coord(out, d) for d in range(rank)]
    with_indices = len(op.results) > 1 and any(True for _ in op.results[1].uses)

    # Per pooled dim: where the window starts (and, adaptive, ends) for each lane.
    starts, ends = [], []
    for i in range(n):
        o = coord[rank - n + i]
        if plan.adaptive:
            size, count = sizes[i], out[rank - n + i]
            starts.append(em.tmp(f"({o} * {size}) // {count}", "int32", f"window start along dim {rank - n + i}").text)
            ends.append(em.tmp(f"(({o} + 1) * {size} + {count - 1}) // {count}", "int32", "window end").text)
        else:
            start = f"{o} * {plan.stride[i]}" + (f" - {plan.padding[i]}" if plan.padding[i] else "")
            starts.append(em.tmp(start, "int32", f"window start along dim {rank - n + i}").text)
    identity = 'float("-inf")' if plan.combine == "max" else "0"
    acc = em.tmp(f"tl.full({block}, {identity}, {TRITON_DTYPES[acc_dtype]})", acc_dtype, f"{plan.combine} over the window")
    idx = None
    if with_indices:  # eager starts at the window's first position inside the input
        first = []
        for i in range(n):
            s = starts[i]
            if not plan.adaptive and plan.padding[i]:  # the first position k * dilation past the left pad
                d = plan.dilation[i]
                s = f"tl.maximum({s}, 0)" if d == 1 else f"tl.where({s} < 0, {s} + ((-{s} + {d - 1}) // {d}) * {d}, {s})"
            first.append(s)
        idx = em.tmp(f"({_flat(first, sizes)}).to(tl.int64)", "int64", "index of the first position inside the input")

    saved, em.out = em.out, []
    pos, inside = [], [em.lane_mask(out)]
    for i in range(n):
        k = f"k{i}"
        if plan.adaptive:
            pos.append(f"({starts[i]} + {k})")
            inside.append(f"({pos[i]} < {ends[i]})")
        else:
            pos.append(f"({starts[i]} + {k} * {plan.dilation[i]})" if plan.dilation[i] != 1 else f"({starts[i]} + {k})")
            if plan.padding[i] or (plan.out[rank - n + i] - 1) * plan.stride[i] + (plan.kernel[i] - 1) * plan.dilation[i] >= sizes[i]:
                inside.append(f"({pos[i]} >= 0) & ({pos[i]} < {sizes[i]})")
    mask = em.tmp(" & ".join(inside), "bool", "lanes whose window position is inside the input")
    v = _window_value(em, op, coord[: rank - n] + pos, mask.text)
    v_acc = v.text if v.dtype == acc_dtype else f"{v.text}.to({TRITON_DTYPES[acc_dtype]})"
    if plan.combine == "max":  # eager: a value replaces the running one when greater or NaN
        take = em.tmp(f"{mask.text} & (({v_acc} > {acc.text}) | ({v_acc} != {v_acc}))", "bool", "greater, or NaN")
        em.out.append(f"{acc.text} = tl.where({take.text}, {v_acc}, {acc.text})")
        if idx is not None:
            em.out.append(f"{idx.text} = tl.where({take.text}, ({_flat(pos, sizes)}).to(tl.int64), {idx.text})")
    else:
        em.out.append(f"{acc.text} = {acc.text} + tl.where({mask.text}, {v_acc}, 0)")
    body, em.out = em.out, saved
    for i in range(n):
        em.out.append(f"{'    ' * i}for k{i} in range({plan.kernel[i]}):")
    em.out.extend("    " * n + line for line in body)

    if plan.combine == "max":
        value = acc
    elif plan.adaptive:  # eager: sum / kh / kw
        text = acc.text
        for i in range(n):
            text = f"{text} / ({ends[i]} - {starts[i]}).to({TRITON_DTYPES[acc_dtype]})"
        value = em.tmp(text, acc_dtype, op.operation.name)
    else:
        value = _average(em, plan, acc, starts, acc_dtype, op.operation.name)
    result_dtype = compute_dtype(dtype)
    if value.dtype != result_dtype:
        value = em.tmp(f"{value.text}.to({TRITON_DTYPES[result_dtype]})", result_dtype, "back to the compute dtype")
    return [value] + ([idx] if with_indices else [])


def emit_upsample(em, op) -> Value:
    """Nearest upsampling: the input (or its window prologue) at min(floor(o * scale), size - 1) along each upsampled dim."""
    plan = upsample(op)
    out, n = plan.out, len(plan.scales)
    at = [em.result_coord(out, d) for d in range(len(out))]
    for i, scale in enumerate(plan.scales):
        d = len(out) - n + i
        size = plan.shape[d]
        if size == 1:
            at[d] = f"{at[d]} * 0"
        elif scale != 1.0:  # floor of a non-negative f32 product, as eager's floorf
            at[d] = em.tmp(f"tl.minimum(({at[d]}.to(tl.float32) * {scale!r}).to(tl.int32), {size - 1})", "int32",
                           f"source index along dim {d}").text
    value = _window_value(em, op, at, em.lane_mask(out))
    dtype = tensor_type(op.results[0].type).dtype
    return value if value.dtype == compute_dtype(dtype) else em.tmp(f"{value.text}.to({TRITON_DTYPES[compute_dtype(dtype)]})",
                                                                    compute_dtype(dtype), "back to the compute dtype")


def _window_value(em, op, at: list[str], mask: str) -> Value:
    """The pool's input at input coordinates `at`: a load of the input, or its window prologue recomputed there."""
    x = op.operands[0]
    table = em.indexing.get((op.results[0], -1))
    if table is not None:
        return _load(em, table, tensor_type(x.type), at, mask, f"{op.operation.name}: {table.comment()}")
    memo: dict = {}

    def value(v):
        if is_constant_like(v):
            return None
        if v not in memo:
            site = em.indexing.get((v, "window"))
            if site is not None:
                memo[v] = _load(em, site, tensor_type(v.type), at, mask, f"window of {op.operation.name}: {site.comment()}")
            else:
                memo[v] = em.emit_op(v.owner, value)
        return memo[v]

    v, storage = value(x), tensor_type(x.type).dtype
    if compute_dtype(storage) != storage:  # eager pools the prologue's f16/bf16 result: rounded (ties as eager sees them)
        v = em.tmp(f"{cast(v, storage)}.to(tl.float32)", "float32", f"rounded to {storage}, as eager pools it")
    return v


def _load(em, site: Site, t, at: list[str], mask: str, comment: str) -> Value:
    """`site` (a value of type `t`, broadcast right-aligned into the pool's input) loaded at input coordinates `at`."""
    offset = len(at) - len(t.shape)
    terms = [f"{at[offset + j]} * {site.name}_st{j}" for j, size in enumerate(t.shape) if size != 1]
    return em.load(f"{site.name} + ({' + '.join(terms) or f'{at[-1]} * 0'})", t.dtype, comment, mask, other="0")


def _flat(pos: list[str], sizes) -> str:
    """Row-major flat index of `pos` over the pooled dims (eager's indices)."""
    return " + ".join(f"{p} * {math.prod(sizes[i + 1 :])}" if i < len(pos) - 1 else p for i, p in enumerate(pos))


def _average(em, plan, acc: Value, starts: list[str], acc_dtype: str, comment: str) -> Value:
    """acc divided as eager's avg_pool kernels divide: by divisor_override, the padded window or the valid part; 0 if empty."""
    n = plan.spatial
    sizes = plan.shape[-n:]
    lows, highs, padded = [], [], []
    for i in range(n):
        s, k, p = starts[i], plan.kernel[i], plan.padding[i]
        padded.append(f"(tl.minimum({s} + {k}, {sizes[i] + p}) - {s})")
        lows.append(f"tl.maximum({s}, 0)")
        highs.append(f"tl.minimum({s} + {k}, {sizes[i]})")
    nonempty = em.tmp(" & ".join(f"({lo} < {hi})" for lo, hi in zip(lows, highs)), "bool", "window meets the input")
    if plan.divisor is not None:
        count = f"tl.full({em.block_shape()}, {plan.divisor}, tl.int32)"
    elif plan.count_include_pad:
        count = " * ".join(padded)
    else:
        count = " * ".join(f"({hi} - {lo})" for lo, hi in zip(lows, highs))
    count = em.tmp(f"({count}).to({TRITON_DTYPES[acc_dtype]})", acc_dtype, "eager's divisor")
    return em.tmp(f"tl.where({nonempty.text}, {acc.text} / {count.text}, 0)", acc_dtype, comment)


__all__ = ["emit_pool"]
