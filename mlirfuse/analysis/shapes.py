"""Shape facts: each tensor value's shape and dtype, and which values share an iteration space.

Fusion asks whether one kernel can index two values alike (the same
iteration space), whether they broadcast against each other, and whether a
value is only read for its size or dtype (then nothing needs to compute it).

Shape and dtype come from the type. Statically shaped values share an
iteration space when their shapes are equal. A dynamic size (`?`) equals
only itself, so a value's parent is the value it provably has the shape of:
the one tensor operand of an elementwise op, the operand of a copy or a
static-info cast, or, for a fusion.group result, the group input it is
computed from by such ops. A tree of these links is one iteration space.
Use lists are not facts kept here: MLIR keeps them current, so
`size_only_uses` reads them.
"""

from __future__ import annotations

from mlirfuse.analysis.values import Key, ValueAnalysis, is_tensor_type, value_key
from mlirfuse.ir import Shape, ir, last_op, parse_tensor_type
from mlirfuse.ops.elementwise import RULES

# Ops that read only a tensor's metadata (operand #0).
SIZE_QUERIES = frozenset(
    {"torch.aten.size.int", "torch.aten.size", "torch.aten.dim", "torch.aten.numel", "torch.prim.dtype"}
)

# Results with the shape of operand #0.
_SHAPE_COPIES = frozenset({"torch.copy.to_tensor", "torch.copy.to_vtensor", "torch.tensor_static_info_cast"})

def type_facts(t: ir.Type) -> tuple[Shape | None, str | None]:
    """(shape, torch dtype name) of a tensor type, value or not; None where the type does not say."""
    parsed = parse_tensor_type(t)
    return (None, None) if parsed is None else parsed[1:]


def format_shape(shape: Shape | None) -> str:
    return "*" if shape is None else "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _same_shape_operand(op) -> ir.Value | None:
    """The operand `op`'s result provably has the shape of, if any."""
    name = op.operation.name
    if name in _SHAPE_COPIES:
        return op.operands[0]
    if name in RULES:
        tensors = [v for v in op.operands if is_tensor_type(v.type)]
        if len(tensors) == 1:
            return tensors[0]
    return None


def _group_input(group, index: int) -> ir.Value | None:
    """The group input result #`index` is computed from by shape-preserving ops, if any."""
    block = group.regions[0].blocks[0]
    value = last_op(block).operands[index]
    while not isinstance(value.owner, ir.Block):
        value = _same_shape_operand(value.owner)
        if value is None:
            return None
    return group.operands[ir.BlockArgument(value).arg_number]


class ShapeAnalysis(ValueAnalysis):
    name = "shapes"

    def _value_facts(self, value, op):
        if op is None:
            parent = None
        elif op.operation.name == "fusion.group":
            parent = _group_input(op, ir.OpResult(value).result_number)
        else:
            parent = _same_shape_operand(op)
        return type_facts(value.type), parent

    # -- queries ------------------------------------------------------------

    def shape(self, value: ir.Value) -> Shape | None:
        return self.facts[value_key(value)][0]

    def dtype(self, value: ir.Value) -> str | None:
        return self.facts[value_key(value)][1]

    def same_space(self, a: ir.Value, b: ir.Value) -> bool:
        """Provably the same shape, so one set of indices walks both."""
        return self._space(value_key(a)) == self._space(value_key(b))

    def broadcast_compatible(self, a: ir.Value, b: ir.Value) -> bool:
        """Provably broadcastable against each other (torch's rules: sizes equal or 1, from the right)."""
        if self.same_space(a, b):
            return True
        sa, sb = self.shape(a), self.shape(b)
        if sa is None or sb is None:
            return False
        return all(x == 1 or y == 1 or (x is not None and x == y) for x, y in zip(reversed(sa), reversed(sb)))

    @staticmethod
    def size_only_uses(value: ir.Value) -> bool:
        """`value` is read, and only for its metadata (sizes, rank, dtype)."""
        uses = list(value.uses)
        return bool(uses) and all(u.owner.operation.name in SIZE_QUERIES and u.operand_number == 0 for u in uses)

    def _space(self, key: Key) -> tuple:
        """("shape", sizes) for a statically known space, else ("value", root of the class)."""
        while True:
            shape = self.facts[key][0]
            if shape is not None and None not in shape:
                return "shape", shape
            if self.parent[key] is None:
                return "value", key
            key = self.parent[key]

    # -- checking -----------------------------------------------------------

    def _show(self, key: Key, name) -> str:
        shape, dtype = self.facts[key]
        text = f"{format_shape(shape)} {dtype or '?'}"
        if shape is not None and None not in shape:
            return text
        kind, space = self._space(key)
        if kind == "shape":
            return f"{text}, shaped {format_shape(space)}"
        return text + (", own iteration space" if space == key else f", iteration space of {name(space)}")
