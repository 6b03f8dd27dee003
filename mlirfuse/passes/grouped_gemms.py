"""Grouped GEMMs: the GEMM groups fusion-fuse-matmul makes one kernel (one accumulator per GEMM).

GEMMs reading the same A (q/k/v projections, SwiGLU's gate and up, an
LSTM step's gate slices of x_t and of h) merge first (`merge_siblings`,
or built at once where every set merges whole: `siblings_at_once`,
`wrap_siblings_at_once`); then GEMM groups over one result space that one
group reads (`x @ W_ih + h @ W_hh`) merge, so that group can be their
common epilogue (`merge_for_epilogue`). At most `max-grouped` GEMMs per
kernel, no batch dims; `counts` keeps each group's (GEMMs, tile space).
"""

from __future__ import annotations

from typing import NamedTuple

from mlirfuse.dialect import GroupKind, group_kind
from mlirfuse.ir import defining_op, ir, op_id
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm
from mlirfuse.ops.views import CAT, VIEW_OPS
from mlirfuse.passes.base import unique_ops
from mlirfuse.passes.legality import why_not_merge
from mlirfuse.passes.legality_matmul import epilogue_certain, never_on_tiles
from mlirfuse.passes.options import Limits
from mlirfuse.passes.policy import current as current_policy
from mlirfuse.passes.rewriter import FusionRewriter


class SharedA(NamedTuple):
    """What a GEMM group must share with a sibling to be grouped."""

    a: ir.Value  # A's group input
    views: tuple  # ((name, args), ...) from it to A
    out: tuple
    k: int
    dtype: str


def shared_a(group, g: Gemm, steps: tuple) -> SharedA | None:
    """What GEMM group `group` must share with a sibling to be grouped; None if batched.

    `group` has just wrapped one GEMM `g`, the op before its yield, whose A
    it reads through the views `steps` ((name, args), first applied first)
    from a group input: the same views of the same input are the same A.
    """
    if g.batch:
        return None
    ops = group.regions[0].blocks[0].operations
    a = ops[len(ops) - 2].operands[g.a]
    for _ in steps:
        a = a.owner.operands[0]
    return SharedA(group.operands[ir.BlockArgument(a).arg_number], steps, g.out, g.k, g.dtype)


class Siblings(NamedTuple):
    """GEMMs sharing A that `merge_siblings` would merge, all of them: one group built at once (`wrap_siblings_at_once`)."""

    members: list  # each GEMM's ops as `_wrap` takes them (its operands' views, then the GEMM), in order
    space: tuple | None  # the tile space, as `merge_siblings` counts it
    keys: tuple  # the op_id of each member's GEMM
    gemm: Gemm  # the first member's
    readers: tuple  # each member's GEMM's `_readers`, asked when the plan was made (nothing changes while planning)
    # Each member's `wrapped_inputs` and the ops that move after the group, as asked when the plan was made;
    # None where they are to be asked as the group is built (see `siblings_at_once`).
    wrapped: list | None = None
    dependents: list | None = None


def siblings_at_once(matmuls: list, chains: list, a_steps: list, roots: list, walks, dep, limits: Limits, most: int):
    """The GEMMs of one block by shared A (`shared_a`'s key, from the unwrapped ops), if `merge_siblings` would
    merge every set of them whole; else None (then each is wrapped and merged pairwise, as before).

    Wrapping each GEMM and merging its siblings pairwise built and erased a
    group per GEMM (an unrolled LSTM: 8 GEMMs per step, 15 rewrites); this
    answers the same questions about the unwrapped GEMMs, and `wrap_siblings_at_once`
    builds each merged group once. Siblings none of which reads another
    (`dep.reaches`, the cycle) can only be refused by the limits and a
    fusion policy, asked here as `why_not_merge` would ask them: the sum of
    each merge's arguments grows with each sibling, so the last merge's is
    the largest. A GEMM result nobody reads (no extra result for it), a
    constant A, more than `most` siblings or a fusion policy: None.
    `roots`: where each GEMM's A walk stopped; `walks`: the pass's view walks of the GEMMs' operands, which
    answer each member's `wrapped_inputs` (nothing is erased while the plans are made).
    """
    if current_policy() is not None:
        return None
    by_key: dict = {}
    for i, ((op, g), views, steps, root) in enumerate(zip(matmuls, chains, a_steps, roots)):
        if g.batch:
            key = None
        else:
            if walks.constant_ops(root) is not None:
                return None
            key = SharedA(root, steps, g.out, g.k, g.dtype)
        by_key.setdefault(key if key is not None else ("batched", i), ([], key))[0].append((op, views, g))
    plans = []
    for members, key in by_key.values():
        space = None if key is None else (key.out, key.dtype)
        ops = [unique_ops([*[v for vs in views for v in vs], op]) for op, views, _ in members]
        keys = tuple(op_id(op) for op, _, _ in members)
        readers = tuple(_readers(op) for op, _, _ in members)
        if len(members) == 1:
            plans.append(Siblings(ops, space, keys, members[0][2], readers))
            continue
        if len(members) > most or (limits.max_group_size and len(members) > limits.max_group_size):
            return None
        if any(not owners for member in readers for _, owners in member):
            return None
        dependents = _dependents([op for op, _, _ in members], keys, readers, dep)
        if dependents is None:
            return None
        wrapped = [walks.wrapped(member) for member in ops]
        if len({v for inputs, _ in wrapped for v in inputs}) + len(members) > limits.max_args:
            return None
        plans.append(Siblings(ops, space, keys, members[0][2], readers, wrapped, dependents))
    return _asked_once(plans, matmuls)


def _asked_once(plans: list, matmuls: list) -> list:
    """`plans`, keeping what each read and moved when planned if building the plans before it changes neither, else
    without (asked again as each group is built).

    A plan before may have wrapped a GEMM whose result a member reads
    (that value is then the group's). With no GEMM result read by a
    member and no op moved by any plan, the earlier wraps only replace
    GEMMs and views before or outside a group's siblings: none reads them.
    """
    if any(plan.dependents for plan in plans if plan.dependents is not None):
        return [plan._replace(wrapped=None, dependents=None) for plan in plans]
    read = {v for plan in plans if plan.wrapped is not None for inputs, _ in plan.wrapped for v in inputs}
    if read and any(r in read for op, _ in matmuls for r in op.results):
        return [plan._replace(wrapped=None, dependents=None) for plan in plans]
    return plans


def _readers(op) -> tuple:
    """((result, ((reader, its op_id), ...)), ...): each result of `op` with the ops reading it, in use order."""
    found = []
    for r in op.results:
        owners = []
        for use in r.uses:
            owner = use.owner.operation
            owners.append((owner, op_id(owner)))
        found.append((r, tuple(owners)))
    return tuple(found)


def _dependents(gemms: list, keys: tuple, readers: tuple, dep) -> list | None:
    """The ops between the first of `gemms` and the last that read any but the last, in order (each merge of the
    pairwise chain moves them after its group); None if one of `gemms` reads another. `keys`: their op_ids,
    `readers`: their `_readers`."""
    last, last_id = gemms[-1], keys[-1]
    moved: dict = {}
    member_ids = set(keys)
    limit = dep.pos[last_id]
    for op, op_readers in zip(gemms[:-1], readers):
        if _read_after(op, op_readers, limit, dep):
            continue  # nothing between reads it, `last` does not
        between, cycle = dep.dependents_between(op, last)
        if cycle or any(op_id(d) in member_ids for d in between) or any(
            key == last_id for _, owners in op_readers for _, key in owners
        ):
            return None
        moved.update((op_id(d), d) for d in between)
    return sorted(moved.values(), key=dep.position)


def _read_after(op, readers: tuple, limit: float, dep) -> bool:
    """Is every reader of `op` (`readers`: its `_readers`) an op of its block positioned after `limit` (an anchor's
    position)? Then `dep.dependents_between(op, anchor)` finds no op between the two and no cycle, and the anchor
    does not read `op`: asked without the walk."""
    block, pos = op.operation.block, dep.pos
    for _, owners in readers:
        for owner, key in owners:
            if owner.block != block:
                return False
            position = pos.get(key)
            if position is None or position <= limit:
                return False
    return True


class Entry(NamedTuple):
    """One GEMM group `merge_for_epilogue` leaves, built at once (`pairs_at_once`, `epilogues_at_once`)."""

    plans: tuple  # the indices of its plans: one, or two merged (the first's last op first)
    wrapped: list  # each plan's members' `wrapped_inputs`, asked when planned
    consumer: object = None  # the group merged in as its epilogue, built in with it
    consumer_key: int | None = None  # its op_id, taken when planned
    # (plan position in `plans`, member, input index, consumer_key, result number) of each input that is a result
    # of a consumer built in before: the value is then the group's, put in as the entries are built.
    stale: tuple = ()


def pairs_at_once(plans: list, walks, dep, limits: Limits, most: int) -> list | None:
    """The GEMM groups `merge_for_epilogue` leaves of `plans` (`siblings_at_once`'s), as `Entry`s (one plan, or two
    merged), in its order, where every merge it makes is certain from the plans; else None (then each plan is built
    and `merge_for_epilogue` decides).

    Building each plan's group and then merging two built and erased a
    group per merge (an unrolled LSTM step's x- and h-GEMMs). Certain here:
    every plan's GEMM results are read by groups only (not by GEMMs: no
    plan reads another), and each plan shares a reader with at most one
    plan over its tile space with which its GEMMs fit in `most`: its
    partner. Such a pair merges when `why_not_merge` would let it, which
    between two sibling GEMM groups is the cycle, the argument limit and
    the group size limit, asked here of the plans; a pair any of them
    refuses, or plans whose building moves ops (`Siblings.dependents`),
    give None. `walks`: the pass's view walks (the `wrapped_inputs` of a
    plan of one GEMM).
    """
    if any(plan.wrapped is None for plan in plans if len(plan.members) > 1):
        return None  # ops move as some plan is built (or it reads another): the merges decide
    plan_of = _plan_of(plans)
    readers: dict = {}  # op_id -> a group reading some plan's GEMM results
    for plan in plans:
        for member in plan.readers:
            for _, owners in member:
                for owner, key in owners:
                    if owner.name != "fusion.group":
                        return None
                    readers[key] = owner
    partners = [set() for _ in plans]
    for owner in readers.values():
        # Only a GEMM is in a plan: its name asked before its op_id (a ctypes call).
        read = {plan_of[key] for v in owner.operands
                if (op := defining_op(v)) is not None and op.name in MATMUL_OPS and (key := op_id(op)) in plan_of}
        for i in read:
            space = plans[i].space
            partners[i].update(j for j in read if j != i and space is not None and plans[j].space == space
                               and len(plans[i].members) + len(plans[j].members) <= most)
    if any(len(found) > 1 for found in partners):
        return None
    wrapped = [plan.wrapped if plan.wrapped is not None else [walks.wrapped(ops) for ops in plan.members]
               for plan in plans]
    singles, pairs = [], []
    for i, found in enumerate(partners):
        if not found:
            singles.append(Entry((i,), [wrapped[i]]))
        elif (j := next(iter(found))) > i:
            pair = _certain_pair(plans, i, j, wrapped, dep, limits)
            if pair is None:
                return None
            pairs.append(Entry(pair, [wrapped[k] for k in pair]))
    return singles + pairs


def _plan_of(plans: list) -> dict:
    """The index of the plan holding each GEMM of `plans`, by op_id."""
    return {key: i for i, plan in enumerate(plans) for key in plan.keys}


def _certain_pair(plans: list, i: int, j: int, wrapped: list, dep, limits: Limits) -> tuple | None:
    """(first, second): plans `i` and `j` by position, if `why_not_merge` lets their groups merge and nothing
    between them reads the first; else None. `wrapped`: each plan's members' `wrapped_inputs`."""
    first, second = sorted((i, j), key=lambda k: dep.pos[plans[k].keys[-1]])
    anchor = plans[second].members[-1][-1]
    limit = dep.pos[plans[second].keys[-1]]
    for ops, op_readers in zip(plans[first].members, plans[first].readers):
        if _read_after(ops[-1], op_readers, limit, dep):
            continue
        between, cycle = dep.dependents_between(ops[-1], anchor)
        if between or cycle:
            return None
    inputs = {v for k in (first, second) for member_inputs, _ in wrapped[k] for v in member_inputs}
    # The second's results, then the first's that are read (`merge`'s exported ones).
    count = sum(len(member) for member in plans[second].readers) + sum(
        bool(owners) for member in plans[first].readers for _, owners in member)
    if len(inputs) + count > limits.max_args:
        return None
    if limits.max_group_size and _computing(plans, (first, second)) > limits.max_group_size:
        return None
    return first, second


def _computing(plans: list, indices: tuple) -> int:
    """The ops of the groups of `plans[indices]` that count towards max-group-size (`analysis.bodies.counts_as_computing`):
    their GEMMs, one per member (a member's other ops are the views its GEMM reads through, which do not count)."""
    return sum(len(plans[i].members) for i in indices)


def epilogues_at_once(plans: list, entries: list, dep, limits: Limits, bodies) -> list:
    """`entries` (`pairs_at_once`'s, of `plans`), each with the group fusion-fuse-matmul merges into it first as its
    epilogue where that is certain from the plans (`legality_matmul.epilogue_certain`), to be built in with it.

    Certain where the entry's GEMM results are read by that one pointwise
    group alone, which reads no other plan's, and where building it in at
    once changes no other question the pass asks, which it would if an
    input of the merged group were a prologue candidate (a pointwise or
    concat group not refused by its body alone: `never_on_tiles`), a cat
    (`_wrap_operand_cats`), or a group built in at once before this one
    whose group would ask for this epilogue first, being read by it and
    reaching none of the entry's GEMMs (else a path runs through the
    GEMM's group from the one to the other: a cycle, and the merge is
    refused), or if an entry before this one read the epilogue (its group
    asks for it as a prologue first). `bodies`: the pass's body facts.
    """
    plan_of = _plan_of(plans)
    entry_of_plan = {i: k for k, entry in enumerate(entries) for i in reversed(entry.plans)}
    views_of: dict | None = None  # op_id of each view of the plans -> the first entry holding it, made if asked
    built: dict = {}  # each result of the consumers built in so far -> (their op_id, result number)
    found = []
    for k, entry in enumerate(entries):
        stale = tuple(
            (p, m, i, *built[v])
            for p, plan_wrapped in enumerate(entry.wrapped) for m, (inputs, _) in enumerate(plan_wrapped)
            for i, v in enumerate(inputs) if v in built
        ) if built else ()
        consumer = _certain_epilogue(plans, entry, plan_of, built, dep, limits, bodies)
        if consumer is not None:
            results = list(consumer.results)
            for r in results:
                for use in r.uses:
                    owner = use.owner.operation
                    if owner.name in VIEW_OPS:
                        if views_of is None:
                            views_of = _views_of(plans, entries)
                        before = views_of.get(op_id(owner), k) < k
                    else:
                        plan = plan_of.get(op_id(owner)) if owner.name in MATMUL_OPS else None
                        before = plan is not None and entry_of_plan[plan] < k
                    if before:
                        consumer = None  # an entry before reads it: its group asks for it as a prologue first
                        break
                if consumer is None:
                    break
        key = None if consumer is None else op_id(consumer)
        if key is not None:
            built.update((r, (key, n)) for n, r in enumerate(results))
        found.append(entry._replace(consumer=consumer, consumer_key=key, stale=stale))
    return found


def _views_of(plans: list, entries: list) -> dict:
    """The first of `entries` holding each view of `plans`' members, by op_id (a view may feed several plans)."""
    found: dict = {}
    for k, entry in enumerate(entries):
        for i in entry.plans:
            for ops in plans[i].members:
                for op in ops[:-1]:
                    found.setdefault(op_id(op), k)
    return found


def _certain_epilogue(plans: list, entry: Entry, plan_of: dict, built: dict, dep, limits: Limits, bodies):
    """`epilogues_at_once`'s consumer for one entry, or None. `built`: the results of the consumers built in so far."""
    members = [ops for i in entry.plans for ops in plans[i].members]
    readers = [member for i in entry.plans for member in plans[i].readers]
    produced = {r for member in readers for r, _ in member}
    consumer = consumer_key = None
    for member in readers:
        for _, owners in member:
            for owner, key in owners:
                if consumer is None:
                    consumer, consumer_key = owner, key
                elif key != consumer_key:
                    return None
    block = members[-1][-1].operation.block
    if consumer is None or consumer.name != "fusion.group" or consumer.block != block:
        return None
    inputs = list(dict.fromkeys(v for plan_wrapped in entry.wrapped for member_inputs, _ in plan_wrapped for v in member_inputs))
    checked = set(inputs)
    for v in [*inputs, *(v for v in consumer.operands if v not in produced and v not in checked)]:
        owner = defining_op(v)
        if owner is None or owner.block != block:
            continue
        name = owner.name
        if name == CAT or (name in MATMUL_OPS and plan_of.get(op_id(owner), entry.plans[0]) not in entry.plans):
            return None
        if name != "fusion.group":
            continue
        if v in built:
            if built[v][0] not in {built[x][0] for x in inputs if x in built} and not any(
                    dep.reaches_early(owner, ops[-1]) for ops in members):
                return None  # the group built with it would ask for this epilogue first, and no cycle refuses it
        elif group_kind(owner.opview) in (GroupKind.POINTWISE, GroupKind.CONCAT) and not never_on_tiles(owner.opview, bodies):
            return None
    g = plans[entry.plans[0]].gemm
    if not epilogue_certain(consumer.opview, produced, g, inputs, _computing(plans, entry.plans), limits, bodies):
        return None
    return consumer.opview


def wrap_siblings_at_once(plans: list, rewriter: FusionRewriter, dep, counts: dict, entries: list | None = None) -> list:
    """Each of `plans` (`siblings_at_once`) as one GEMM group, in order; `counts` as `merge_siblings` fills it.

    What a group reads and what moves after it are asked as it is built: a
    plan before it may have wrapped a GEMM it reads (that value is now the
    group's) or one of the ops between its GEMMs. `entries` (`pairs_at_once`'s
    or `epilogues_at_once`'s): the groups to build instead, in their order.
    """
    if entries is not None:
        return _build_entries(plans, entries, rewriter, counts)
    groups = []
    for plan in plans:
        if len(plan.members) == 1:
            group = rewriter.wrap(plan.members[0], GroupKind.MATMUL)
        else:
            if plan.wrapped is not None:
                group = rewriter.wrap_siblings(plan.members, GroupKind.MATMUL, plan.dependents, plan.wrapped)
            else:
                gemms = [ops[-1] for ops in plan.members]
                dependents = _dependents(gemms, plan.keys, tuple(_readers(op) for op in gemms), dep)
                group = rewriter.wrap_siblings(plan.members, GroupKind.MATMUL, dependents)
        counts[op_id(group)] = (len(plan.members), plan.space)
        groups.append(group)
    return groups


def _build_entries(plans: list, entries: list, rewriter: FusionRewriter, counts: dict) -> list:
    """The group of each of `entries`, in order."""
    results: dict = {}  # consumer_key -> the results of the group it was built in (they replaced its own)
    groups = []
    for entry in entries:
        for p, m, k, key, n in entry.stale:
            entry.wrapped[p][m][0][k] = results[key][n]
        sets = [plans[i].members for i in entry.plans]
        if entry.consumer is not None or len(sets) == 2:
            group = rewriter.wrap_sibling_sets(sets, GroupKind.MATMUL, entry.wrapped, entry.consumer)
        elif len(sets[0]) == 1:
            group = rewriter.wrap(sets[0][0], GroupKind.MATMUL)
        else:
            group = rewriter.wrap_siblings(sets[0], GroupKind.MATMUL, [], entry.wrapped[0])  # moves nothing
        if entry.consumer is not None:
            results[entry.consumer_key] = list(group.results)
        counts[op_id(group)] = (sum(len(s) for s in sets), plans[entry.plans[0]].space)
        groups.append(group)
    return groups


def merge_siblings(
    groups: list, keys: list, rewriter: FusionRewriter, dep, limits: Limits, most: int, bodies, counts: dict
) -> list:
    """Groups whose GEMMs share A (the same `keys`, `shared_a`'s; None: shares nothing) merged, up to `most` per
    group, when neither depends on the other.

    `groups` hold one GEMM each; `counts` gets the (GEMMs, tile space) of each group returned, by op_id.
    """
    by_key: dict = {}
    for group, key in zip(groups, keys):
        by_key.setdefault(key or id(group), ([], key))[0].append(group)
    result = []
    for members, key in by_key.values():
        merged, count = members[0], 1
        # The tile space, (result space, dtype), GEMMs sharing tiles agree on: siblings share it (a merged
        # group's is its first GEMM's), a batched GEMM (no key) has none.
        space = None if key is None else (key.out, key.dtype)
        for other in members[1:]:
            first, second = (merged, other) if dep.position(merged) < dep.position(other) else (other, merged)
            if count >= most or dep.reaches(first, second) or why_not_merge(first, second, dep, limits, bodies) is not None:
                result.append(other)
                counts[op_id(other)] = (1, space)
                continue
            merged = rewriter.merge(first, second, dep, kind=GroupKind.MATMUL)
            count += 1
        result.append(merged)
        counts[op_id(merged)] = (count, space)
    return result


def _epilogue_partner(group, groups: dict, dep, limits: Limits, most: int, bodies, counts: dict):
    """Another GEMM group of `groups` (by op_id; their GEMMs and tile spaces in `counts`) over the same result tiles,
    read by a group that reads `group` too, mergeable with it.

    The reader is usually their common epilogue; where it cannot be (it
    creates a tensor, say), the merge still makes two launches one.
    """
    count, space = counts[op_id(group)]
    if space is None:
        return None
    refused = set()  # op_ids of the groups checked already and refused (a group's results feed many readers)
    scanned = set()  # op_ids of the readers whose inputs were checked (a grouped GEMM's results feed one reader)
    for r in group.results:
        for use in r.uses:
            consumer = use.owner.operation
            if consumer.name != "fusion.group" or (reader := op_id(consumer)) in scanned:
                continue
            scanned.add(reader)
            for v in consumer.operands:
                owner = defining_op(v)
                other = None if owner is None or owner == group.operation else groups.get(key := op_id(owner))
                if other is None or key in refused:
                    continue
                if counts[key][1] != space or count + counts[key][0] > most:
                    refused.add(key)
                    continue
                first, second = (group, other) if dep.position(group) < dep.position(other) else (other, group)
                if not dep.reaches(first, second) and why_not_merge(first, second, dep, limits, bodies) is None:
                    return other
                refused.add(key)
    return None


def merge_for_epilogue(groups: list, rewriter: FusionRewriter, dep, limits: Limits, most: int, bodies, counts: dict) -> list:
    """GEMM groups over common result tiles that one group reads merged into one, up to `most` GEMMs (`counts`: as
    `merge_siblings` left it, kept current)."""
    by_id = {op_id(g): g for g in groups}  # in order, a merged group last; found and removed in O(1)
    merged = True
    while merged:
        merged = False
        for group in by_id.values():  # left as soon as it changes
            other = _epilogue_partner(group, by_id, dep, limits, most, bodies, counts)
            if other is None:
                continue
            first, second = (group, other) if dep.position(group) < dep.position(other) else (other, group)
            del by_id[op_id(group)], by_id[op_id(other)]  # before the merge erases them
            (count, space), (other_count, _) = counts.pop(op_id(group)), counts.pop(op_id(other))
            new = rewriter.merge(first, second, dep, kind=GroupKind.MATMUL)
            by_id[op_id(new)] = new
            counts[op_id(new)] = (count + other_count, space)
            merged = True
            break
    return list(by_id.values())


__all__ = [
    "Entry", "SharedA", "Siblings", "epilogues_at_once", "merge_for_epilogue", "merge_siblings", "pairs_at_once", "shared_a",
    "siblings_at_once", "wrap_siblings_at_once",
]
