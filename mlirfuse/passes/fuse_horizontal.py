"""fusion-fuse-horizontal: two independent groups reading the same tensor become one (sibling fusion).

The merged kernel reads the shared input once and writes both groups'
results. Legal when neither depends on the other and the usual
iteration-space rules hold (`why_not_merge`, as for a producer whose
results all leave the group). A scatter group takes a pointwise sibling
before it over the scatter's index space (one kernel over the index,
storing the sibling's values beside the scattered ones). After each round
the vertical patterns run again (a merged sibling may now merge with its
consumer), until neither changes anything. Last, a group of 0-d values
reading no tensor any reduction group computes (a batch norm's
`num_batches_tracked + 1`) joins a reduction group as a store of row 0.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.dialect import REDUCTION_KINDS, GroupKind, group_kind
from mlirfuse.ir import ir, op_id
from mlirfuse.passes.base import ModulePass, function_level_ops
from mlirfuse.passes.fuse_vertical import FuseVertical, VerticalFuser
from mlirfuse.passes.legality import (
    FUSION_ANALYSES,
    is_fusible_group,
    is_scalar_group,
    why_not_merge,
    why_not_scalar_store,
)
from mlirfuse.passes.options import Limits, option_group, option_of

_GROUPS = frozenset(("fusion.group",))


def _is_scatter(op) -> bool:
    return op is not None and op.name == "fusion.group" and group_kind(op) == GroupKind.SCATTER


def fuse_siblings(fuser: VerticalFuser, listed: list) -> bool:
    """One round over every function: merge each pair of independent groups sharing an input; whether any merged.

    `listed` gets each function's groups as the round found them: still the groups where none merged.
    """
    merged = False
    rewriter, decisions = fuser.rewriter, fuser.decisions
    for ops in function_level_ops(fuser.module, _GROUPS):
        listed.append(ops)
        # Until the first merge in this function, the listing's order is the block's: a pair is in order, and
        # one that reads the other needs no search (nor the dependence analysis, computed when first asked).
        in_order = True
        # Ids are taken up front: a merged (erased) op must not be touched again.
        readers: dict[ir.Value, list] = {}
        for op in ops:
            if is_fusible_group(op) or _is_scatter(op):
                entry = (op_id(op), op)
                for v in dict.fromkeys(op.operands):  # ordered: deterministic merges
                    readers.setdefault(v, []).append(entry)
        done: set[int] = set()
        for groups in readers.values():
            for (first_id, first), (second_id, second) in zip(groups, groups[1:]):
                if first_id in done or second_id in done:
                    continue  # merged already this round; revisit next round
                # An earlier merge this round may have moved `first` (a dependent) past
                # `second`; the position-bounded checks need the pair in the current order.
                if not in_order and fuser.dep.position(first) > fuser.dep.position(second):
                    first, second = second, first
                near = _reaches_nearby(first, second) if in_order else None
                if near or (near is None and fuser.dep.reaches(first, second)) or _is_scatter(first):
                    continue  # (a scatter ends its group: it joins a sibling before it, as that one's consumer)
                dep = fuser.dep
                reason = why_not_merge(first, second, dep, fuser.limits, fuser.bodies)
                if reason is not None:
                    decisions.refused(first, second, reason, how="with sibling")
                    continue
                decisions.merged(first, second, how="with sibling")
                done.update((first_id, second_id))
                rewriter.merge(first, second, dep)
                merged = True
                in_order = False
    return merged


def _reaches_nearby(source, target, budget: int = 64) -> bool | None:
    """`DependenceAnalysis.reaches(source, target)` for two function-level ops, `source` first, answered by a
    search of the function-level ops downstream of `source` where it is small: None where the search would pass
    `budget` ops or meet an op in a nested region (whose effect on its parent it cannot follow).

    Most sibling pairs depend (an unrolled loop's steps all read its weights), and most through an op or two:
    no dependence analysis, no positions.
    """
    target_key = op_id(target)
    seen = set()
    stack = [source]
    while stack:
        for r in stack.pop().results:
            for use in r.uses:
                user = use.owner
                key = op_id(user)
                if key == target_key:
                    return True
                if key in seen:
                    continue
                if len(seen) == budget or user.operation.parent.name != "func.func":
                    return None
                seen.add(key)
                stack.append(user)
    return False


def fuse_scalar_stores(fuser: VerticalFuser, listed: list | None = None) -> bool:
    """Each 0-d pointwise group joins the first reduction group it neither feeds nor reads (`why_not_scalar_store`).

    `listed`: each function's groups, if current (else they are listed again).
    """
    for ops in function_level_ops(fuser.module, _GROUPS) if listed is None else listed:
        hosts = [op for op in ops if is_fusible_group(op) and group_kind(op) in REDUCTION_KINDS]
        if not hosts:
            continue  # no scalar to ask about
        for scalar in (op for op in ops if is_fusible_group(op) and is_scalar_group(op)):
            for host in hosts:
                reason = why_not_scalar_store(scalar, host, fuser.dep, fuser.limits, fuser.bodies)
                if reason is not None:
                    fuser.decisions.refused(scalar, host, reason, how="as a scalar store")
                    continue
                first, second = sorted((scalar, host), key=fuser.dep.position)
                fuser.decisions.merged(first, second, how="as a scalar store")
                fuser.rewriter.merge(first, second, fuser.dep)
                return True  # the merged group is a new op: the next round lists the groups again
    return False


@dataclasses.dataclass(frozen=True)
class FuseHorizontal(ModulePass):
    """Merge independent fusion.groups that read the same tensor into one group (one read, several results), then fuse vertically again; then put each 0-d pointwise group into an independent reduction group (stored once). Options: max-args, max-group-size (as fusion-fuse-vertical)."""

    name = "fusion-fuse-horizontal"

    limits: Limits = option_group(Limits)
    # As fusion-fuse-vertical's, for the vertical rounds (bench/compile_time.py).
    recompute_analyses: bool = option_of(FuseVertical, "recompute_analyses")

    preserves = FUSION_ANALYSES

    def apply(self, module: ir.Operation, am=None) -> None:
        fuser = VerticalFuser(module, am or AnalysisManager(), self.limits, self.recompute_analyses, self.name)
        changed = False
        listed: list = []
        while fuse_siblings(fuser, listed):
            fuser.run()
            changed = True
            listed = []
        # Last: a 0-d result would keep a reduction group from growing (legality's iteration spaces). The first
        # round takes the groups as the last sibling round (which merged none) listed them.
        while fuse_scalar_stores(fuser, listed):
            changed = True
            listed = None
        if changed:  # a merge may leave constants unread (a pass that merged nothing leaves the IR as it was)
            fuser.rewriter.erase_dead_constants(module)
