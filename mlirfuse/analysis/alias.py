"""Alias and mutation analysis: which tensor values share storage, and which ops write it.

torch-mlir models mutation with non-value tensors (`!torch.tensor`):
`torch.copy.to_tensor` makes fresh storage holding a value,
`torch.copy.to_vtensor` reads the storage back as a value, in-place ATen ops
(`torch.aten.add_.Tensor`, `torch.aten.relu_`, ...) and
`torch.overwrite.tensor.contents` write it, and view ops (view, permute,
slice ...) give the same storage another name. The IR torch.export produces
has none of this; the analysis is what lets a pass tell a mutation it may
remove (`fusion-functionalize`) from one it must keep.

A value's parent is the value whose storage it shares: a view's operand, or
the operand an in-place op (or an `out=` variant) writes and returns.
Storage classes are the trees; copies and every other op make fresh
storage. Writes are recorded per written value; a write by an op nested in
a func-level op's region (an `if` arm) counts as a write by that op.
Function arguments of type `!torch.tensor` are the caller's storage: they
may alias each other, and writes to them are seen outside.

Which operands an op writes follows torch-mlir's ODS, which derives it from
the PyTorch schemas (`Tensor(a!)`): in-place variants (a trailing `_`) write
their first operand, `out=` variants their `out` operand, and a few ops
without a functional-looking name are listed in `_WRITES`. An op outside the
torch dialect (a call, an unknown op) given a non-value tensor may write it.
"""

from __future__ import annotations

from mlirfuse.analysis.values import Key, ValueAnalysis, is_non_value_tensor, value_key
from mlirfuse.ir import ir, op_id, torch_name
from mlirfuse.ops.views import ALIASING_OPS

# Mutating ops whose names do not say so (not ReadOnly in torch-mlir's ODS): operands written.
_WRITES = {
    "torch.overwrite.tensor.contents": (1,),
    "torch.aten.rrelu_with_noise": (1,),
}

# Ops that take non-value tensors without writing them although they are not torch ops.
_NON_WRITERS = frozenset({"func.return"})


def is_inplace(name: str) -> bool:
    """`torch.aten.<base>_[.overload]`, but not the dunder ops (`__and__`)."""
    parts = name.split(".")
    return name.startswith("torch.aten.") and parts[2].endswith("_") and not parts[2].startswith("__")


def _is_out_variant(name: str) -> bool:
    parts = name.split(".")
    return name.startswith("torch.aten.") and len(parts) > 3 and (parts[3] == "out" or parts[3].endswith("_out"))


def written_operands(op) -> tuple[int, ...]:
    """Positions of the operands `op` may write."""
    name = torch_name(op)
    if name in _WRITES:
        return _WRITES[name]
    if is_inplace(name):
        return (0,)
    if _is_out_variant(name):
        return (len(op.operands) - 1,)
    if name.startswith("torch.") or name in _NON_WRITERS:
        return ()
    return tuple(i for i, v in enumerate(op.operands) if is_non_value_tensor(v.type))


def _written_values(op):
    """Keys of the values `op` may write, itself or through an op nested in its regions (an `if` arm)."""
    for i in written_operands(op):
        yield value_key(op.operands[i])
    if op.operation.name in ("fusion.group", "fusion.kernel"):
        return  # isolated, value-semantic bodies: nothing inside can write a value outside
    for region in op.regions:
        for block in region.blocks:
            for nested in block.operations:
                yield from _written_values(nested)


def _aliased_operand(op) -> int | None:
    """The operand whose storage `op`'s result shares, if any."""
    name = torch_name(op)
    if name in ALIASING_OPS or is_inplace(name):
        return 0
    if _is_out_variant(name):
        return len(op.operands) - 1
    return None


def _op_key(op) -> Key:
    """Writers are labelled in the same table as values, under a key no value has."""
    return op_id(op), None


class AliasAnalysis(ValueAnalysis):
    name = "alias"

    def __init__(self, anchor):
        super().__init__(anchor)
        self.writes: dict[Key, list[Key]] = {}  # writer op -> values it writes
        self.written_by: dict[Key, set[Key]] = {}  # value -> writer ops

    def _value_facts(self, value, op):
        # The fact: is this the caller's storage (a mutable function argument)?
        if op is None:
            return is_non_value_tensor(value.type), None
        i = _aliased_operand(op)
        return False, (op.operands[i] if i is not None else None)

    # -- updates ------------------------------------------------------------

    def add_op(self, op, position: int | None = None) -> None:
        super().add_op(op, position)
        self._add_writes(op, position)

    def operands_changed(self, op) -> None:
        super().operands_changed(op)
        self._drop_writes(op)
        self._add_writes(op)

    def _add_writes(self, op, position: int | None = None) -> None:
        written = [k for k in dict.fromkeys(_written_values(op)) if k in self.facts]
        if not written:
            return
        key = _op_key(op)
        self.label[key] = f"'{op.operation.name}'" + ("" if position is None else f" #{position}")
        self.writes[key] = written
        for k in written:
            self.written_by.setdefault(k, set()).add(key)

    def _drop_writes(self, op) -> None:
        key = _op_key(op)
        for k in self.writes.pop(key, []):
            self.written_by[k].discard(key)
        self.label.pop(key, None)

    def replace_value(self, old: ir.Value, new: ir.Value) -> None:
        old_key, new_key = value_key(old), value_key(new)
        writers = self.written_by.pop(old_key, set())
        for w in writers:
            self.writes[w] = [new_key if k == old_key else k for k in self.writes[w]]
        if writers:
            self.written_by.setdefault(new_key, set()).update(writers)
        super().replace_value(old, new)

    def erase_op(self, op) -> None:
        self._drop_writes(op)
        super().erase_op(op)

    def _forget(self, key: Key) -> None:
        for w in self.written_by.pop(key, set()):
            self.writes[w].remove(key)
        super()._forget(key)

    # -- queries ------------------------------------------------------------

    def _classes(self, key: Key) -> list[Key]:
        """Roots of the classes `key`'s storage may share: the caller's arguments may all be one."""
        root = self.root(key)
        if not self.facts[root]:
            return [root]
        return [k for k, caller in self.facts.items() if caller and self.parent[k] is None]

    def may_alias(self, a: ir.Value, b: ir.Value) -> bool:
        return self.root(value_key(b)) in self._classes(value_key(a))

    def aliases(self, value: ir.Value) -> list[Key]:
        """Keys (`value_key`) of the values sharing `value`'s storage, itself included."""
        return self.members(value_key(value))

    def writers(self, value: ir.Value) -> set[int]:
        """`op_id`s of the ops that may write `value`'s storage."""
        return {w[0] for w in self._writer_keys(value_key(value))}

    def _writer_keys(self, key: Key) -> set[Key]:
        return {w for root in self._classes(key) for m in self.members(root) for w in self.written_by.get(m, ())}

    def is_mutated(self, value: ir.Value) -> bool:
        return bool(self._writer_keys(value_key(value)))

    # -- checking -----------------------------------------------------------

    def _show(self, key: Key, name) -> str:
        root = self.root(key)
        if root != key:
            return f"storage of {name(root)}"
        own = "the caller's storage" if self.facts[key] else "own storage"
        writers = sorted(name(w) for m in self.members(key) for w in self.written_by.get(m, ()))
        return f"{own}, " + (f"written by {', '.join(writers)}" if writers else "never written")

    def diff(self, fresh: "AliasAnalysis") -> list[str]:
        problems = super().diff(fresh)
        stale = [self.label[w] for w in self.writes if w not in fresh.writes]
        if stale:
            problems.append(f"{len(stale)} writers no longer in the IR: {', '.join(stale[:5])}")
        return problems
