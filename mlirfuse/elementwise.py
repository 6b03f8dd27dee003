"""The elementwise torch ops mlirfuse fuses, and how each becomes Triton.

Rules are data (one `Rule` per op name): the fusion pass asks `fusible(op)`
which ops may join a group; the Triton lowering asks `RULES[name]` how to
print one line of kernel for it. Adding an op is adding one entry here plus a
numerics test against eager PyTorch.

A rule's `emit` receives the operands as Triton expressions (already cast
as the rule's `kind` requires) and the operands' constant values, and
returns one expression.

Kinds decide how operands are cast before the op:
  arith    tensor operands cast to the result's compute dtype; with a bool
           result, computed in int32 and tested `!= 0`, as eager's bool
           arithmetic is (True + True is True)
  bitwise  tensor operands cast to the result's dtype, bits combined in it
           (on bool, `~` is logical not only in 1-bit arithmetic)
  compare  tensor operands cast to their common compute dtype; result bool
  logical  tensor operands made bool; result bool
  select   operand `cond` made bool, the others cast to the result's dtype
  cast     operand taken as it is; the result is converted (rounded through
           the storage type when that is f16/bf16, as eager does)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from mlirfuse.ir import DTYPE_CODES, NO_CONSTANT, constant_value, tensor_type

# Triton spelling of each torch dtype, and the dtype arithmetic happens in.
TRITON_DTYPES = {
    "float32": "tl.float32", "float16": "tl.float16", "bfloat16": "tl.bfloat16", "float64": "tl.float64",
    "int64": "tl.int64", "int32": "tl.int32", "int16": "tl.int16", "int8": "tl.int8", "uint8": "tl.uint8",
    "bool": "tl.int1",
}
FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")
# torch's ScalarType numbering, as torch-mlir prints dtype operands (code -> dtype name).
SCALAR_TYPES = {code: name for name, code in DTYPE_CODES.items()}


def compute_dtype(dtype: str) -> str:
    """f16/bf16 values are computed in f32, as eager's kernels do."""
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def promote(dtypes: list[str]) -> str:
    """torch's promotion of tensor dtypes (enough for the dtypes we fuse)."""
    import torch

    result = getattr(torch, dtypes[0])
    for d in dtypes[1:]:
        result = torch.promote_types(result, getattr(torch, d))
    return str(result).removeprefix("torch.")


@dataclass(frozen=True)
class Rule:
    kind: str
    emit: Callable[[list[str], list], str]
    # Operand positions that must be constants (alpha, exponent, dtype ...).
    constant_args: tuple[int, ...] = ()
    # Returns a reason the op cannot be fused, or None.
    check: Callable[[list], str | None] = lambda consts: None
    float_only: bool = False
    # For `select`: the position of the boolean condition.
    cond: int = 0
    tensor_args: tuple[int, ...] = field(default=(0,))
    # For ops whose eager special cases depend on the storage dtype: `emit`
    # also receives the first tensor operand's dtype (before f16/bf16 -> f32).
    by_dtype: bool = False


NAN_ALL = "propagate_nan=tl.PropagateNan.ALL"


def _tanh(x: str) -> str:
    # The `tanh` helper every kernel module using it defines (lowering/emitter.py HELPERS).
    return f"tanh({x})"


def _with_alpha(op: str):
    def emit(a, c):
        return f"{a[0]} {op} {a[1]}" if c[2] == 1 else f"{a[0]} {op} {a[2]} * {a[1]}"

    return emit


def _alpha_const(c):
    return None if isinstance(c[2], (int, float)) else "alpha is not a number"


_POW = {2: "{0} * {0}", 3: "{0} * {0} * {0}", 1: "{0}", 0.5: "tl.sqrt({0})", -1: "1.0 / {0}", -0.5: "tl.rsqrt({0})", -2: "1.0 / ({0} * {0})"}


def _pow(a, c, dtype: str) -> str:
    x = a[0]
    if dtype == "float16" and c[1] in (0.5, -0.5):
        # Eager's f16 pow on CPU is std::pow, whose special cases differ from
        # sqrt/rsqrt (f32/bf16/f64 take those): pow(-inf, ±0.5) is inf / 0,
        # pow(-0.0, ±0.5) is 0 / inf. So -inf and -0.0 become their absolute values.
        x = f"tl.where({x} == 0, 0.0, tl.where({x} < -3.4028234663852886e38, -{x}, {x}))"
    return _POW[c[1]].format(x)


def _unary(template: str, float_only: bool = True) -> Rule:
    return Rule("arith", lambda a, c: template.format(*a), float_only=float_only)


def _binary(template: str, kind: str = "arith") -> Rule:
    return Rule(kind, lambda a, c: template.format(*a), tensor_args=(0, 1))


def _gelu(a, c):
    x = a[0]
    if c[1] == "tanh":
        return f"0.5 * {x} * (1 + {_tanh(f'0.7978845608028654 * ({x} + 0.044715 * {x} * {x} * {x})')})"
    return f"0.5 * {x} * (1 + tl.erf({x} * 0.7071067811865476))"


def _clamp(a, c):
    x = a[0]
    if c[1] is not None:
        x = f"tl.where({x} < {a[1]}, {a[1]}, {x})"
    if c[2] is not None:
        x = f"tl.where({x} > {a[2]}, {a[2]}, {x})"
    return x


def _cast_check(consts) -> str | None:
    dtype = consts[1]
    if dtype is not None and dtype not in SCALAR_TYPES:
        return f"dtype code {dtype} is not supported"
    return None


def _to_copy_check(consts) -> str | None:
    # _to_copy(x, dtype, layout, device, pin_memory, non_blocking, memory_format)
    if any(v is not None for v in consts[2:4]) or consts[4] not in (None, False):
        return "changes layout, device or pinning"
    if len(consts) > 6 and consts[6] not in (None, 0, 1):
        return "changes memory format"
    return _cast_check(consts)


_CAST = Rule("cast", lambda a, c: a[0], constant_args=(1,), check=_cast_check)

RULES: dict[str, Rule] = {
    # unary math
    "torch.aten.neg": _unary("-{0}", float_only=False),
    "torch.aten.abs": _unary("tl.abs({0})", float_only=False),
    "torch.aten.relu": _unary("tl.where({0} < 0, 0, {0})", float_only=False),
    "torch.aten.exp": _unary("tl.exp({0})"),
    "torch.aten.exp2": _unary("tl.exp2({0})"),
    "torch.aten.log": _unary("tl.log({0})"),
    "torch.aten.log2": _unary("tl.log2({0})"),
    "torch.aten.sqrt": _unary("tl.sqrt({0})"),
    "torch.aten.rsqrt": _unary("tl.rsqrt({0})"),
    "torch.aten.sin": _unary("tl.sin({0})"),
    "torch.aten.cos": _unary("tl.cos({0})"),
    "torch.aten.erf": _unary("tl.erf({0})"),
    "torch.aten.floor": _unary("tl.floor({0})"),
    "torch.aten.ceil": _unary("tl.ceil({0})"),
    "torch.aten.reciprocal": _unary("1.0 / {0}"),
    "torch.aten.sigmoid": _unary("tl.sigmoid({0})"),
    "torch.aten.tanh": Rule("arith", lambda a, c: _tanh(a[0]), float_only=True),
    # eager's sign(nan) is 0; float literals keep the value a float (all-int branches would make it int32)
    "torch.aten.sign": Rule(
        "arith", lambda a, c: f"tl.where({a[0]} > 0, 1.0, tl.where({a[0]} < 0, -1.0, 0.0))", float_only=True
    ),
    "torch.aten.silu": _unary("{0} * tl.sigmoid({0})"),
    "torch.aten.gelu": Rule(
        "arith", _gelu, constant_args=(1,), float_only=True,
        check=lambda c: None if c[1] in ("none", "tanh") else f"approximate={c[1]!r}",
    ),
    # eager's formulas, min(max(x + 3, 0), 6) / 6 and x * that: x * 6 overflows to inf near f32's max
    "torch.aten.hardsigmoid": _unary("tl.where({0} + 3 < 0, 0, tl.where({0} + 3 > 6, 6, {0} + 3)) / 6"),
    "torch.aten.hardswish": _unary("{0} * tl.where({0} + 3 < 0, 0, tl.where({0} + 3 > 6, 6, {0} + 3)) / 6"),
    "torch.aten.leaky_relu": Rule(
        "arith", lambda a, c: f"tl.where({a[0]} > 0, {a[0]}, {a[0]} * {a[1]})", constant_args=(1,), float_only=True
    ),
    "torch.aten.hardtanh": Rule(
        "arith", lambda a, c: _clamp(a, c), constant_args=(1, 2), float_only=True
    ),
    "torch.aten.clamp": Rule("arith", _clamp, constant_args=(1, 2)),
    "torch.aten.clamp_min": Rule("arith", lambda a, c: _clamp([a[0], a[1], None], [c[0], c[1], None]), constant_args=(1,)),
    "torch.aten.clamp_max": Rule("arith", lambda a, c: _clamp([a[0], None, a[1]], [c[0], None, c[1]]), constant_args=(1,)),
    "torch.aten.pow.Tensor_Scalar": Rule(
        "arith", _pow, constant_args=(1,), by_dtype=True,
        check=lambda c: None if c[1] in _POW else f"exponent {c[1]} has no exact Triton form",
    ),
    # binary arithmetic; `.Scalar` forms take a constant second operand
    "torch.aten.add.Tensor": Rule("arith", _with_alpha("+"), constant_args=(2,), check=_alpha_const, tensor_args=(0, 1)),
    "torch.aten.add.Scalar": Rule("arith", _with_alpha("+"), constant_args=(1, 2), check=_alpha_const),
    "torch.aten.sub.Tensor": Rule("arith", _with_alpha("-"), constant_args=(2,), check=_alpha_const, tensor_args=(0, 1)),
    "torch.aten.sub.Scalar": Rule("arith", _with_alpha("-"), constant_args=(1, 2), check=_alpha_const),
    "torch.aten.rsub.Scalar": Rule(
        "arith", lambda a, c: f"{a[1]} - {a[0]}" if c[2] == 1 else f"{a[1]} - {a[2]} * {a[0]}",
        constant_args=(1, 2), check=_alpha_const,
    ),
    "torch.aten.mul.Tensor": _binary("{0} * {1}"),
    "torch.aten.mul.Scalar": Rule("arith", lambda a, c: f"{a[0]} * {a[1]}", constant_args=(1,)),
    "torch.aten.div.Tensor": _binary("{0} / {1}"),
    "torch.aten.div.Scalar": Rule("arith", lambda a, c: f"{a[0]} / {a[1]}", constant_args=(1,)),
    "torch.aten.maximum": _binary(f"tl.maximum({{0}}, {{1}}, {NAN_ALL})"),
    "torch.aten.minimum": _binary(f"tl.minimum({{0}}, {{1}}, {NAN_ALL})"),
    # comparisons
    **{
        f"torch.aten.{name}.{form}": Rule(
            "compare", (lambda sym: lambda a, c: f"{a[0]} {sym} {a[1]}")(sym),
            constant_args=() if form == "Tensor" else (1,),
            tensor_args=(0, 1) if form == "Tensor" else (0,),
        )
        for name, sym in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="))
        for form in ("Tensor", "Scalar")
    },
    # boolean logic
    "torch.aten.logical_not": Rule("logical", lambda a, c: f"{a[0]} == 0"),
    "torch.aten.bitwise_not": Rule("bitwise", lambda a, c: f"~{a[0]}"),
    "torch.aten.logical_and": _binary("{0} & {1}", "logical"),
    "torch.aten.logical_or": _binary("{0} | {1}", "logical"),
    "torch.aten.logical_xor": _binary("{0} ^ {1}", "logical"),
    "torch.aten.__and__.Tensor": _binary("{0} & {1}", "bitwise"),
    "torch.aten.__or__.Tensor": _binary("{0} | {1}", "bitwise"),
    "torch.aten.__xor__.Tensor": _binary("{0} ^ {1}", "bitwise"),
    "torch.aten.bitwise_and.Tensor": _binary("{0} & {1}", "bitwise"),
    "torch.aten.bitwise_or.Tensor": _binary("{0} | {1}", "bitwise"),
    "torch.aten.bitwise_xor.Tensor": _binary("{0} ^ {1}", "bitwise"),
    # selection
    "torch.aten.where.self": Rule("select", lambda a, c: f"tl.where({a[0]}, {a[1]}, {a[2]})", tensor_args=(0, 1, 2)),
    "torch.aten.where.ScalarOther": Rule(
        "select", lambda a, c: f"tl.where({a[0]}, {a[1]}, {a[2]})", constant_args=(2,), tensor_args=(0, 1)
    ),
    "torch.aten.where.ScalarSelf": Rule(
        "select", lambda a, c: f"tl.where({a[0]}, {a[1]}, {a[2]})", constant_args=(1,), tensor_args=(0, 2)
    ),
    "torch.aten.where.Scalar": Rule(
        "select", lambda a, c: f"tl.where({a[0]}, {a[1]}, {a[2]})", constant_args=(1, 2), tensor_args=(0,)
    ),
    "torch.aten.masked_fill.Scalar": Rule(
        "select", lambda a, c: f"tl.where({a[1]}, {a[2]}, {a[0]})", constant_args=(2,), cond=1, tensor_args=(0, 1)
    ),
    # dtype conversions and copies
    "torch.prims.convert_element_type": _CAST,
    "torch.aten.to.dtype": Rule(
        "cast", lambda a, c: a[0], constant_args=(1, 2, 3, 4),
        check=lambda c: "changes memory format" if c[4] not in (None, 0, 1) else _cast_check(c),
    ),
    "torch.aten._to_copy": Rule("cast", lambda a, c: a[0], constant_args=(1, 2, 3, 4, 5, 6), check=_to_copy_check),
    "torch.aten.clone": Rule("arith", lambda a, c: a[0], constant_args=(1,)),
}


def literal(value) -> str | None:
    """A Python literal Triton accepts for a constant, or None if there is none."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    return None


def why_not_fusible(op) -> str | None:
    """None if `op` can join a pointwise group; otherwise the reason, for reports."""
    name = op.operation.name
    rule = RULES.get(name)
    if rule is None:
        return "unsupported op"
    if len(op.results) != 1:
        return "has more than one result"
    result = tensor_type(op.results[0].type)
    if result is None or not result.is_static:
        return "result is not a statically shaped tensor of a supported dtype"
    consts = []
    for i, operand in enumerate(op.operands):
        t = tensor_type(operand.type)
        if i in rule.tensor_args and t is not None:
            if not t.is_static:
                return f"operand #{i} has a dynamic shape"
            if rule.float_only and t.dtype not in FLOAT_DTYPES:
                return f"operand #{i} is {t.dtype}; the op is fused for floating types only"
            consts.append(None)
            continue
        value = constant_value(operand)
        if value is NO_CONSTANT:
            return f"operand #{i} is neither a tensor nor a constant"
        if i not in rule.constant_args and not isinstance(value, (bool, int, float)):
            return f"operand #{i} ({value!r}) is not a number"
        consts.append(value)
    if rule.float_only and result.dtype not in FLOAT_DTYPES:
        return f"result is {result.dtype}; the op is fused for floating types only"
    return rule.check(consts)


def fusible(op) -> bool:
    return why_not_fusible(op) is None
