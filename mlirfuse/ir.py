"""The one module that imports torch-mlir's MLIR Python bindings.

Everything else in mlirfuse imports `ir`, `rewrite`, `passmanager` from here,
so a change of binding package (upstream `mlir`, a different torch-mlir
build) is a one-file change.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from torch_mlir import ir, passmanager, rewrite  # noqa: F401  (re-exported)
from torch_mlir.dialects import ext, func  # noqa: F401
from torch_mlir.dialects import torch as torch_dialect
from torch_mlir.dialects._ods_common import _cext

from mlirfuse.ops import dtypes

__all__ = [
    "ir", "rewrite", "DTYPES", "DTYPE_CODES", "parse_tensor_type", "passmanager", "ext", "func", "torch_context", "TensorType", "tensor_type",
    "computes", "VALUE_CONSTANTS", "constant_value", "constant_op_value", "constant_int_list", "is_constant", "is_constant_like", "constant_like_ops", "static_tensor_types", "reduced_static_type", "NO_CONSTANT", "parent_name", "defining_op", "result_index",
    "vtensor_type", "TorchBuilder", "op_id", "block_ops", "last_op", "add_dialect_search_prefix", "torch_name", "asm",
]


def torch_context() -> ir.Context:
    """A context with the `torch` and upstream dialects loaded (`mlirfuse.dialect.make_context` adds `fusion`)."""
    ctx = ir.Context()
    torch_dialect.register_dialect(ctx)
    return ctx


# The dtypes mlirfuse handles: torch dtype name -> (torch-mlir's spelling in
# `!torch.vtensor<[...],f32>`, torch's ScalarType code, as dtype operands
# carry it), a view of the one dtype table (`mlirfuse.ops.dtypes`).
DTYPES = {d.name: (d.asm, d.code) for d in dtypes.TABLE}
DTYPE_CODES = dtypes.DTYPE_CODES
_TORCH_DTYPES = dtypes.BY_ASM
_TENSOR = re.compile(r"^!torch\.(v?)tensor(?:<(\*|\[[^\]]*\]),(.+)>)?$")

Shape = tuple[int | None, ...]


@functools.lru_cache(maxsize=4096)  # types are uniqued and hashable; printing them is the slow part
def parse_tensor_type(t: ir.Type) -> tuple[bool, Shape | None, str | None] | None:
    """(value semantics?, shape, torch dtype name) of `!torch.vtensor`/`!torch.tensor` types; None for others.

    Shape is None when unranked or unsaid, a size None when `?`; dtype None when unsaid or not handled.
    """
    m = _TENSOR.match(str(t))
    if not m:
        return None
    value, sizes, spelling = m.groups()
    shape = None
    if sizes is not None and sizes != "*":
        dims = sizes[1:-1]
        shape = tuple(None if d == "?" else int(d) for d in dims.split(",")) if dims else ()
    return value == "v", shape, _TORCH_DTYPES.get(spelling)


@dataclass(frozen=True)
class TensorType:
    """Static facts of a `!torch.vtensor` type: shape (None for `?`) and dtype name."""

    shape: tuple[int | None, ...]
    dtype: str  # a torch dtype name, e.g. "float32"

    # Cached: `tensor_type` hands out one instance per type, asked again and again.
    @functools.cached_property
    def is_static(self) -> bool:
        return all(d is not None for d in self.shape)

    @functools.cached_property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@functools.lru_cache(maxsize=8192)
def asm(entity) -> str:
    """`str()` of a type or attribute, cached: both are uniqued and hashable, and printing them is slow."""
    return str(entity)


@functools.lru_cache(maxsize=4096)
def tensor_type(t: ir.Type) -> TensorType | None:
    """The shape and dtype of a ranked `!torch.vtensor<[d0,d1],dtype>` of a handled dtype; None for any other type."""
    parsed = parse_tensor_type(t)
    if parsed is None or not parsed[0] or parsed[1] is None or parsed[2] is None:
        return None
    return TensorType(parsed[1], parsed[2])


_NO_CONSTANT = object()


# The attribute class of a `torch.constant.*` op's `value`; the others (str, device) hold a StringAttr.
_CONSTANT_ATTRS = {"torch.constant.int": ir.IntegerAttr, "torch.constant.float": ir.FloatAttr, "torch.constant.bool": ir.BoolAttr}

# The constants holding their value in a `value` attribute alone: two are equal where name and value are (the
# type is the name's). fusion-canonicalize's CSE keys them so, `clone_ops_into(shared=...)` shares clones so, a
# canonical form spells them so.
VALUE_CONSTANTS = frozenset((*_CONSTANT_ATTRS, "torch.constant.str", "torch.constant.device"))


def constant_value(value: ir.Value):
    """The Python value of a `torch.constant.*` result, or `NO_CONSTANT`."""
    owner = value.owner
    if not isinstance(owner, ir.OpView):
        return _NO_CONSTANT
    return _constant_op_value(owner, owner.operation.name)


def constant_op_value(op):
    """The Python value of a `torch.constant.*` op, or `NO_CONSTANT` (`constant_value` given the op)."""
    return _constant_op_value(op, op.operation.name)


def _constant_op_value(owner, name: str):
    if not name.startswith("torch.constant."):
        return _NO_CONSTANT
    if name == "torch.constant.none":
        return None
    attr = owner.attributes["value"]
    cls = _CONSTANT_ATTRS.get(name, ir.StringAttr)
    return (attr if type(attr) is cls else cls(attr)).value  # the bindings usually hand out the subclass already


NO_CONSTANT = _NO_CONSTANT


def static_tensor_types(*values: ir.Value) -> list[TensorType] | None:
    """The tensor types of `values`, or None unless all are statically shaped tensors."""
    types = [tensor_type(v.type) for v in values]
    if any(t is None or not t.is_static for t in types):
        return None
    return types


def reduced_static_type(value: ir.Value, dims) -> TensorType | None:
    """`value`'s tensor type if the sizes along `dims` are static (the others may be `?`), else None."""
    t = tensor_type(value.type)
    if t is None or dims is None or any(t.shape[d] is None for d in dims):
        return None
    return t


def constant_int_list(value: ir.Value) -> list[int] | None:
    """The ints of a `torch.prim.ListConstruct` of int constants, else None."""
    owner = value.owner
    if isinstance(owner, ir.OpView) and owner.operation.name == "torch.prim.ListConstruct":
        items = [constant_value(v) for v in owner.operands]
        if all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            return items
    return None


def is_constant(value: ir.Value) -> bool:
    owner = value.owner
    return isinstance(owner, ir.OpView) and _is_constant_op(owner, owner.operation.name)


def _is_constant_op(owner, name: str) -> bool:
    # The verified torch.constant ops hold a value of their kind: no need to read it (hot: every operand of every wrap).
    if name in VALUE_CONSTANTS or name == "torch.constant.none":
        return True
    return _constant_op_value(owner, name) is not _NO_CONSTANT


def computes(op) -> bool:
    """An op that counts as work in a group or kernel body (the fusion report's ops): no constants, lists or terminators."""
    return not op.operation.name.startswith(("torch.constant.", "torch.prim.", "fusion."))


def is_constant_like(value: ir.Value) -> bool:
    """A constant, or a list of constants (view sizes, reduction dims): cloned into groups, never an operand."""
    return constant_like_ops(value) is not None


def constant_like_ops(value: ir.Value) -> list | None:
    """The ops of a constant-like `value` (`is_constant_like`): a constant's op, or a list's items' ops then the
    list's; None if it is not one. (Each owner is asked of the bindings once: that makes a Python object.)"""
    owner = value.owner
    if not isinstance(owner, ir.OpView):
        return None
    name = owner.operation.name
    if name == "torch.prim.ListConstruct":
        items = []
        for v in owner.operands:
            item = v.owner
            if not (isinstance(item, ir.OpView) and _is_constant_op(item, item.operation.name)):
                return None
            items.append(item)
        return [*items, owner]
    return [owner] if _is_constant_op(owner, name) else None


def torch_name(op) -> str:
    """`torch.aten.add_.Tensor`; a `torch.operator "aten.foo_"` (or `"torch.aten.foo_"`) is named `torch.aten.foo_`.

    The FX importer spells ops torch-mlir does not define as `torch.operator`.
    """
    name = op.operation.name
    if name == "torch.operator":
        target = ir.StringAttr(op.attributes["name"]).value
        return target if target.startswith("torch.") else "torch." + target
    return name


def parent_name(op) -> str | None:
    parent = op.operation.parent
    return parent.name if parent is not None else None


def defining_op(value: ir.Value) -> ir.Operation | None:
    """The operation that defines `value`; None for a block argument."""
    owner = value.owner
    return owner.operation if isinstance(owner, (ir.OpView, ir.Operation)) else None


def block_ops(block: ir.Block) -> tuple[list, object]:
    """The ops of a block and its terminator, separately."""
    ops = list(block.operations)
    return ops[:-1], ops[-1]


def body_operations(region_op) -> tuple[list, ir.Operation]:
    """The ops of `region_op`'s (one-block) body as `ir.Operation`s, and its terminator, separately.

    Found by a walk that does not enter them: it hands out plain operations,
    where listing the block makes an `OpView` per op (its class looked up by
    name), about twice the cost.
    """
    found: list = []
    advance, skip = ir.WalkResult.ADVANCE, ir.WalkResult.SKIP

    def visit(op):
        found.append(op)
        return skip if len(found) > 1 else advance  # the first visit is `region_op` itself

    region_op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[1:-1], found[-1]


def last_op(block: ir.Block):
    """A block's last op (its terminator), found without listing the others.

    The bindings index a block's ops in C++, but make a Python object for
    every op a `list(block.operations)` holds: 1 µs or so each.
    """
    ops = block.operations
    return ops[len(ops) - 1]


def add_dialect_search_prefix(prefix: str) -> None:
    """Let the bindings look for a dialect's Python module (`<prefix>.<namespace>`) under `prefix` too."""
    _cext.globals.append_dialect_search_prefix(prefix)


def result_index(value: ir.Value) -> int:
    return ir.OpResult(value).result_number


def vtensor_type(shape, dtype: str) -> ir.Type:
    """`!torch.vtensor<[d0,d1],dtype>` for a shape and a torch dtype name."""
    dims = ",".join("?" if d is None else str(d) for d in shape)
    return ir.Type.parse(f"!torch.vtensor<[{dims}],{DTYPES[dtype][0]}>")


class TorchBuilder:
    """Builds torch-dialect ops at an insertion point: constants, lists and ATen ops.

    The types of the ints and tensors it builds are parsed once per builder
    (a parse is most of an op's cost): a pass making many ops keeps one
    builder and moves it (`at`).
    """

    def __init__(self, ip: ir.InsertionPoint, loc: ir.Location):
        self.ip = ip
        self.loc = loc
        self._types: dict = {}

    def at(self, op) -> "TorchBuilder":
        """Build before `op`, at its location, from now on."""
        self.ip = ir.InsertionPoint(op)
        self.loc = op.location
        return self

    def _create(self, name, operands, result_types, attributes=None):
        return ir.Operation.create(
            name, results=list(result_types), operands=list(operands), attributes=attributes or {}, loc=self.loc, ip=self.ip
        )

    def int(self, value: int) -> ir.Value:
        types = self._types.get(int)
        if types is None:
            types = self._types[int] = (ir.IntegerType.get_signless(64), ir.Type.parse("!torch.int"))
        attr = ir.IntegerAttr.get(types[0], value)
        return self._create("torch.constant.int", [], [types[1]], {"value": attr}).results[0]

    def float(self, value: float) -> ir.Value:
        attr = ir.FloatAttr.get(ir.F64Type.get(), value)
        return self._create("torch.constant.float", [], [ir.Type.parse("!torch.float")], {"value": attr}).results[0]

    def bool(self, value: bool) -> ir.Value:
        return self._create("torch.constant.bool", [], [ir.Type.parse("!torch.bool")], {"value": ir.BoolAttr.get(value)}).results[0]

    def none(self) -> ir.Value:
        return self._create("torch.constant.none", [], [ir.Type.parse("!torch.none")]).results[0]

    def device(self, name: str) -> ir.Value:
        attr = {"value": ir.StringAttr.get(name)}
        return self._create("torch.constant.device", [], [ir.Type.parse("!torch.Device")], attr).results[0]

    def int_list(self, values) -> ir.Value:
        items = [self.int(v) for v in values]
        return self._create("torch.prim.ListConstruct", items, [ir.Type.parse("!torch.list<int>")]).results[0]

    def tensor_list(self, values) -> ir.Value:
        """A list of tensors as an index op reads it (`!torch.list<optional<vtensor>>`)."""
        return self._create("torch.prim.ListConstruct", values, [ir.Type.parse("!torch.list<optional<vtensor>>")]).results[0]

    def op(self, name: str, operands, shape, dtype: str) -> ir.Value:
        key = (*shape, dtype)
        t = self._types.get(key)
        if t is None:
            t = self._types[key] = vtensor_type(shape, dtype)
        return self._create(name, operands, [t]).results[0]

    def cat(self, values, dim: int) -> ir.Value:
        """`aten.cat(values, dim)` of static tensors of one dtype (`dim` >= 0)."""
        types = [tensor_type(v.type) for v in values]
        shape = list(types[0].shape)
        shape[dim] = sum(t.shape[dim] for t in types)
        items = self._create("torch.prim.ListConstruct", values, [ir.Type.parse("!torch.list<vtensor>")]).results[0]
        return self.op("torch.aten.cat", [items, self.int(dim)], shape, types[0].dtype)

    def view(self, x: ir.Value, shape, dtype: str) -> ir.Value:
        """`aten.view(x, shape)`."""
        return self.op("torch.aten.view", [x, self.int_list(shape)], shape, dtype)


import ctypes  # noqa: E402

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_OPERATION_CAPSULE = b"torch_mlir.ir.Operation._CAPIPtr"


def op_id(op) -> int:
    """The address of the C++ operation: a stable identity while the op lives.

    Neither `hash(op)` nor the Python object is one: the bindings' hash
    changes when the op's operands change, and Python operation objects are
    recycled by address.
    """
    return _capsule_pointer(op.operation._CAPIPtr, _OPERATION_CAPSULE)
