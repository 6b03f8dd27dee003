"""FusionRewriter: the one way passes change function bodies, telling every live analysis.

As xDSL's `PatternRewriter` with its `PatternRewriterListener`s: a pass
inserts, clones, moves, replaces and erases func-level ops through the
rewriter, and each change is announced to every analysis the pipeline's
`AnalysisManager` holds (see `mlirfuse.analysis.RewriteListener`), which
updates itself. No pass calls an analysis's update methods. Building an op's
body (ops inside a new group) is construction, not rewriting: a new op is
announced once it is complete.

`wrap` and `merge` are the two group-making rewrites fusion passes share;
legality is the passes' business, the IR surgery is here.

Inside an MLIR pattern (the walk driver) erasures go through the driver's
own rewriter (`driving`), so the walk never visits an erased op.
"""

from __future__ import annotations

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.dialect import GroupKind, build_group, build_yield, group_kind
from mlirfuse.ir import constant_like_ops, ir, last_op, result_index
from mlirfuse.passes.base import body_ops, clone_ops_into, function_level_ops, unique_ops


class FusionRewriter:
    def __init__(self, am: AnalysisManager):
        self.am = am
        self._driver = None  # the MLIR PatternRewriter while a pattern runs

    def driving(self, driver) -> "_Driving":
        """Erase through `driver` (an MLIR pattern's rewriter) while a pattern runs (a `with` block)."""
        return _Driving(self, driver)

    def _notify(self, event: str, *args) -> None:
        for handler in self.am.handlers(event):
            handler(*args)

    # -- primitives ---------------------------------------------------------

    def insert_before(self, op, anchor):
        """Insert `op` (detached and complete) right before `anchor`."""
        ir.InsertionPoint(anchor).insert(op)
        self._notify("op_inserted", op, anchor)
        return op

    def inserted(self, op, anchor) -> None:
        """Announce `op`, built in place right before `anchor` and complete."""
        self._notify("op_inserted", op, anchor)

    def clone_before(self, op, anchor):
        """A copy of `op`, reading the same values, right before `anchor`."""
        clone = op.operation.clone(ip=ir.InsertionPoint(anchor))
        self._notify("op_inserted", clone, anchor)
        return clone

    def move_after(self, op, anchor) -> None:
        op.move_after(anchor)
        self._notify("op_moved", op, anchor)

    def set_operand(self, op, index: int, value: ir.Value) -> None:
        op.operation.operands[index] = value
        self._notify("operands_changed", op)

    def value_replaced(self, old: ir.Value, new: ir.Value) -> None:
        """Announce that the uses of `old` read `new` now, where the caller replaced them (not all of them:
        `old` lives on in a group's body)."""
        self._notify("value_replaced", old, new)

    def heard(self, event: str) -> bool:
        """Does a live analysis listen to `event` (a `RewriteListener` method name)? Asked once by a caller about to
        announce many rewrites of one kind (a planned pass building its groups), not per announcement."""
        return bool(self.am.handlers(event))

    def moved_into_group(self, op) -> None:
        """Announce `op`, moved from the function level into a new group's body: to the analyses, which keep
        function-level ops, it is gone as if erased."""
        self._notify("op_erased", op)

    def replace_uses(self, old: ir.Value, new: ir.Value) -> None:
        """Every use of `old` reads `new` instead."""
        self._notify("value_replaced", old, new)
        old.replace_all_uses_with(new)

    def erase(self, op) -> None:
        """Erase `op`, whose results nobody reads any more."""
        self._notify("op_erased", op)
        if self._driver is not None:
            self._driver.erase_op(op)
        else:
            op.operation.erase()

    def replace_op(self, op, values) -> None:
        """`op`'s results become `values`, and `op` goes."""
        self._replace_results(op, op.results, values)

    def _replace_results(self, op, results, values) -> None:
        """`replace_op` given `op`'s results (`results`), listed already."""
        for old, new in zip(results, values):
            self.replace_uses(old, new)
        self.erase(op)

    def _erase_unread(self, ops: list) -> None:
        """Erase those of `ops` (cloned into a group) nobody reads any more, the last first."""
        for op in reversed(ops):
            if all(next(r.uses, None) is None for r in op.results):
                self.erase(op)

    def _move_after(self, ops: list, anchor) -> None:
        """Move `ops` (in order) right after `anchor`, keeping their order."""
        for op in ops:
            self.move_after(op, anchor)
            anchor = op

    def erase_dead_constants(self, module: ir.Operation) -> None:
        """Erase func-level constants (and lists of them) nobody reads any more, e.g. after cloning into groups."""
        for ops in function_level_ops(module, _is_constant_or_list):
            for op in reversed(ops):  # a list before its items, which it may leave unread
                if next(op.result.uses, None) is None:
                    self.erase(op)

    # -- group rewrites -----------------------------------------------------

    def wrap(self, ops: list, kind: GroupKind, constant_ops=constant_like_ops):
        """One group holding `ops` (and clones of the constants they read, one per value), in place of the last one.

        The group's results are the last op's; the others are cloned in and
        erased once nobody else reads them (a cat's list, views a group reads
        through). Their other operands become group inputs. `constant_ops`:
        as `wrapped_inputs` takes it.
        """
        last = ops[-1]
        results = list(last.results)
        inputs, constants = wrapped_inputs(ops, constant_ops)
        group = build_group(inputs, [r.type for r in results], kind=kind, loc=last.location, ip=ir.InsertionPoint(last))
        block = group.regions[0].blocks[0]
        mapping = dict(zip(inputs, block.arguments))
        clone_ops_into(unique_ops(constants) + list(ops), block, mapping, shared={})
        build_yield([mapping[r] for r in results], ip=ir.InsertionPoint(block))
        self._notify("op_inserted", group, last)  # built in place, announced complete
        self._replace_results(last, results, list(group.results))
        self._erase_unread(ops[:-1])
        return group

    def wrap_siblings(self, members: list[list], kind: GroupKind, dependents: list, wrapped: list | None = None):
        """`wrap` of each of `members` (op lists, as `wrap` takes them), each group then merged into the next
        (`merge`), built once: the same group, where the last member's last op was.

        The members are siblings: none reads another. As the chain of merges
        leaves it, the body holds each member's constants and ops in turn,
        the inputs are the members' in order, each once, and the results are
        the last ops' results, the last member's first; but a view two members
        read is cloned once, and so is each constant value (however many
        constant ops hold it), where the chain holds a copy per member (per
        use) until fusion-canonicalize's CSE keeps the first. `dependents`: the ops
        between the first member and the last that read any of them, in
        order; each merge moves them after its group, and so does this.
        `wrapped`: each member's `wrapped_inputs`, if asked already.
        """
        if wrapped is None:
            wrapped = [wrapped_inputs(ops) for ops in members]
        inputs = _sibling_inputs(wrapped)
        yielded = _sibling_results(members)
        last = members[-1][-1]
        group = build_group(inputs, [r.type for r in yielded], kind=kind, loc=last.location, ip=ir.InsertionPoint(last))
        block = group.regions[0].blocks[0]
        mapping = dict(zip(inputs, block.arguments))
        _clone_siblings(members, wrapped, block, mapping, {})
        build_yield([mapping[r] for r in yielded], ip=ir.InsertionPoint(block))
        self._notify("op_inserted", group, last)  # built in place, announced complete
        self._replace_members(members, dict(zip(yielded, group.results)))
        self._move_after(dependents, group)
        return group

    def wrap_sibling_sets(self, sets: list[list[list]], kind: GroupKind, wrapped: list, consumer=None):
        """`merge(wrap_siblings(first), wrap_siblings(second))` of `sets` (`[first, second]`, or `[first]`: its
        group), then `merge` of `consumer` into that, built once: where the second set's last op was, or `consumer`.

        The sets are sibling sets as `wrap_siblings` takes them, the first's
        last op before the second's; no op of one reads the other, no op
        between them reads the first, nothing but `consumer` (if given) reads
        their results, and nothing moves. As the merges leave it: the first
        set's inputs, then the second's new ones, then the consumer's; the
        first's body (its views cloned once, each constant value once in the body), then the
        second's, then the consumer's ops (moved in, not cloned); the
        consumer's results, or without one the second's results, then the
        first's that are read. `wrapped`: each set's members' `wrapped_inputs`.
        """
        inputs = list(dict.fromkeys(v for set_wrapped in wrapped for v in _sibling_inputs(set_wrapped)))
        if consumer is None:
            yielded = _sibling_results(sets[-1]) + [
                r for members in reversed(sets[:-1]) for r in _sibling_results(members) if next(r.uses, None) is not None]
            anchor, types = sets[-1][-1][-1], [r.type for r in yielded]  # `merge` drops a result nobody reads
        else:
            produced = {r for members in sets for ops in members for r in ops[-1].results}
            c_operands = list(consumer.operands)
            inputs = list(dict.fromkeys(inputs + [v for v in c_operands if v not in produced]))
            anchor, types = consumer, [r.type for r in consumer.results]
        group = build_group(inputs, types, kind=kind, loc=anchor.location, ip=ir.InsertionPoint(anchor))
        block = group.regions[0].blocks[0]
        arguments = dict(zip(inputs, block.arguments))
        inside = {}  # each GEMM result -> its clone's
        shared: dict = {}  # one clone per constant value in the body
        for members, set_wrapped in zip(sets, wrapped):
            mapping = dict(arguments)  # each set clones its own views, as its own group would
            _clone_siblings(members, set_wrapped, block, mapping, shared)
            inside.update((r, mapping[r]) for ops in members for r in ops[-1].results)
        if consumer is None:
            build_yield([inside[r] for r in yielded], ip=ir.InsertionPoint(block))
            self._notify("op_inserted", group, anchor)  # built in place, announced complete
            self._replace_members([ops for members in sets for ops in members], dict(zip(yielded, group.results)))
            return group
        _, move_in = _yield_moving_in(consumer, block, [inside[v] if v in inside else arguments[v] for v in c_operands], [])
        move_in()
        self._notify("op_inserted", group, consumer)  # built in place, announced complete
        self._replace_results(consumer, list(consumer.results), list(group.results))
        self._replace_members([ops for members in sets for ops in members], {})  # read by the consumer alone
        return group

    def _replace_members(self, members: list[list], new: dict) -> None:
        """Each member's last op's results become their `new` values (unread ones have none), and it goes; then the
        member's other ops nobody reads any more."""
        for ops in members:
            last = ops[-1]
            for r in list(last.results):
                if r in new:
                    self.replace_uses(r, new[r])
            self.erase(last)
            self._erase_unread(ops[:-1])

    def wrap_into(self, op, consumer):
        """`merge(wrap([op], POINTWISE), consumer)` in one rewrite, `op` (a view) cloned in: as if `consumer` were its
        only reader, and erased if it was.

        The same group, built once: `op`'s inputs, then the consumer's; a
        clone of `op` (after the constants it reads), then the consumer's
        body ops. The consumer's block becomes the new body as it is (its ops
        are not walked): the clones go first, and its arguments give way to
        the new ones.
        """
        p_inputs, constants = wrapped_inputs([op])
        value = op.results[0]
        c_operands = list(consumer.operands)
        inputs = list(dict.fromkeys(p_inputs + [v for v in c_operands if v != value]))
        group = build_group(inputs, [r.type for r in consumer.results], kind=group_kind(consumer), loc=consumer.location,
                            ip=ir.InsertionPoint(consumer), body=False)
        block = consumer.regions[0].blocks[0]
        block.append_to(group.regions[0])
        old_arguments = list(block.arguments)
        location = ir.Location.current
        mapping = {v: block.add_argument(v.type, location) for v in inputs}
        clone_ops_into(unique_ops(constants) + [op], block, mapping, before=block.operations[0], shared={})
        for old, v in zip(old_arguments, c_operands):
            old.replace_all_uses_with(mapping[v])
        for _ in old_arguments:
            block.erase_argument(0)
        self._notify("op_inserted", group, consumer)  # built in place, announced complete
        self.replace_op(consumer, list(group.results))
        if next(value.uses, None) is None:
            self.erase(op)
        return group

    def merge(self, producer, consumer, dep: DependenceAnalysis, kind: GroupKind | None = None):
        """One group doing `producer` then `consumer`, where the consumer was.

        `kind` (default: reduction or scan if either is one, else pointwise) names a template's group.

        A producer result read outside the consumer becomes an extra result.
        The ops between the two that read the producer (found with `dep`)
        move after the merged group, which now computes what they read.
        """
        dependents, _ = dep.dependents_between(producer, consumer)
        # Each list asked of the bindings once: operands and results are Python objects made per question.
        p_operands, p_results = list(producer.operands), list(producer.results)
        c_operands, c_results = list(consumer.operands), list(consumer.results)
        p_result_set = set(p_results)  # a set lookup per operand, not an owner built per operand
        inputs = merged_operands(p_operands, p_result_set, c_operands)
        exported = _exported(p_results, c_operands)
        result_types = [r.type for r in c_results] + [r.type for r in exported]
        if kind is None:
            kinds = (group_kind(producer), group_kind(consumer))
            kind = (
                GroupKind.SCATTER if GroupKind.SCATTER in kinds
                else GroupKind.REDUCTION if GroupKind.REDUCTION in kinds
                else GroupKind.SCAN if GroupKind.SCAN in kinds else GroupKind.POINTWISE
            )
        p_block = producer.regions[0].blocks[0]
        if inputs[: len(p_operands)] == p_operands:
            # The producer's block (its ops and arguments: the first inputs) becomes the new body as it
            # is, so that a chain's growing group is not walked per merge; the consumer's ops move in.
            group = build_group(inputs, result_types, kind=kind, loc=consumer.location, ip=ir.InsertionPoint(consumer), body=False)
            p_block.append_to(group.regions[0])
            block = p_block
            for v in inputs[len(p_operands) :]:
                block.add_argument(v.type, ir.Location.current)
            arg_of = dict(zip(inputs, block.arguments))
            p_ops, p_yield = None, last_op(block)
            produced = list(p_yield.operands)
        else:
            # The producer reads a value twice: both bodies' ops move into a new block.
            group = build_group(inputs, result_types, kind=kind, loc=consumer.location, ip=ir.InsertionPoint(consumer))
            block = group.regions[0].blocks[0]
            arg_of = dict(zip(inputs, block.arguments))
            p_ops, p_yield = body_ops(producer)
            p_new = [arg_of[v] for v in p_operands]
            p_arg_values = dict(zip(p_block.arguments, p_new))
            produced = [p_arg_values.get(v, v) for v in p_yield.operands]

        # The consumer's ops move in after the producer's (no clones: the ops and their values stay
        # themselves); only the old bodies' block arguments are replaced.
        c_new = [produced[result_index(v)] if v in p_result_set else arg_of[v] for v in c_operands]
        terminator, move_consumer_in = _yield_moving_in(consumer, block, c_new, [produced[result_index(r)] for r in exported])
        if p_ops is None:
            p_yield.erase()  # the producer's own terminator, in the block taken over
        else:
            for op in p_ops:
                op.move_before(terminator)
            for old, new in zip(p_block.arguments, p_new):
                old.replace_all_uses_with(new)
        move_consumer_in()

        n = len(c_results)
        self._notify("op_inserted", group, consumer)  # built in place, announced complete
        self._notify("groups_merged", producer, consumer, group)
        results = list(group.results)
        for k, r in enumerate(exported):
            self.replace_uses(r, results[n + k])
        self._replace_results(consumer, c_results, results[:n])
        self.erase(producer)
        self._move_after(dependents, group)
        return group


class _Driving:
    """`FusionRewriter.driving`'s context; a class, not a generator: it is entered once per pattern call."""

    __slots__ = ("rewriter", "driver")

    def __init__(self, rewriter: FusionRewriter, driver):
        self.rewriter, self.driver = rewriter, driver

    def __enter__(self) -> FusionRewriter:
        self.rewriter._driver = self.driver
        return self.rewriter

    def __exit__(self, *exc) -> None:
        self.rewriter._driver = None


def _sibling_inputs(wrapped: list) -> list:
    """The inputs of a group of siblings, each member's (`wrapped`: their `wrapped_inputs`) in turn, each once."""
    return list(dict.fromkeys(v for member_inputs, _ in wrapped for v in member_inputs))


def _sibling_results(members: list[list]) -> list:
    """What a group of siblings yields: the last ops' results, the last member's first (as a chain of merges)."""
    return [r for ops in reversed(members) for r in ops[-1].results]


def _clone_siblings(members: list[list], wrapped: list, block: ir.Block, mapping: dict, shared: dict) -> None:
    """Clone each member's constants (`wrapped`: their `wrapped_inputs`) and ops in turn to the end of `block`, an op
    two members read once, and a constant equal to one cloned before not again (`shared`: as `clone_ops_into`
    takes it)."""
    cloned = set()
    fresh = []
    for ops, (_, constants) in zip(members, wrapped):
        for op in (*constants, *ops):
            if (operation := op.operation) not in cloned:
                cloned.add(operation)
                fresh.append(op)
    clone_ops_into(fresh, block, mapping, shared=shared)


def wrapped_inputs(ops: list, constant_ops=constant_like_ops) -> tuple[list, list]:
    """The inputs of a group wrapping `ops`, in order, each once, and the constants (and lists of constants, after
    their items) the ops read, which the group clones in.

    `constant_ops`: `constant_like_ops`, or a cache of it (many ops read one constant).
    """
    inside = {r for op in ops for r in op.results}
    operands: dict = {}
    constants = []
    for op in ops:
        for v in op.operands:
            read = constant_ops(v)
            if read is not None:
                constants += read
            elif v not in inside:
                operands.setdefault(v)
    return list(operands), constants


def _yield_moving_in(group, block: ir.Block, arguments: list, extra: list):
    """A yield ending `block` of what `group` yields, its block arguments read as `arguments`, then `extra`.

    Returns it and `move_in`, which moves `group`'s body ops before it and
    rewires them to `arguments` (no clones: the ops stay themselves).
    """
    g_block = group.regions[0].blocks[0]
    ops, g_yield = body_ops(group)
    values = dict(zip(g_block.arguments, arguments))
    terminator = build_yield([values.get(v, v) for v in g_yield.operands] + extra, ip=ir.InsertionPoint(block))

    def move_in() -> None:
        for op in ops:
            op.move_before(terminator)
        for old, new in zip(g_block.arguments, arguments):
            old.replace_all_uses_with(new)

    return terminator, move_in


def _is_constant_or_list(name: str) -> bool:
    return name.startswith("torch.constant.") or name == "torch.prim.ListConstruct"


def merged_inputs(producer, consumer) -> list[ir.Value]:
    """The operands of the group merging `producer` into `consumer`, in order, each once."""
    return merged_operands(list(producer.operands), set(producer.results), list(consumer.operands))


def merged_operands(p_operands: list, produced: set, c_operands: list) -> list[ir.Value]:
    """The producer's operands, then the consumer's that the producer does not compute (`produced`), each once."""
    return list(dict.fromkeys(p_operands + [v for v in c_operands if v not in produced]))


def merge_interface(producer, consumer) -> tuple[list[ir.Value], list[ir.Value]]:
    """The results of `producer` read outside `consumer` (extra results of the merged group) and the merged
    group's operands (`merged_inputs`), each operand and result list asked of the bindings once."""
    c_operands = list(consumer.operands)
    p_results = list(producer.results)
    return _exported(p_results, c_operands), merged_operands(list(producer.operands), set(p_results), c_operands)


def _exported(p_results, c_operands: list) -> list[ir.Value]:
    """The results read more often than `c_operands` (the consumer's operands) read them: read elsewhere too.

    Counted, not asked of each use's owner (a Python object per use): a group reads no value from above
    but through its operands.
    """
    return [r for r in p_results if sum(1 for _ in r.uses) > c_operands.count(r)]


def defined_by(value: ir.Value, op) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.operation == op.operation
