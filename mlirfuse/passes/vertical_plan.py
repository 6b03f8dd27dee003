"""fusion-fuse-vertical decided first, built once: the greedy's groups found on the unwrapped ops.

`VerticalFuser.run` wraps every fusible op in a group of its own, then
merges groups sweep after sweep; each wrap and merge is a rewrite through
the bindings (50-100 µs), and an LSTM step makes 17 wraps, 16 merges and
4 view absorptions to end with one group. Here the same sweeps run on
Python records of the would-be groups (`_Group`: inputs, results, body
entries, in the order the rewrites would leave them), asking the same
legality questions of them, and then each final group is built once, with
the body, inputs, results, location and position the rewrites would have
given it: the output is the same text. (Not the same use lists: MLIR keeps a
value's uses in the order they were made, the history of the rewrites, so
no pass may read meaning into that order; fusion-explain-unfused lists a
group's consumers in block order.)

Only the common case is planned: pointwise and reduction groups of
elementwise ops, reductions and absorbed views, no fusion policy, no
decision log, no group made by an earlier pass. Where the sweeps would
reach anything else (a cat, a scan, a gather or scatter, a pool, a pad, a
view of a computed value, a producer copied into its consumer, ...),
`plan` answers None before anything is built, and the pass runs the
rewrites as before. `tests/test_vertical_plan.py` compares both ways.
"""

from __future__ import annotations

from operator import attrgetter

from mlirfuse.analysis.bodies import counts_as_computing
from mlirfuse.dialect import FUSIBLE_KINDS, GroupKind, build_group, build_yield, group_kind
from mlirfuse.ir import ir, tensor_type
from mlirfuse.ops import elementwise, reductions, scans
from mlirfuse.ops.indexing import CREATIONS, EMBEDS, GATHERS, INDEX_LISTS, SCATTERS, reads_shape_only
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, gemm
from mlirfuse.ops.pooling import WINDOWED
from mlirfuse.ops.reductions import REDUCTIONS, Reduction, reduction
from mlirfuse.ops.registry import FUSED, PURE_OPS, fusing_family
from mlirfuse.ops.views import CAT, PADS, VIEW_OPS, view_arg, view_args
from mlirfuse.passes.base import clone_ops_into, function_level_ops
from mlirfuse.passes.legality import why_not_reduction_space
from mlirfuse.passes.options import Limits
from mlirfuse.passes.policy import current as current_policy
from mlirfuse.passes.rewriter import merged_operands

# Ops the plan does not take into a group: what legality would judge by rules not ported here.
_UNPLANNED = frozenset(INDEX_LISTS) | frozenset(SCATTERS) | frozenset(GATHERS) | frozenset(EMBEDS) | WINDOWED | PADS | {CAT}
# Body op names that make legality ask `why_not_indexed` (legality_indexed.INDEXED_READERS).
_INDEXED = frozenset(CREATIONS) | frozenset(EMBEDS) | frozenset(GATHERS) | {"torch.prim.ListConstruct"}
_WRAP_ROOTS = frozenset(FUSED) | {CAT, "torch.operator"}
_UNKNOWN = object()
_POSITION = attrgetter("pos")
_INDEX = attrgetter("index")
# What fusion-fuse-vertical erases first when nothing reads it (`fuse_vertical.erase_dead_code`, `_Planner.erase_dead_code`).
PURE = PURE_OPS | {CAT, "torch.prim.ListConstruct"}


class Unplanned(Exception):
    """The sweeps reach a case the plan does not reproduce: run the rewrites."""


class _Group:
    """A would-be `fusion.group`: what the rewrites would have made of its ops so far."""

    __slots__ = ("kind", "inputs", "results", "entries", "computing", "first_reduction", "views", "indexed", "adds",
                 "stamp", "refused")

    def __init__(self, kind, inputs, results, entries, computing, first_reduction, views, indexed, adds):
        self.kind, self.inputs, self.results, self.entries = kind, inputs, results, entries
        self.computing, self.first_reduction = computing, first_reduction  # `reduction` of its first reduction op
        self.views = views  # the view ops cloned in (absorbed), in body order
        self.indexed = indexed  # legality would ask `why_not_indexed` of it as a consumer
        self.adds = adds  # the nodes of its `aten.add.Tensor`s (`_why_not_past_gemm_epilogue` looks at them)
        self.stamp = 0  # how often it has changed (merged a producer, absorbed a view)
        self.refused: dict = {}  # producer node -> its group's stamp, for each merge into this one refused since it changed

    def grew(self) -> None:
        """It took a producer or a view in: the merges refused into it may be legal now, and those of it too."""
        self.stamp += 1
        self.refused = {}


class _Node:
    """An op of the function body as the sweeps see it: an original op, or a would-be group in its place."""

    __slots__ = ("op", "name", "results", "operands", "group", "prev", "next", "pos", "into", "index")

    def __init__(self, op, name: str, index: int, prev):
        self.op, self.name, self.group, self.index = op, name, None, index
        self.results: list = []  # its results' `_Value`s
        self.operands: list = []  # the original op's operands' `_Value`s (listed once; none for a constant)
        self.prev, self.next = prev, None
        self.pos = (index + 1) * 1024.0
        self.into = None  # the node it was merged into (a union-find link)


class _Value:
    """A value the body's ops read, as the sweeps see it: its readers and the facts asked of it, on a Python
    object (a dict keyed by `ir.Value`s asks the bindings for a hash and an equality at every look-up).

    One per value (`_Planner.values`), so records compare as their values do: by identity.
    """

    __slots__ = ("value", "node", "readers", "const", "spelling", "shape", "gemm_out")

    def __init__(self, value, node, readers):
        self.value = value  # the `ir.Value`
        self.node = node  # the node of the op computing it; None for a function argument or a constant
        self.readers = readers  # {node: 1} for each node reading it (a dict: in order); None for an argument
        self.const = None  # the `torch.constant.*` op computing it
        self.spelling = None  # `_spelled`
        self.shape = None  # `_shape`
        self.gemm_out = _UNKNOWN  # the shape of the GEMM computing it, or None (`gemm` asked once)

    @property
    def type(self):
        return self.value.type


def plan(module: ir.Operation, limits: Limits, rewriter) -> list | None:
    """Each function body's `_Planner`, swept to the greedy's fixpoint; None where any body is unplanned.

    The pure ops nobody reads are erased first, through `rewriter` (as `fuse_vertical.erase_dead_code`), in the
    bodies listed before one found unplanned.
    """
    if current_policy() is not None:
        return None
    planners = []
    for ops in function_level_ops(module):
        try:
            planner = _Planner(ops, limits)
            planner.erase_dead_code(rewriter)
            planner.sweep()
        except Unplanned:
            return None
        planners.append(planner)
    return planners


class _Planner:
    def __init__(self, ops: list, limits: Limits):
        """`ops`: a function body's ops, as `ir.Operation`s (`function_level_ops`: cheaper to list than `OpView`s)."""
        self.limits = limits
        self.values: dict = {}  # ir.Value -> its `_Value` (asked once per operand, as the ops are listed)
        self.moved: set = set()  # nodes of original ops moved after a group
        self.gone: list = []  # the nodes of the original ops now in groups, and of absorbed views nobody reads any more
        self.last_taken: dict = {}  # the node of such a view -> the body entry of its last absorption
        self.same_shape: dict = {}  # node -> `_same_shape_add`
        self.reductions: dict = {}  # node -> `reduction` of its op
        self.judged: dict = {}  # `_judged`'s key -> the judge's answer
        self._interface: tuple = ((), ())  # the last legal merge's exported results and inputs
        self._last: tuple | None = None  # the last `_dependents_between` answer, until the next rewrite
        self.changed = False
        self.pure: list = []  # the nodes of `PURE` ops, in block order
        self.constant_like: list = []  # the nodes of constants and lists, in block order
        self.dead: set = set()  # the nodes `erase_dead_code` erased
        values = self.values
        values_get, constant_like, pure = values.get, self.constant_like, self.pure
        head = prev = None
        for index, op in enumerate(ops):
            name = op.name
            node = _Node(op, name, index, prev)
            if name.startswith("torch.constant."):
                # Reads nothing, and a constant is cloned, never a group input: its place, value and readers count.
                result = op.result
                record = values[result] = _Value(result, None, {})
                record.const = op
                node.results = [record]
                constant_like.append(node)
            else:
                if name == "fusion.group" and group_kind(op) in (*FUSIBLE_KINDS, GroupKind.SCATTER):
                    raise Unplanned  # an earlier pass's group: the rewrites merge into it
                operands = node.operands
                # Only values the block's ops compute are tracked: who reads a function argument is never asked.
                for v in op.operands:
                    record = values_get(v)
                    if record is None:  # an argument (the block's ops come after what they read)
                        record = values[v] = _Value(v, None, None)
                    elif record.readers is not None:
                        record.readers[node] = 1
                    operands.append(record)
                if name in PURE:
                    pure.append(node)
                    if name == "torch.prim.ListConstruct":
                        constant_like.append(node)
                # (No aten op has regions.)
                if not name.startswith("torch.aten.") and len(op.regions) and name != "fusion.group":
                    for v in _nested_reads(op):
                        record = values_get(v)
                        if record is not None and record.readers is not None:
                            record.readers[node] = 1
                try:  # (most ops have one result: `op.result` costs half of listing them)
                    results = [op.result]
                except ValueError:
                    results = list(op.results)
                for r in results:
                    record = values[r] = _Value(r, node, {})
                    node.results.append(record)
            if prev is None:
                head = node
            else:
                prev.next = node
            prev = node
        self.head = head

    def erase_dead_code(self, rewriter) -> None:
        """`fuse_vertical.erase_dead_code` on this body, from the listed reads: the pure ops nobody reads, in
        reverse block order (users first), so that what only they read goes too."""
        for node in reversed(self.pure):
            for r in node.results:
                if r.readers:
                    break
            else:  # nobody reads it
                rewriter.erase(node.op)
                self.dead.add(node)
                for r in node.results:
                    r.readers = r.node = None
                for v in node.operands:
                    found = v.readers
                    if found is not None:
                        found.pop(node, None)
                node.operands = []
                self._unlink(node)
        self.pure = []

    # -- the sweeps ----------------------------------------------------------

    def sweep(self) -> None:
        """As `VerticalFuser.run`: sweeps in block order, each visit with the next node taken first.

        The first sweep wraps (no op is in a group before it, and it merges nothing); the later ones visit the
        groups only, in their order as the sweep starts: a visit changes nothing after the node it visits (the
        producers it merges or absorbs come before it, the dependents it moves land right after it, behind the
        next node taken), so that order is the one the visits meet.
        """
        self.changed = False
        groups = []
        node = self.head
        while node is not None:
            after = node.next
            if node.name in _WRAP_ROOTS:
                self._wrap(node)
                if node.group is not None:
                    groups.append(node)
            node = after
        while self.changed:
            self.changed = False
            for node in groups:
                if node.into is None:
                    self._merge_producer(node)
            groups = sorted([node for node in groups if node.into is None], key=_POSITION)

    def _wrap(self, node: _Node) -> None:
        op, name = node.op, node.name
        if name in _UNPLANNED:
            raise Unplanned
        family = FUSED.get(name)
        if family is reductions.FAMILY:
            if isinstance(self._reduction(node), str):
                return
        elif family is elementwise.FAMILY:
            if self._judged(elementwise.why_not_fusible, node) is not None:
                return
        else:
            family = fusing_family(op)
            if family is None or family.why_not(op.opview) is not None:
                return
            if family is scans.FAMILY:
                raise Unplanned
        kind = GroupKind.REDUCTION if family is reductions.FAMILY else GroupKind.POINTWISE
        inputs, constants, lists = self._wrapped_inputs(node)  # (listed as the op's reads: the group's already)
        # (Each op has one record: `constants` without repeats by identity is `unique_ops(constants)`.)
        entry = (list(dict.fromkeys(constants)) if len(constants) > 1 else constants, node)
        computing = 1 if counts_as_computing(name) else 0
        node.group = _Group(
            kind, inputs, node.results, [entry], computing,
            self._reduction(node) if name in REDUCTIONS else None, [], name in _INDEXED or lists,
            [node] if name == "torch.aten.add.Tensor" else [],
        )
        self.gone.append(node)
        self._last = None
        self.changed = True

    def _judged(self, judge, node: _Node):
        """`judge(node.op)` (elementwise.why_not_fusible, `reduction`, `gemm`), asked once per key: an unrolled loop
        or a layer stack repeats its ops' names, types and constant arguments, all such a judge reads of an op."""
        spelled = self._spelled
        key = [judge, node.name]
        for r in node.results:
            key.append(r.value.type)
        key.append(None)
        for v in node.operands:
            if v.const is not None:  # its value
                key.append(spelled(v))
                continue
            source = v.node
            if source is not None and source.name == "torch.prim.ListConstruct":  # its items' values
                items = source.operands
                if not all(w.const is not None for w in items):
                    return judge(node.op)  # (rare: not worth a key)
                key.append((v.value.type, tuple(spelled(w) for w in items)))
                continue
            key.append(v.value.type)  # computed or an argument: its type
        key = tuple(key)
        found = self.judged.get(key, _UNKNOWN)
        if found is _UNKNOWN:
            found = self.judged[key] = judge(node.op)
        return found

    @staticmethod
    def _spelled(record: _Value):
        """A constant's type and value attribute, as `_judged` keys them (attributes are uniqued: 1, 1.0, True and
        -0.0 apart; reading one is cheaper than converting it); read once."""
        found = record.spelling
        if found is None:
            const = record.const  # (a none has no value: asked first, as a KeyError through the bindings costs ~10 µs)
            attr = None if const.name == "torch.constant.none" else const.attributes["value"]
            found = record.spelling = (record.value.type, attr)
        return found

    def _wrapped_inputs(self, node: _Node) -> tuple[list, list, bool]:
        """`rewriter.wrapped_inputs([node.op])` from the listed operands, and whether a list of constants is read."""
        operands: dict = {}
        constants = []
        lists = False
        for v in node.operands:
            const = v.const
            if const is not None:
                constants.append(const)
                continue
            source = v.node
            if source is None:
                operands.setdefault(v)  # an argument
            elif source.name != "torch.prim.ListConstruct":
                operands.setdefault(v)  # computed: never constant-like (asked of the bindings otherwise)
            else:
                items = source.operands
                if all(w.const is not None for w in items):
                    constants += [w.const for w in items]
                    constants.append(source.op)
                    lists = True
                else:
                    operands.setdefault(v)
        return list(operands), constants, lists

    def _merge_producer(self, node: _Node) -> None:
        consumer = node.group
        for v in consumer.inputs:
            producer = v.node
            if producer is None:
                continue
            while producer.into is not None:
                producer = producer.into
            if producer.group is None:
                if producer.name in VIEW_OPS and view_args(producer.op, self._view_arg) is not None:
                    self._absorb(producer, node)
                    self.changed = True
                    return
                continue
            if producer.group.kind not in FUSIBLE_KINDS:
                continue
            refused = consumer.refused.get(producer)
            if refused is not None and refused == producer.group.stamp:
                continue  # refused before, and neither group has changed since (see `_why_not_merge`)
            reason = self._why_not_merge(producer, node)
            if reason is None:
                self._merge(producer, node)
                self.changed = True
                return
            if reason == "different iteration space":
                raise Unplanned  # `_merge_copy` would try a copy of the producer
            consumer.refused[producer] = producer.group.stamp

    # -- legality (passes/legality.py's rules, on the records) ---------------

    def _dependents_between(self, producer: _Node, consumer: _Node) -> tuple[list, bool]:
        """As `DependenceAnalysis.dependents_between`: the nodes between the two that read the producer (in order),
        and whether the consumer reads one of them."""
        last = self._last
        if last is not None and last[0] is producer and last[1] is consumer:
            return last[2]
        answer = self._search(producer, consumer)
        self._last = (producer, consumer, answer)
        return answer

    def _view_arg(self, v):
        """`view_arg(v)` for `view_args(...) is not None`: a constant is one, its value not read."""
        record = self.values.get(v)
        return True if record is not None and record.const is not None else view_arg(v)

    def _search(self, producer: _Node, consumer: _Node) -> tuple[list, bool]:
        group = producer.group
        for r in group.results if group is not None else producer.results:
            readers = r.readers
            if readers and (len(readers) > 1 or consumer not in readers):
                break
        else:  # read by the consumer alone (a chain: the common case)
            return [], False
        limit = consumer.pos
        seen: dict = {}
        stack = [producer]
        cycle = False
        while stack:
            node = stack.pop()
            for r in node.group.results if node.group is not None else node.results:
                for user in r.readers or ():
                    if user in seen:
                        continue
                    if user is consumer:
                        cycle |= node is not producer
                        continue
                    if user.pos < limit:
                        seen[user] = True
                        stack.append(user)
        return (sorted(seen, key=_POSITION) if len(seen) > 1 else list(seen)), cycle

    def _why_not_merge(self, p_node: _Node, c_node: _Node) -> str | None:
        """legality.why_not_merge on the records.

        A refusal stands while neither group changes (`_Group.refused`): what it reads besides the two records
        only the other rewrites change, and they never make a merge legal. They contract the graph (a merge, an
        absorbed view) or move ops after a consumer, which keeps every path between two ops (a cycle stays one)
        and every reader of the producer's results other than the consumer (what it exports stays exported).
        """
        producer, consumer = p_node.group, c_node.group
        if self._dependents_between(p_node, c_node)[1]:
            return "cycle"
        produced = producer.results  # (a few: looked through, not hashed)
        if consumer.views and any(view.operands[0] in produced for view in consumer.views):
            raise Unplanned  # a view of the producer's value: `why_not_viewed`
        if consumer.indexed and (why := self._why_not_indexed(produced, consumer)):
            return why
        exported = []
        for r in producer.results:
            found = r.readers
            if found and len(found) > (c_node in found):  # read by another too
                exported.append(r)
        inputs = merged_operands(producer.inputs, produced, consumer.inputs)
        self._interface = exported, inputs  # what `_merge` builds with, if legal
        args = len(inputs) + len(consumer.results) + len(exported)
        if args > self.limits.max_args:
            return f"argument limit ({args} > {self.limits.max_args})"
        size = producer.computing + consumer.computing
        if self.limits.max_group_size and size > self.limits.max_group_size:
            return f"group size limit ({size} > {self.limits.max_group_size})"
        p_red, c_red = producer.first_reduction, consumer.first_reduction
        row_norm = c_red is None or (c_red.keepdim and c_red.dims == (len(c_red.shape) - 1,))
        if exported and p_red is None and row_norm and (why := self._why_not_past_gemm_epilogue(producer, exported)):
            return why
        if p_red is None and c_red is None:
            if exported:
                iteration = self._shape(consumer.results[0])
                if any(self._shape(r) != iteration for r in exported):
                    return "different iteration space"
            return None
        if (producer.views or consumer.views) and (self._computed_view(producer) or self._computed_view(consumer)):
            raise Unplanned  # `has_computed_view` (views of computed values in a reduction group)
        pointwise = consumer if c_red is None else producer if p_red is None else None
        why = why_not_reduction_space(p_red, c_red, None if pointwise is None else self._shape(pointwise.results[0]),
                                      [*exported, *consumer.results], _from_reduction, self._shape)
        if why:
            return why
        for r in producer.results:
            owner = r.node
            if owner.name in REDUCTIONS and c_node in (r.readers or ()):
                found = self._reduction(owner)
                if not (isinstance(found, Reduction) and (found.keepdim or len(found.dims) == 0)):
                    return "reduction result used without keepdim"
        return None

    def _reduction(self, node: _Node) -> Reduction | str:
        """`reduction(node.op)`, asked once per node (and per key)."""
        found = self.reductions.get(node)
        if found is None:
            found = self.reductions[node] = self._judged(reduction, node)
        return found

    @staticmethod
    def _uses_in(group: _Group, value: _Value) -> list:
        """The (node, operand number) reads of `value` by `group`'s ops, as the block argument's uses would list them."""
        return [(node, k) for _, node in group.entries for k, v in enumerate(node.operands) if v is value]

    def _why_not_indexed(self, produced: list, consumer: _Group) -> str | None:
        """legality_indexed.why_not_indexed where the consumer holds no gather, embedding or index list: a value
        the producer computes read only for its shape."""
        for v in consumer.inputs:
            if v not in produced:
                continue
            uses = self._through_views(consumer, self._uses_in(consumer, v))
            if uses and all(reads_shape_only(node.name, k) for node, k in uses):
                return "read only for its shape"
        return None

    def _through_views(self, group: _Group, uses: list) -> list:
        found = []
        for node, k in uses:
            found.append((node, k))
            if node.name in VIEW_OPS:
                found += self._through_views(group, self._uses_in(group, node.results[0]))
        return found

    def _computed_view(self, group: _Group) -> bool:
        """Might `group` view a value it computes? (Conservative: any view of a value not a group input.)"""
        inputs = set(group.inputs)
        return any(view.operands[0] not in inputs for view in group.views)

    def _why_not_past_gemm_epilogue(self, producer: _Group, exported: list) -> str | None:
        """legality._why_not_past_gemm_epilogue on the record."""
        if not exported or not producer.adds:
            return None  # (no add: no residual)
        inputs = producer.inputs
        gemm_args = []
        for v in inputs:
            out = v.gemm_out
            if out is _UNKNOWN:
                source = v.node
                found = self._judged(gemm, source) if source is not None and source.name in MATMUL_OPS else None
                out = v.gemm_out = found.out if isinstance(found, Gemm) else None
            if out is not None:
                gemm_args.append((v, out))
        if not gemm_args:
            return None
        # A residual: an add of a non-GEMM input to a value of the same shape (its first two operands). (Of an
        # input, `gemm_out` is known: None where it is not a GEMM's.)
        for node in producer.adds:
            a, b = node.operands[0], node.operands[1]
            if ((a in inputs and a.gemm_out is None) or (b in inputs and b.gemm_out is None)) and self._same_shape_add(node):
                break
        else:
            return None
        shape = self._shape
        for v, space in gemm_args:
            if all(shape(r) == space for r in producer.results):
                # Read by a one-result op of the body computing over the GEMM's shape.
                for _, node in producer.entries:
                    results = node.results
                    if len(results) == 1 and v in node.operands and shape(results[0]) == space:
                        return "producer is a GEMM's residual epilogue (it adds to the GEMM's result) whose result is read elsewhere too"
        return None

    @staticmethod
    def _shape(record: _Value) -> tuple:
        """`tensor_type(value.type).shape`, asked of the bindings once per value."""
        found = record.shape
        if found is None:
            found = record.shape = tensor_type(record.value.type).shape
        return found

    def _same_shape_add(self, node: _Node) -> bool:
        """Are an add's first two operands of its result's shape? (Asked once per op.)"""
        found = self.same_shape.get(node)
        if found is None:
            shape = tensor_type(node.results[0].value.type).shape
            found = self.same_shape[node] = all(
                (t := tensor_type(w.value.type)) is not None and t.shape == shape for w in node.operands[:2]
            )
        return found

    # -- the rewrites, on the records ----------------------------------------

    def _absorb(self, view: _Node, node: _Node) -> None:
        """`FusionRewriter.wrap_into(view, consumer)`: the view cloned in first, the same node in the consumer's place."""
        group = node.group
        value = view.results[0]
        self._last = None
        if view in group.views:
            raise Unplanned  # a second clone of one view in one body (which reads which: not reproduced)
        v_inputs, constants, lists = self._wrapped_inputs(view)
        group.grew()
        group.inputs = list(dict.fromkeys(v_inputs + [v for v in group.inputs if v is not value]))
        entry = (list(dict.fromkeys(constants)), view)  # (one record per op: as `unique_ops`)
        group.entries.insert(0, entry)
        group.views.insert(0, view)
        group.indexed |= lists
        readers = value.readers
        readers.pop(node, None)
        for v in v_inputs:
            found = v.readers
            if found is not None:
                found[node] = 1
        if not readers:  # nobody else reads the view: erased (moved into the body that took it last, for its clone)
            self.gone.append(view)
            self.last_taken[view] = entry
            for v in v_inputs:
                found = v.readers
                if found is not None:
                    found.pop(view, None)
            self._unlink(view)

    def _merge(self, p_node: _Node, c_node: _Node) -> None:
        """`FusionRewriter.merge(producer, consumer)`: one group where the consumer was, the producer's dependents after it."""
        producer, consumer = p_node.group, c_node.group
        dependents, _ = self._dependents_between(p_node, c_node)
        self._last = None
        exported, inputs = self._interface
        cloned = {view.results[0] for view in [*producer.views, *consumer.views]} if producer.views or consumer.views else ()
        if cloned and not cloned.isdisjoint(inputs):
            raise Unplanned  # a body would hold a view's clone and read the view's value as an input
        kinds = (producer.kind, consumer.kind)
        kind = GroupKind.REDUCTION if GroupKind.REDUCTION in kinds else GroupKind.POINTWISE
        for v in producer.inputs:  # the merged group reads each once
            found = v.readers
            if found is not None:
                found.pop(p_node, None)
                found[c_node] = 1
        for r in producer.results:
            found = r.readers
            if found is not None:
                found.pop(c_node, None)
        consumer.grew()
        consumer.kind, consumer.inputs = kind, inputs
        if exported:
            consumer.results = consumer.results + exported
        consumer.entries = producer.entries + consumer.entries
        consumer.computing += producer.computing
        if producer.first_reduction is not None:
            consumer.first_reduction = producer.first_reduction
        if producer.views:
            consumer.views = producer.views + consumer.views
        consumer.indexed |= producer.indexed
        if producer.adds:
            consumer.adds = producer.adds + consumer.adds
        self._unlink(p_node)
        p_node.into = c_node
        anchor = c_node
        for d in dependents:
            self._unlink(d)
            self._link_after(d, anchor)
            if d.group is None:
                self.moved.add(d)  # a group is built where it ends up anyway
            anchor = d

    # -- the order -------------------------------------------------------------

    def _unlink(self, node: _Node) -> None:
        if node.prev is not None:
            node.prev.next = node.next
        else:
            self.head = node.next
        if node.next is not None:
            node.next.prev = node.prev
        node.prev = node.next = None

    def _link_after(self, node: _Node, anchor: _Node) -> None:
        after = anchor.next
        node.prev, node.next = anchor, after
        anchor.next = node
        if after is not None:
            after.prev = node
            low, high = anchor.pos, after.pos
        else:
            low, high = anchor.pos, anchor.pos + 2048.0
        middle = (low + high) / 2
        if low < middle < high:
            node.pos = middle
        else:
            self._renumber()

    def _renumber(self) -> None:
        node, pos = self.head, 0.0
        while node is not None:
            pos += 1024.0
            node.pos = pos
            node = node.next

    # -- building ----------------------------------------------------------------

    def drop(self) -> None:
        """Unlink the records: their links (the list, a group and its nodes) are cycles, which reference counting
        cannot free; left to the garbage collector, they cost a collection that walks them all after the pass."""
        for node in self.gone:
            node.group = node.into = node.operands = node.results = None
        node, self.head = self.head, None
        while node is not None:  # (a node holds its values' records, which hold it: their readers, their node)
            node.group, node.prev, node.operands, node.results, node.next, node = None, None, None, None, None, node.next

    def build(self, rewriter) -> bool:
        """Make the IR what the rewrites would have made it; whether anything changed.

        A group's ops are moved into its body, not cloned (each is in one group); the constants and views it
        reads are cloned (others may read them too), each constant value once per body (where the rewrites
        leave a copy per use until fusion-canonicalize's CSE keeps the first), except a view nobody reads
        outside the groups: the body that absorbed it last takes the view itself, where the rewrites would
        clone it and erase it. The analyses hear what the rewrites' clones would have told them: each group
        inserted, its results replacing the ops', the ops gone from the function level.
        """
        if not self.gone:
            return False
        # Each group goes before the next original op that stays where it is; moved ops follow what precedes them.
        order = []
        node = self.head
        while node is not None:
            order.append(node)
            node = node.next
        moved = self.moved
        anchor_of = {}  # group node -> that op
        anchor = None
        for node in reversed(order):
            if node.group is not None:
                anchor_of[node] = anchor
            elif node not in moved:
                anchor = node.op
        # (Where no analysis is live, as in a planned run outside checking mode, nothing is announced.)
        inserted, replaced, erased = rewriter.heard("op_inserted"), rewriter.heard("value_replaced"), rewriter.heard("op_erased")
        built = []
        cursor = None
        for node in order:
            if node.group is not None:
                anchor = anchor_of[node]
                group, end = self._build_group(node.group, node.op.location, anchor)
                if inserted:
                    rewriter.inserted(group, anchor)
                built.append((node.group, group, end))
                cursor = group
            elif node in moved:
                rewriter.move_after(node.op, cursor)
                cursor = node.op
            else:
                cursor = node.op
        for record, group, end in built:
            # The uses outside the body: the ops moved in and the yield read `old` still.
            inside = [node.op for _, node in record.entries if node.group is not None]
            inside.append(end)
            for old, new in zip(record.results, group.results):
                old = old.value
                if replaced:
                    rewriter.value_replaced(old, new)
                old.replace_all_uses_except(new, inside)
        # Users before what they read: in reverse block order, as the ops stood.
        if erased:
            for node in sorted(self.gone, key=_INDEX, reverse=True):
                rewriter.moved_into_group(node.op)
        return True

    def erase_dead_constants(self, rewriter) -> None:
        """`rewriter.erase_dead_constants` on the built body, from the listed reads: the constants and lists
        nobody reads any more (their readers erased or moved into groups), a list before its items."""
        gone = self.dead.union(self.gone)
        for node in reversed(self.constant_like):
            if node in gone:
                continue
            for user in node.results[0].readers or ():
                if user not in gone:
                    break
            else:
                rewriter.erase(node.op)
                gone.add(node)

    def _build_group(self, record: _Group, loc, anchor):
        inputs = [v.value for v in record.inputs]
        results = [r.value for r in record.results]
        group = build_group(inputs, [r.type for r in results], kind=record.kind, loc=loc, ip=ir.InsertionPoint(anchor))
        block = group.regions[0].blocks[0]
        mapping = dict(zip(inputs, block.arguments))
        end = build_yield(results, ip=ir.InsertionPoint(block))
        shared: dict = {}  # one clone per constant value
        # The constant ops cloned (or shared) into this body, by identity: each op has one Python object here, kept
        # alive by the plan, and a constant two entries read is mapped already when the second comes.
        cloned: set[int] = set()
        last_taken = self.last_taken
        for entry in record.entries:
            constants, node = entry
            if constants:
                fresh = [c for c in constants if id(c) not in cloned]
                if fresh:
                    cloned.update(map(id, fresh))
                    clone_ops_into(fresh, block, mapping, before=end, shared=shared)
            if node.group is None:  # a view
                if last_taken.get(node) is not entry:  # read elsewhere too: cloned
                    clone_ops_into([node.op], block, mapping, before=end)
                    continue
                # Itself: the ops after it read it, not a clone of it made before (a body may hold two).
                mapping.pop(node.results[0].value, None)
            op = node.op.operation
            op.move_before(end)
            listed = None
            for k, v in enumerate(node.operands):
                new = mapping.get(v.value)
                if new is not None:
                    if listed is None:
                        listed = op.operands
                    listed[k] = new
        return group, end.operation


def _from_reduction(record: _Value) -> bool:
    return record.node.name in REDUCTIONS


def _nested_reads(op) -> list:
    """The operands of the ops in an op's nested regions (those defined inside are not tracked: never looked up)."""
    reads = []

    def visit(inner):
        for v in inner.operands:
            reads.append(v)
        return ir.WalkResult.ADVANCE

    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner.operation.walk(visit)
    return reads
