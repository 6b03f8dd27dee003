"""Peak bytes from the CPU allocator's own events: every allocation and free during a call, in order.

Shared by bench/memory.py and tests/test_memory.py. torch.profiler with
`profile_memory=True` records each allocation and free at its own time; an
op event's memory total would put a compiled region's allocations and frees
at the region's start, netting them out.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch._C._profiler import _EventType
from torch.profiler import ProfilerActivity, profile, record_function

BACKWARD = "mlirfuse.bench.backward"  # the record_function range that `Peaks.after_mark` starts at


@dataclass(frozen=True)
class Peaks:
    """Bytes above the level at the call's start: the most during the call, and the most from the mark on."""

    peak: int
    after_mark: int | None  # None: no mark was entered


def allocation_peaks(fn, mark: str = BACKWARD) -> Peaks:
    """The peaks of CPU bytes allocated and not yet freed during `fn()` (its result dropped after).

    `fn` may enter `record_function(mark)` (`backward_range()`): `after_mark` is the peak from then on,
    still counted from the call's start, so what the forward saved for the backward counts in it.
    """
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn()
    events, start, stack = [], None, list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.tag == _EventType.Allocation:
            events.append((node.start_time_ns, node.extra_fields.alloc_size))
        elif node.name == mark and (start is None or node.start_time_ns < start):
            start = node.start_time_ns
    live = peak = 0
    after = None if start is None else 0
    for time, size in sorted(events):
        live += size
        peak = max(peak, live)
        if start is not None and time >= start:
            after = max(after, live)
    del result
    return Peaks(peak, after)


def backward_range():
    """The range `allocation_peaks` measures `after_mark` from: `with backward_range(): loss.backward()`."""
    return record_function(BACKWARD)
