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

Written back in place: an argument the caller overwrites with a result after
each call (`written_back`: a mutated buffer, such as batch norm's running
stats, which AOTAutograd's runtime or `mlirfuse.compile` copies the result
into) may take that result from the launch computing it, when the kernel
allows the pair and no later step, other result or view reads the argument:
it is read by this step alone, once, not returned, shares its buffer with no
other value, and the result is returned once and has no view. The caller's
copy then finds the result in its own tensor and moves nothing (ATen's
`copy_` returns early when source and destination are the same data);
`Plan.stored_in_place` names those results. `MLIRFUSE_NO_REUSE=1` turns it
off too.

Reuse across values (`take`): a launch's output that has no input to write
over takes the buffer of a value that died at an earlier step, when the two
have the same bytes and dtype (Inductor's buffer reuse; XLA's buffer
assignment). The dead value must be a launch's result that shares its buffer
with no other value, as for in place; `Program.run` keeps its tensor aside
instead of dropping it, and hands it to the launch as that output. Holding a
dead buffer until it is taken could raise the peak (the allocator might have
given its memory to something else in between): where the planned peak with
these takes is above the peak without them, no buffer is taken. The same
switch turns it off.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from mlirfuse.analysis.cost import bytes_text

# How many of the most recently freed buffers of an output's bytes and dtype `_takes` tries (planning stays linear).
TAKE_CANDIDATES = 8


@dataclass(frozen=True)
class Plan:
    release_at_start: list[int]  # argument slots no step reads
    release_after: list[list[int]]  # per step: the slots whose last use it is
    planned_peak_bytes: int | None  # None where a size is only known at call time
    peak_step: int | None  # the step during which the peak is live
    allocated_bytes: int | None  # all intermediates' bytes allocated per call
    reuse: dict[int, dict[int, int]] = field(default_factory=dict)  # step -> {output: argument it is written over}
    take: dict[int, dict[int, int]] = field(default_factory=dict)  # step -> {output: dead slot whose buffer it takes}
    kept: frozenset = frozenset()  # the dead slots whose tensors are kept until a later step takes their buffer
    stored_in_place: frozenset = frozenset()  # the positions of `written_back` results launches store in their argument


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
    steps, returns, num_args: int, num_slots: int, slot_bytes: dict[int, int | None], reuse: bool = True,
    slot_dtypes: dict[int, str] | None = None, written_back: dict[int, int] | None = None,
) -> Plan:
    """The release points, in-place outputs, taken buffers and planned peak of `steps` (runtime.program.Step)
    returning `returns`.

    `slot_bytes`: the bytes a step's result slot allocates (absent for non-tensors; None when its
    size is dynamic). `slot_dtypes`: its tensor's dtype; a slot without one neither gives nor takes a buffer.
    `written_back`: result position -> the argument slot the caller copies that result into after the call.
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
    owner = buffers(steps, num_slots)
    targets = _write_back_targets(returns, written_back or {}, owner)
    in_place = _in_place(steps, last, owner, num_args, targets) if reuse else {}
    into = {steps[i].outs[j]: steps[i].args[position][1]
            for i, taken in in_place.items() for j, position in taken.items() if steps[i].args[position][1] < num_args}
    stored = frozenset(p for p, s in (written_back or {}).items() if returns[p][0] == "slot" and into.get(returns[p][1]) == s)
    peak = _peak(steps, last, slot_bytes, owner, in_place)
    take = {}
    if reuse and peak[0] is not None:
        take = _takes(steps, last, owner, num_args, in_place, release_after, slot_bytes, slot_dtypes or {}, peak[3])
        if take:
            taking = _peak(steps, last, slot_bytes, owner, in_place, take)
            assert taking[0] <= peak[0], "a taken buffer raised the planned peak"
            peak = taking
    kept = frozenset(s for taken in take.values() for s in taken.values())
    return Plan(release_at_start, release_after, *peak[:3], in_place, take, kept, stored)


def _shares_operand(step) -> bool:
    """Whether a step's results share a buffer with its operands instead of allocating one."""
    return step.view or step.kind == "list" or step.in_place


def buffers(steps, num_slots: int) -> list[int]:
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


def _sharing(owner: list[int]) -> dict[int, int]:
    """Buffer -> how many slots hold it."""
    sharing: dict[int, int] = {}
    for b in owner:
        sharing[b] = sharing.get(b, 0) + 1
    return sharing


def _launched(steps) -> set[int]:
    return {s for step in steps if step.kind == "launch" for s in step.outs}


def _write_back_targets(returns, written_back: dict[int, int], owner: list[int]) -> dict[int, int]:
    """Result slot -> the argument slot the caller copies it into, for results returned once, with no view,
    each into an argument no other result is copied into."""
    sharing = _sharing(owner)
    returned: dict[int, int] = {}
    for arg in returns:
        for s in slot_uses(arg):
            returned[s] = returned.get(s, 0) + 1
    into = list(written_back.values())
    return {
        returns[p][1]: s for p, s in written_back.items()
        if returns[p][0] == "slot" and returned[returns[p][1]] == 1 and owner[returns[p][1]] == returns[p][1]
        and sharing[returns[p][1]] == 1 and into.count(s) == 1
    }


def _in_place(steps, last: list[int], owner: list[int], num_args: int,
              targets: dict[int, int]) -> dict[int, dict[int, int]]:
    """Per launch step, the outputs written over a dying input, or stored in the argument the caller copies
    them into (`targets`: result slot -> argument slot): {output index: argument position}."""
    launched, sharing = _launched(steps), _sharing(owner)
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
            fresh = s >= num_args and s in launched
            written_back = s < num_args and targets.get(step.outs[j]) == s
            if (fresh or written_back) and last[s] == i and reads.count(s) == 1 and owner[s] == s and sharing[s] == 1:
                taken[j] = position
        if taken:
            chosen[i] = taken
    return chosen


def _takes(steps, last: list[int], owner: list[int], num_args: int, in_place: dict, release_after: list[list[int]],
           slot_bytes: dict[int, int | None], slot_dtypes: dict[int, str], live: list[int]) -> dict[int, dict[int, int]]:
    """Per launch step, the outputs that take a dead value's buffer: {output index: dead slot}.

    A dead value gives its buffer when it is a launch's result holding its buffer alone and not written over
    in place; the most recently freed buffer of the output's bytes and dtype is taken first, and only where
    keeping it aside from its death to this step keeps the bytes live at every step in between (`live`, updated
    here) within the peak.
    """
    launched, sharing = _launched(steps), _sharing(owner)
    written = {steps[i].args[p][1] for i, taken in in_place.items() for p in taken.values()}
    peak = max(live, default=0)
    free: dict[tuple, list[int]] = {}  # (bytes, dtype) -> dead slots whose buffers nobody took yet
    chosen: dict[int, dict[int, int]] = {}
    for i, step in enumerate(steps):
        if step.kind == "launch":
            taken = {}
            for j, out in enumerate(step.outs):
                key = (slot_bytes.get(out), slot_dtypes.get(out))
                if j in in_place.get(i, {}) or not free.get(key):
                    continue
                for k in range(len(free[key]) - 1, max(len(free[key]) - TAKE_CANDIDATES, 0) - 1, -1):
                    gap = range(last[free[key][k]] + 1, i)
                    if all(live[g] + key[0] <= peak for g in gap):
                        for g in gap:
                            live[g] += key[0]
                        taken[j] = free[key].pop(k)
                        break
            if taken:
                chosen[i] = taken
        for s in release_after[i]:
            key = (slot_bytes.get(s), slot_dtypes.get(s))
            if (s >= num_args and s in launched and s not in written and owner[s] == s and sharing[s] == 1
                    and last[s] == i and None not in key and key[0] > 0):
                free.setdefault(key, []).append(s)
    return chosen


def _peak(steps, last: list[int], slot_bytes: dict[int, int | None], owner: list[int], in_place: dict,
          take: dict | None = None) -> tuple:
    """The largest sum of allocated intermediate bytes live during one step, that step, all bytes allocated,
    and the bytes live during each step (all None where a size is dynamic).

    An output written in place over an input is that input's buffer, alive until the later of their last uses;
    an output taking a dead value's buffer is that buffer, alive (kept aside) from the dead value's birth on.
    """
    written_over: dict[int, int] = {}  # output buffer -> the buffer it is written in (steps in order: chains resolve)
    for i in sorted({*in_place, *(take or {})}):
        for j, position in in_place.get(i, {}).items():
            buffer = owner[steps[i].args[position][1]]
            written_over[steps[i].outs[j]] = written_over.get(buffer, buffer)
        for j, s in (take or {}).get(i, {}).items():
            written_over[steps[i].outs[j]] = written_over.get(owner[s], owner[s])
    owner = [written_over.get(b, b) for b in owner]
    born: dict[int, tuple[int, int]] = {}  # buffer -> (step allocating it, bytes)
    for i, step in enumerate(steps):
        if step.kind not in ("launch", "aten", "call") or _shares_operand(step):
            continue
        for s in step.outs:
            size = slot_bytes.get(s, 0)
            if size is None:
                return None, None, None, None
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
    peak, peak_step, live, profile = 0, None, 0, []
    for i in range(len(steps)):
        live += delta[i]
        inner = steps[i].inner_peak  # a call's callee: its intermediates live during the call step
        if inner is None:
            return None, None, None, None
        profile.append(live + inner)
        if live + inner > peak:
            peak, peak_step = live + inner, i
    return peak, peak_step, sum(size for _, size in born.values()), profile
