"""Dependence analysis: a topological position for every op, and reachability queries.

Fusion must never merge a producer into a consumer when another path runs
from one to the other through an op outside both (the merged group would
feed and read that op: a cycle). The check is a depth-first search from the
producer's users that never visits ops positioned after the consumer, so it
costs what lies between the two, not the size of the function.

Positions are kept as the IR changes rather than recomputed: the rewriter
tells the analysis what it inserted, moved and erased, and the analysis keeps a
linked order with gapped numeric positions (renumbered only when a gap runs
out). Recomputing after every rewrite is what made earlier PyTorch fusers
quadratic; `refresh` exists to measure exactly that.

Ops are keyed by `op_id(op)`, the address of the C++ operation, never by
the Python `Operation` object or its hash (see `mlirfuse.ir.op_id`).
"""

from __future__ import annotations

from mlirfuse.analysis import Analysis, entries_diff
from mlirfuse.ir import body_operations, ir, op_id

GAP = 1024.0


_key = op_id


class DependenceAnalysis(Analysis):
    name = "dependence"

    def __init__(self, anchor):
        self.anchor = anchor
        self.pos: dict[int, float] = {}
        self.prev: dict[int, int | None] = {}
        self.next: dict[int, int | None] = {}
        self.label: dict[int, str] = {}  # for diffs: never print an op that may be gone
        self.block_of: dict[int, int] = {}
        # The last `dependents_between` answer, ((producer, consumer) keys, answer), until the next rewrite:
        # a fusion pass asks it of a pair in its legality check and again in the merge that follows.
        self._last: tuple | None = None

    @classmethod
    def compute(cls, anchor) -> "DependenceAnalysis":
        """Positions for the ops of every function body under `anchor` (a module).

        Each body is listed by a walk that hands out plain operations (`body_operations`: listing the block
        makes an `OpView` per op), and the tables are filled a body at a time.
        """
        analysis = cls(anchor)
        for block_id, func in enumerate(_functions(anchor)):
            ops, end = body_operations(func)
            ops.append(end)
            keys = [_key(op) for op in ops]
            analysis.pos.update(zip(keys, [(i + 1) * GAP for i in range(len(keys))]))
            analysis.prev.update(zip(keys, [None, *keys[:-1]]))
            analysis.next.update(zip(keys, [*keys[1:], None]))
            analysis.label.update(zip(keys, [f"'{op.name}' #{i}" for i, op in enumerate(ops)]))
            analysis.block_of.update(dict.fromkeys(keys, block_id))
        return analysis

    def refresh(self) -> None:
        """Recompute in place (the debug mode that maintenance replaces)."""
        self.__dict__.update(type(self).compute(self.anchor).__dict__)

    # -- queries -----------------------------------------------------------

    def position(self, op) -> float:
        return self.pos[_key(op)]

    def reaches(self, source, target) -> bool:
        """Does `target` depend on `source` through def-use chains?"""
        target_key = _key(target)
        if self.pos[_key(source)] >= self.pos[target_key]:
            return False
        # `target` reading `source` itself (as most pairs that depend do) needs no search.
        for r in source.results:
            for use in r.uses:
                if _key(use.owner.operation) == target_key:
                    return True
        dependents, _ = self.dependents_between(source, target)
        return any(_key(use.owner.operation) == target_key for op in [source, *dependents] for r in op.results for use in r.uses)

    def reaches_early(self, source, target) -> bool:
        """`reaches(source, target)`, its search stopped at the first path found (a planner asking once per pair,
        where `reaches` lists every op between the two that depends on `source` and then reads their uses again).

        Leaves the `dependents_between` answer kept for a pair as it is (`reaches` keeps its own)."""
        source, target_key = source.operation, _key(target)
        limit = self.pos[target_key]
        if self.pos[_key(source)] >= limit:
            return False
        block = source.block
        seen: set = set()
        stack = [source]
        while stack:
            for result in stack.pop().results:
                for use in result.uses:
                    owner = use.owner.operation
                    key = _key(owner)
                    if key == target_key:
                        return True
                    if owner.block != block:
                        owner = _ancestor_in(owner, block)
                        if owner is None:
                            continue
                        key = _key(owner)
                    if key not in seen and key != target_key and self.pos[key] < limit:
                        seen.add(key)
                        stack.append(owner)
        return False

    def dependents_between(self, producer, consumer) -> tuple[list, bool]:
        """Ops positioned between the two that depend on `producer`, and whether `consumer` does too.

        The ops come back in order, as live objects valid until the next rewrite.
        """
        producer, consumer = producer.operation, consumer.operation
        producer_key, consumer_key = _key(producer), _key(consumer)
        last = self._last
        if last is not None and last[0] == (producer_key, consumer_key):
            return last[1]
        limit = self.pos[consumer_key]
        block = producer.block
        seen: dict[int, ir.Operation] = {}
        stack = [(producer, producer_key)]  # each op with its key, taken once
        cycle = False
        while stack:
            op, op_key = stack.pop()
            for result in op.results:
                for use in result.uses:
                    user = _ancestor_in(use.owner.operation, block)
                    key = None if user is None else _key(user)
                    if key is None or key in seen:
                        continue
                    if key == consumer_key:
                        cycle |= op_key != producer_key
                        continue
                    if self.pos[key] < limit:
                        seen[key] = user
                        stack.append((user, key))
        answer = [seen[k] for k in sorted(seen, key=self.pos.__getitem__)], cycle
        self._last = ((producer_key, consumer_key), answer)
        return answer

    # -- notifications (see RewriteListener) ---------------------------------
    # Only ops of function bodies have positions; anything else is not ours.
    # Each op's key is taken once: `op_id` is a ctypes call, and a pass sends
    # tens of thousands of notifications.

    def operands_changed(self, op) -> None:
        self._last = None

    def value_replaced(self, old, new) -> None:
        self._last = None

    def groups_merged(self, producer, consumer, group) -> None:
        self._last = None

    def op_inserted(self, op, before) -> None:
        self._last = None
        anchor = _key(before)
        if anchor in self.pos:
            new = _key(op)
            self.label[new] = f"'{op.operation.name}'"
            self._link(new, self.prev[anchor], anchor)

    def op_moved(self, op, after) -> None:
        self._last = None
        op, anchor = _key(op), _key(after)
        if op in self.pos and anchor in self.pos:
            self._unlink(op)
            self._link(op, anchor, self.next[anchor])

    def op_erased(self, op) -> None:
        """Forget `op` before it is erased (its address may be reused)."""
        self._last = None
        op = _key(op)
        if op in self.pos:
            self._unlink(op)
            for table in (self.pos, self.prev, self.next, self.label, self.block_of):
                table.pop(op, None)

    # -- updates -----------------------------------------------------------

    def _unlink(self, op) -> None:
        before, after = self.prev[op], self.next[op]
        if before is not None:
            self.next[before] = after
        if after is not None:
            self.prev[after] = before

    def _link(self, op, before, after) -> None:
        low = self.pos[before] if before is not None else self.pos[after] - 2 * GAP
        high = self.pos[after] if after is not None else self.pos[before] + 2 * GAP
        self.prev[op], self.next[op] = before, after
        if before is not None:
            self.next[before] = op
        if after is not None:
            self.prev[after] = op
        self.block_of[op] = self.block_of[before if before is not None else after]
        middle = (low + high) / 2
        if not low < middle < high:
            self.pos[op] = low
            self._renumber(op)
        else:
            self.pos[op] = middle

    def _renumber(self, op) -> None:
        first = op
        while self.prev[first] is not None:
            first = self.prev[first]
        i = 1
        while first is not None:
            self.pos[first] = i * GAP
            first, i = self.next[first], i + 1

    # -- checking ----------------------------------------------------------

    def order(self) -> list[list[int]]:
        """The maintained order, one list per block."""
        heads = [op for op, before in self.prev.items() if before is None]
        lists = []
        for head in sorted(heads, key=lambda op: self.block_of[op]):
            chain, op = [], head
            while op is not None:
                chain.append(op)
                op = self.next[op]
            lists.append(chain)
        return lists

    def diff(self, fresh: "DependenceAnalysis") -> list[str]:
        problems = entries_diff(self.pos, fresh.pos, self.label, fresh.label, "ops", "a position")
        if problems:
            return problems
        for block_id, (mine, actual) in enumerate(zip(self.order(), fresh.order())):
            for i, (a, b) in enumerate(zip(mine, actual)):
                if a != b:
                    problems.append(
                        f"block {block_id}: position {i} holds {fresh.label[a]} in the maintained order "
                        f"but {fresh.label[b]} in the IR"
                    )
                    break
            for a, b in zip(mine, mine[1:]):
                if not self.pos[a] < self.pos[b]:
                    problems.append(f"block {block_id}: positions not increasing at {fresh.label[b]}")
                    break
        return problems


def _functions(anchor) -> list:
    """The functions with a body under `anchor` (a module), in order."""
    return [op for op in anchor.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and len(op.regions[0].blocks)]


def _ancestor_in(op: ir.Operation, block: ir.Block) -> ir.Operation | None:
    while op is not None and op.block != block:
        op = op.parent
    return op
