"""Checked launches (`MLIRFUSE_CHECK_BOUNDS=1`): every launch proves it stayed in bounds.

Two checks, so that an out-of-bounds access fails the launch that made it
instead of corrupting the process (or, on a GPU, writing somewhere silently):

- Guard regions (every device): each output is a view into the middle of a
  larger buffer whose ends hold a fixed byte pattern; after the launch the
  pattern must be intact.
- Address checks (the interpreter): while the kernel runs, every masked-in
  lane of a load must address an input's extent and every masked-in lane of
  a store an output's; the access is refused before it happens.
- Device asserts: a checked launch runs in Triton's debug mode, so an index
  computed in the kernel that leaves its table raises eager's exception
  (an index input is checked on the host before every launch).

A violation raises `KernelBoundsError` naming the kernel and the parameter.
"""

from __future__ import annotations

import dataclasses
import os
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from mlirfuse.errors import KernelBoundsError
from mlirfuse.lowering.indexing import INDEX_ASSERT

# What eager raises for an index out of range, by the name an indexing plan gives (ops/indexing.py).
INDEX_ERRORS = {"IndexError": IndexError, "RuntimeError": RuntimeError}

GUARD_BYTES = 256  # a multiple of 16: the output keeps its alignment


def enabled() -> bool:
    return os.environ.get("MLIRFUSE_CHECK_BOUNDS", "") not in ("", "0")


def _pattern(nbytes: int, device) -> torch.Tensor:
    # Not a value a kernel plausibly stores: bytes varying with their position.
    return (torch.arange(nbytes, device=device) * 73 + 41).remainder(256).to(torch.uint8)


def guarded_empty(shape, dtype: torch.dtype, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(an uninitialized output, the guarded buffer holding it at offset GUARD_BYTES)."""
    nbytes = torch.Size(shape).numel() * dtype.itemsize
    raw = _pattern(2 * GUARD_BYTES + -(-nbytes // 16) * 16, device)
    out = raw[GUARD_BYTES:GUARD_BYTES + nbytes].view(dtype).view(shape)
    return out, raw


def verify_guards(kernel: str, outputs: dict[str, torch.Tensor], guarded: list[torch.Tensor]) -> None:
    """Every byte of each buffer outside its output still holds the pattern."""
    for (param, out), raw in zip(outputs.items(), guarded):
        changed = raw != _pattern(raw.numel(), raw.device)
        end = GUARD_BYTES + out.numel() * out.element_size()
        for side, region in (("before", changed[:GUARD_BYTES]), ("after", changed[end:])):
            if region.any():
                raise KernelBoundsError(
                    f"kernel @{kernel} wrote outside its output {param}: {int(region.sum())} guard bytes {side} it changed"
                )


@dataclass(frozen=True)
class Extent:
    """The bytes a strided tensor can address: [lo, hi)."""

    param: str
    lo: int
    hi: int

    @staticmethod
    def of(param: str, t: torch.Tensor) -> "Extent":
        if t.numel() == 0:
            return Extent(param, t.data_ptr(), t.data_ptr())
        last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
        return Extent(param, t.data_ptr(), t.data_ptr() + (last + 1) * t.element_size())


def _check(kernel: str, what: str, extents: list[Extent], ptrs, mask) -> None:
    from triton.runtime.interpreter import _get_np_dtype

    addrs = ptrs.data
    if mask is not None:
        addrs = addrs[np.broadcast_to(mask.data, addrs.shape)]
    addrs = addrs.ravel().astype(np.int64)  # host addresses fit in 63 bits
    if addrs.size == 0:
        return
    itemsize = _get_np_dtype(ptrs.get_element_ty()).itemsize
    inside = np.zeros(addrs.shape, dtype=bool)
    for e in extents:
        inside |= (addrs >= e.lo) & (addrs + itemsize <= e.hi)
    if inside.all():
        return
    bad = int(addrs[~inside][0])
    near = min(extents, key=lambda e: min(abs(bad - e.lo), abs(bad - e.hi)), default=None)
    where = ""
    if near is not None:
        offset = (bad - near.lo) // itemsize
        where = f"; nearest is {near.param}, {near.hi - near.lo} bytes, and this is its element {offset}"
    raise KernelBoundsError(
        f"kernel @{kernel}: {int((~inside).sum())} masked-in lanes {what} outside "
        f"{', '.join(e.param for e in extents) or 'any tensor'}{where}"
    )


@contextmanager
def checked_addresses(kernel: str, reads: list[Extent], writes: list[Extent]):
    """Within: the interpreter refuses loads outside `reads` and stores outside `writes`."""
    from triton.runtime.interpreter import InterpreterBuilder
    from triton.runtime.interpreter import interpreter_builder as builder

    # The trailing arguments (cache policy, volatility, memory order) pass through as they come: their number
    # differs between Triton releases (3.6 gives the store one more than 3.9).
    def load(ptrs, mask, other, *rest):
        _check(kernel, "load from", reads, ptrs, mask)
        return InterpreterBuilder.create_masked_load(builder, ptrs, mask, other, *rest)

    def store(ptrs, value, mask, *rest):
        _check(kernel, "store to", writes, ptrs, mask)
        return InterpreterBuilder.create_masked_store(builder, ptrs, value, mask, *rest)

    def atomic_rmw(op, ptr, val, mask, *rest):
        _check(kernel, "update", writes, ptr, mask)
        return InterpreterBuilder.create_atomic_rmw(builder, op, ptr, val, mask, *rest)

    def atomic_cas(ptr, cmp, val, *rest):
        _check(kernel, "update", writes, ptr, None)
        return InterpreterBuilder.create_atomic_cas(builder, ptr, cmp, val, *rest)

    hooks = {
        "create_masked_load": load, "create_masked_store": store,
        "create_atomic_rmw": atomic_rmw, "create_atomic_cas": atomic_cas,
    }
    for name, hook in hooks.items():
        setattr(builder, name, hook)
    options = builder.options
    # tl.device_assert runs only in debug mode: a computed index's range check (lowering/indexing.py).
    # Integer overflow stays unchecked, as eager wraps.
    builder.options = dataclasses.replace(options, debug=True, sanitize_overflow=False)
    try:
        yield
    finally:
        builder.options = options
        for name in hooks:
            delattr(builder, name)


# A checked launch on a GPU compiles its device asserts in (a computed index's range check), overflow unchecked.
COMPILED_OPTIONS = {"debug": True, "sanitize_overflow": False}


def index_error(error: BaseException) -> BaseException | None:
    """Eager's exception for a computed index's failed range assert (the interpreter wraps it), else None."""
    for cause in _causes(error):
        if isinstance(cause, AssertionError) and str(cause).startswith(INDEX_ASSERT):
            kind, _, message = str(cause).removeprefix(INDEX_ASSERT).partition(": ")
            return INDEX_ERRORS.get(kind, IndexError)(message)
    return None


def unwrap(error: BaseException) -> BaseException:
    """The KernelBoundsError the interpreter wrapped (in an InterpreterError per call level), else `error`."""
    return next((cause for cause in _causes(error) if isinstance(cause, KernelBoundsError)), error)


def _causes(error: BaseException):
    """`error`, then what it was raised from, and so on (the interpreter wraps a kernel's error per call level)."""
    while error is not None:
        yield error
        error = error.__cause__
