"""Liveness of a Program's slots: when each value can be dropped, and the peak it plans for.

Computed once, when the program is built. `Program.run` drops its reference to
a slot's value right after the step that uses it last, so a value computed
early in a deep model is freed as soon as nothing later reads it, as eager
frees it (before this, every slot lived until the call returned).

Dropping a reference never frees memory something else still needs: a view
holds its base's storage, and the caller holds its own inputs, parameters and
buffers. What the plan must get right is only the last use of each slot:
every step argument (nested in lists too) counts, and returned slots (outputs,
mutated inputs and buffers written back after the call) are never dropped.

The planned peak counts the bytes of *intermediates*: results of launches and
of ATen ops that allocate. A view, a list unpack or an in-place op's result
shares its operand's buffer, so that buffer lives until the last use of any
value sharing it; inputs and constants are not counted (the caller owns them).

In place: a launch may write an output over an input that dies at it
(`reuse`), so the output takes no buffer of its own. The kernel says which
(output, input) pairs it allows (`Step.reusable`: plain pointwise, element k
from element k; runtime/kernels.in_place_pairs); the plan allows a pair only
when the input's value is a launch's result (a fresh contiguous buffer, never
an argument, parameter, buffer or constant), dies at this step (not read
again, not returned), shares its buffer with no other value (no view of it,
no in-place op on it) and is read once by the step. `MLIRFUSE_NO_REUSE=1`
turns it off (bisecting).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from mlirfuse.analysis.cost import bytes_text


@dataclass(frozen=True)
class Plan:
    release_at_start: list[int]  # argument slots no step reads
    release_after: list[list[int]]  # per step: the slots whose last use it is
    planned_peak_bytes: int | None  # None where a size is only known at call time
    peak_step: int | None  # the step during which the peak is live
    allocated_bytes: int | None  # all intermediates' bytes allocated per call
    reuse: dict[int, dict[int, int]] = field(default_factory=dict)  # step -> {output: argument it is written over}


def peak_text(plan: Plan, step_names: list[str]) -> str:
    """The planned peak of intermediates, the step it falls in, and the bytes allocated per call, in words."""
    if plan.planned_peak_bytes is None:
        return "sizes known only at call time"
    if plan.peak_step is None:
        return "0 bytes (no intermediates)"
    name = step_names[plan.peak_step].removeprefix("torch.")
    return (f"{bytes_text(plan.planned_peak_bytes)} during step {plan.peak_step + 1} of {len(step_names)} "
            f"({name}); {bytes_text(plan.allocated_bytes)} allocated per call")


def reuse_enabled() -> bool:
    """In-place reuse is on unless `MLIRFUSE_NO_REUSE` is set (to anything but "" or "0"): read when a program is built."""
    return os.environ.get("MLIRFUSE_NO_REUSE", "") in ("", "0")


def slot_uses(arg) -> list[int]:
    """The slots a step argument reads: ("slot", i), ("list", [...]) nested, or none for ("const", v)."""
    kind, v = arg
    if kind == "slot":
        return [v]
    if kind == "list":
        return [s for a in v for s in slot_uses(a)]
    return []


def plan(
    steps, returns, num_args: int, num_slots: int, slot_bytes: dict[int, int | None], reuse: bool = True
) -> Plan:
    """The release points, in-place outputs and planned peak of `steps` (runtime.program.Step) returning `returns`.

    `slot_bytes`: the bytes a step's result slot allocates (absent for non-tensors; None when its
    size is dynamic).
    """
    never = len(steps)  # the index past the last step: live to the end
    last = [-1] * num_slots
    for i, step in enumerate(steps):
        for arg in [*step.args, *step.kwargs.values()]:
            for s in slot_uses(arg):
                last[s] = i
        for s in step.outs:
            last[s] = max(last[s], i)  # a result nobody reads goes right after its step
    for arg in returns:
        for s in slot_uses(arg):
            last[s] = never
    release_after: list[list[int]] = [[] for _ in steps]
    release_at_start = []
    for s in range(num_slots):
        if last[s] == never:
            continue
        if last[s] < 0:
            if s < num_args:
                release_at_start.append(s)
            continue
        release_after[last[s]].append(s)
    owner = _buffers(steps, num_slots)
    in_place = _in_place(steps, last, owner, num_args) if reuse else {}
    return Plan(release_at_start, release_after, *_peak(steps, last, slot_bytes, owner, in_place), in_place)


def _shares_operand(step) -> bool:
    """Whether a step's results share a buffer with its operands instead of allocating one."""
    return step.view or step.kind == "list" or step.in_place


def _buffers(steps, num_slots: int) -> list[int]:
    """Each slot's buffer, named by the slot that allocated it: a sharing result joins its first operand's."""
    owner = list(range(num_slots))
    for step in steps:
        if _shares_operand(step):
            operands = [s for a in step.args for s in slot_uses(a)]
            if operands:
                for s in step.outs:
                    owner[_find(owner, s)] = _find(owner, operands[0])
    for s in range(num_slots):
        owner[s] = _find(owner, s)
    return owner


def _find(owner: list[int], s: int) -> int:
    while owner[s] != s:
        owner[s] = owner[owner[s]]
        s = owner[s]
    return s


def _in_place(steps, last: list[int], owner: list[int], num_args: int) -> dict[int, dict[int, int]]:
    """Per launch step, the outputs written over a dying input: {output index: argument position}."""
    launched = {s for step in steps if step.kind == "launch" for s in step.outs}
    sharing: dict[int, int] = {}
    for s, b in enumerate(owner):
        sharing[b] = sharing.get(b, 0) + 1
    chosen: dict[int, dict[int, int]] = {}
    for i, step in enumerate(steps):
        if not step.reusable:
            continue
        reads = [s for a in [*step.args, *step.kwargs.values()] for s in slot_uses(a)]
        taken: dict[int, int] = {}
        for j, position in step.reusable:
            if j in taken or position in taken.values() or step.args[position][0] != "slot":
                continue
            s = step.args[position][1]
            if (
                s >= num_args and s in launched and last[s] == i and reads.count(s) == 1
                and owner[s] == s and sharing[s] == 1
            ):
                taken[j] = position
        if taken:
            chosen[i] = taken
    return chosen


def _peak(steps, last: list[int], slot_bytes: dict[int, int | None], owner: list[int], in_place: dict) -> tuple:
    """The largest sum of allocated intermediate bytes live during one step, that step, and all bytes allocated.

    An output written in place over an input is that input's buffer, alive until the later of their last uses.
    """
    written_over: dict[int, int] = {}  # output buffer -> the buffer it is written in (steps in order: chains resolve)
    for i, taken in sorted(in_place.items()):
        for j, position in taken.items():
            buffer = owner[steps[i].args[position][1]]
            written_over[steps[i].outs[j]] = written_over.get(buffer, buffer)
    owner = [written_over.get(b, b) for b in owner]
    born: dict[int, tuple[int, int]] = {}  # buffer -> (step allocating it, bytes)
    for i, step in enumerate(steps):
        if step.kind not in ("launch", "aten") or _shares_operand(step):
            continue
        for s in step.outs:
            size = slot_bytes.get(s, 0)
            if size is None:
                return None, None, None
            if owner[s] == s:  # (a result slot, never an argument)
                born[s] = (i, size)
    dies: dict[int, int] = {}
    for s, end in enumerate(last):
        b = owner[s]
        if b in born:
            dies[b] = max(dies.get(b, -1), end)
    # Live during step i: born at or before i, last used at or after i (results nobody reads included).
    delta = [0] * (len(steps) + 2)
    for b, (start, size) in born.items():
        end = max(dies.get(b, start), start)
        delta[start] += size
        delta[min(end, len(steps)) + 1] -= size
    peak, peak_step, live = 0, None, 0
    for i in range(len(steps)):
        live += delta[i]
        if live > peak:
            peak, peak_step = live, i
    return peak, peak_step, sum(size for _, size in born.values())
