"""Group body facts: what fusion legality asks of a group's body, kept per group instead of re-walked.

Legality weighs a producer and a consumer by their bodies: how many ops
compute (what max-group-size counts), the first reduction and the first
scan, which op names occur. A fuser asks again for the same groups every
sweep, and a chain's consumer grows with each merge, so walking the bodies
per question made legality a sixth of the pipeline. Here a group's facts are
computed when first asked and kept until the group is erased; `merge` moves
the producer's body ops and then the consumer's into the new group, so its
facts are the two combined (`groups_merged`), without a walk.

Entries are keyed by `op_id` (see `mlirfuse.ir.op_id`). In checking mode
(`--verify-analyses`) every kept entry is recomputed from the IR after each
pass that preserves the analysis, and any difference is an error.
"""

from __future__ import annotations

from typing import NamedTuple

from mlirfuse.analysis import Analysis
from mlirfuse.ir import op_id
from mlirfuse.ops.reductions import REDUCTIONS
from mlirfuse.ops.scans import SCANS
from mlirfuse.ops.views import VIEW_OPS


class BodyFacts(NamedTuple):
    computing: int  # torch ops that compute (views and constants do not): what max-group-size counts
    first_reduction: object  # the body's first reduction op, or None
    first_scan: object  # the body's first scan op, or None
    names: frozenset  # the names of the body's ops, terminator included
    reduction_id: int | None  # op_id of first_reduction (compared in checking mode without touching the op)
    scan_id: int | None

    def key(self) -> tuple:
        """What two facts of one body agree on: everything but the op objects."""
        return self.computing, self.reduction_id, self.scan_id, self.names


def counts_as_computing(name: str) -> bool:
    """Does an op named `name` count towards a group's computing ops (max-group-size): an aten or prims op, not a view."""
    return name.startswith(("torch.aten.", "torch.prims.")) and name not in VIEW_OPS


def body_facts(group) -> BodyFacts:
    """`group`'s facts, in one pass over its body."""
    count, first_reduction, first_scan, names = 0, None, None, set()
    for op in group.regions[0].blocks[0].operations:
        name = op.operation.name
        names.add(name)
        if counts_as_computing(name):
            count += 1
        if first_reduction is None and name in REDUCTIONS:
            first_reduction = op
        if first_scan is None and name in SCANS:
            first_scan = op
    return BodyFacts(
        count, first_reduction, first_scan, frozenset(names),
        None if first_reduction is None else op_id(first_reduction), None if first_scan is None else op_id(first_scan),
    )


def _first(a, b):
    return a if a is not None else b


def combined(first: BodyFacts, second: BodyFacts) -> BodyFacts:
    """The facts of a body holding `first`'s ops, then `second`'s (one terminator for the two)."""
    return BodyFacts(
        first.computing + second.computing,
        _first(first.first_reduction, second.first_reduction),
        _first(first.first_scan, second.first_scan),
        first.names | second.names,
        _first(first.reduction_id, second.reduction_id),
        _first(first.scan_id, second.scan_id),
    )


class GroupBodies(Analysis):
    name = "group-bodies"

    def __init__(self, anchor):
        self.anchor = anchor
        self.facts: dict[int, BodyFacts] = {}

    @classmethod
    def compute(cls, anchor) -> "GroupBodies":
        """Nothing up front: a group's facts are computed when first asked (`of`)."""
        return cls(anchor)

    def of(self, group) -> BodyFacts:
        """`group`'s facts, kept from an earlier question or a merge, else computed now."""
        key = op_id(group)
        facts = self.facts.get(key)
        if facts is None:
            facts = self.facts[key] = body_facts(group)
        return facts

    # -- notifications (see RewriteListener) ---------------------------------

    def groups_merged(self, producer, consumer, group) -> None:
        p, c = self.facts.get(op_id(producer)), self.facts.get(op_id(consumer))
        if p is not None and c is not None:
            self.facts[op_id(group)] = combined(p, c)

    def op_erased(self, op) -> None:
        """Forget `op` before it is erased (its address may be reused); only groups have facts."""
        if op.operation.name == "fusion.group":
            self.facts.pop(op_id(op), None)

    # -- checking ------------------------------------------------------------

    def diff(self, fresh: "GroupBodies") -> list[str]:
        """Every kept entry against its group's body as it is now (`fresh` is empty: the facts are lazy)."""
        live = {op_id(op): op for op in _function_groups(self.anchor)}
        problems = []
        stale = [key for key in self.facts if key not in live]
        if stale:
            problems.append(f"{len(stale)} entries for groups no longer in the IR")
        for key, facts in self.facts.items():
            if key in live and facts.key() != (now := body_facts(live[key])).key():
                problems.append(f"group #{_index(live, key)}: kept {_show(facts)}, but its body has {_show(now)}")
        return problems


def _show(facts: BodyFacts) -> str:
    return (f"{facts.computing} computing ops, reduction {facts.reduction_id is not None}, "
            f"scan {facts.scan_id is not None}, ops {sorted(facts.names)}")


def _index(live: dict, key: int) -> int:
    return list(live).index(key)


def _function_groups(anchor) -> list:
    groups = []
    for func in anchor.regions[0].blocks[0].operations:
        if func.operation.name == "func.func" and len(func.regions[0].blocks):
            groups += [op for op in func.regions[0].blocks[0].operations if op.operation.name == "fusion.group"]
    return groups


__all__ = ["BodyFacts", "GroupBodies", "body_facts", "combined", "counts_as_computing"]
