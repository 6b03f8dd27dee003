"""Facts about the tensor values of function bodies, kept current by the rewrites.

The alias and the shape analysis share this base. Each tracks the tensor
values of every function body (arguments and results of func-level ops;
group bodies are value-semantic and private to their group) and links a
value to at most one *parent*, the value it shares something with: its
storage (aliasing) or its iteration space (shapes). The links form trees;
a tree is a class and its root names it.

Values are keyed by `(op_id(owner), result #)`, arguments by
`(op_id(func), -1 - argument #)`, never by Python objects, which the bindings
recycle. The rewriter's notifications keep the facts current (through
`add_op`, `replace_value` and `erase_op`); `diff` lists how they differ from
a fresh computation.
"""

from __future__ import annotations

import functools
from typing import Iterator

from mlirfuse.analysis import Analysis, entries_diff
from mlirfuse.ir import ir, op_id

Key = tuple[int, int]
# Differing values listed by `diff` before it only counts the rest.
MAX_LINES = 5


@functools.lru_cache(maxsize=4096)  # types are uniqued and hashable; str(t) is the slow part
def is_tensor_type(t: ir.Type) -> bool:
    """`!torch.vtensor...` (value semantics) or `!torch.tensor...` (mutable storage)."""
    return str(t).startswith(("!torch.vtensor", "!torch.tensor"))


@functools.lru_cache(maxsize=4096)
def is_non_value_tensor(t: ir.Type) -> bool:
    return str(t).startswith("!torch.tensor")


def value_key(value: ir.Value) -> Key:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return op_id(owner.owner), -1 - ir.BlockArgument(value).arg_number
    return op_id(owner), ir.OpResult(value).result_number


def function_blocks(anchor) -> Iterator[tuple[str, ir.Block]]:
    """(function name, body) of each function defined under `anchor` (a module)."""
    for op in anchor.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and len(op.regions[0].blocks):
            yield ir.StringAttr(op.attributes["sym_name"]).value, op.regions[0].blocks[0]


def _in_function_body(op) -> bool:
    parent = op.operation.parent
    return parent is not None and parent.name == "func.func"


class ValueAnalysis(Analysis):
    """Per-value facts plus parent links; subclasses say what a fact and a parent are."""

    def __init__(self, anchor):
        self.anchor = anchor
        self.facts: dict[Key, object] = {}
        self.parent: dict[Key, Key | None] = {}
        self.children: dict[Key, set[Key]] = {}
        self.label: dict[Key, str] = {}  # for diffs: never print a value that may be gone

    # -- what a subclass defines --------------------------------------------

    def _value_facts(self, value: ir.Value, op) -> tuple[object, ir.Value | None]:
        """The fact for a tensor value and its parent value (None: a root); `op` defines it (None: an argument)."""
        raise NotImplementedError

    def _show(self, key: Key, name) -> str:
        """A value's facts in words; `name(key)` names another value."""
        raise NotImplementedError

    # -- building -----------------------------------------------------------

    @classmethod
    def compute(cls, anchor) -> "ValueAnalysis":
        analysis = cls(anchor)
        for func_name, block in function_blocks(anchor):
            for i, arg in enumerate(block.arguments):
                if is_tensor_type(arg.type):
                    analysis._track(arg, None, f"argument #{i} of @{func_name}")
            for i, op in enumerate(block.operations):
                analysis.add_op(op, position=i)
        return analysis

    def add_op(self, op, position: int | None = None) -> None:
        """Facts for a new func-level op's tensor results (its operands must be known already)."""
        name = f"'{op.operation.name}'" + ("" if position is None else f" #{position}")
        results = list(op.results)
        for i, result in enumerate(results):
            if is_tensor_type(result.type):
                self._track(result, op, name if len(results) == 1 else f"{name} result #{i}")

    def _track(self, value: ir.Value, op, label: str) -> None:
        key = value_key(value)
        fact, parent = self._value_facts(value, op)
        parent_key = value_key(parent) if parent is not None else None
        self.facts[key] = fact
        self.label[key] = label
        self._link(key, parent_key if parent_key in self.facts else None)

    def _link(self, key: Key, parent: Key | None) -> None:
        self.parent[key] = parent
        self.children.setdefault(key, set())
        if parent is not None:
            self.children[parent].add(key)

    # -- notifications (see RewriteListener) ----------------------------------
    # Only func-level values have facts; ops inside group bodies are not ours.

    def op_inserted(self, op, before) -> None:
        if _in_function_body(op):
            self.add_op(op)

    def value_replaced(self, old, new) -> None:
        self.replace_value(old, new)

    def op_erased(self, op) -> None:
        self.erase_op(op)

    def operands_changed(self, op) -> None:
        """Re-link `op`'s results: their parent may be one of the new operands."""
        for result in op.results:
            key = value_key(result)
            if key not in self.facts:
                continue
            _, parent = self._value_facts(result, op)
            parent_key = value_key(parent) if parent is not None else None
            if self.parent[key] is not None:
                self.children[self.parent[key]].discard(key)
            self._link(key, parent_key if parent_key in self.facts else None)

    # -- updates ------------------------------------------------------------

    def replace_value(self, old: ir.Value, new: ir.Value) -> None:
        """`new` replaces `old` (call alongside `old.replace_all_uses_with(new)`).

        `new` takes over `old`'s facts unless it has its own (an existing
        value, or one of an op already given to `add_op`); either way the
        values hanging off `old` now hang off `new`, and `old` is forgotten.
        """
        old_key, new_key = value_key(old), value_key(new)
        if old_key == new_key or old_key not in self.facts:
            return  # not a tensor: no facts to hand over
        if new_key not in self.facts:
            self.facts[new_key] = self.facts[old_key]
            self.label[new_key] = f"'{new.owner.operation.name}'" if not isinstance(new.owner, ir.Block) else "argument"
            self._link(new_key, self.parent[old_key])
        for child in list(self.children[old_key]):
            self.parent[child] = new_key
            self.children[new_key].add(child)
        self.children[old_key].clear()
        self._forget(old_key)

    def erase_op(self, op) -> None:
        """Forget `op`'s results; call before erasing it (its address may be reused)."""
        oid = op_id(op)
        for i in range(len(op.results)):
            if (oid, i) in self.facts:
                self._forget((oid, i))

    def _forget(self, key: Key) -> None:
        parent = self.parent.pop(key)
        if parent is not None:
            self.children[parent].discard(key)
        for child in self.children.pop(key):
            self.parent[child] = None
        del self.facts[key], self.label[key]

    # -- queries ------------------------------------------------------------

    def knows(self, value: ir.Value) -> bool:
        return value_key(value) in self.facts

    def root(self, key: Key) -> Key:
        while self.parent[key] is not None:
            key = self.parent[key]
        return key

    def members(self, key: Key) -> list[Key]:
        """Every value in `key`'s class."""
        stack, found = [self.root(key)], []
        while stack:
            key = stack.pop()
            found.append(key)
            stack.extend(self.children[key])
        return found

    # -- checking -----------------------------------------------------------

    def diff(self, fresh: "ValueAnalysis") -> list[str]:
        def name(key: Key) -> str:
            return fresh.label.get(key) or self.label.get(key, "?")

        problems = entries_diff(self.facts, fresh.facts, self.label, fresh.label, "values", "facts")
        differing = []
        for key in fresh.facts:
            if key in self.facts:
                mine, actual = self._show(key, name), fresh._show(key, name)
                if mine != actual:
                    differing.append(f"{name(key)}: {mine} in the maintained analysis, {actual} in the IR")
        problems += differing[:MAX_LINES]
        if len(differing) > MAX_LINES:
            problems.append(f"... and {len(differing) - MAX_LINES} more values")
        return problems
