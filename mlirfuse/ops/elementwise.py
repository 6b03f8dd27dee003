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

from mlirfuse.ir import NO_CONSTANT, constant_value, tensor_type, torch_name
from mlirfuse.ops.dtypes import BITS, FLOAT_DTYPES, FLOAT_MAX, INT_DTYPES, SCALAR_TYPES, TRITON_DTYPES, round_to
from mlirfuse.ops.family import Family


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
    # For ops whose formula depends on the dtypes (integer vs float division,
    # shift widths, literals of the dtype's range): `emit` also receives a `Types`.
    typed: bool = False
    # Result dtypes eager computes the op for (None: any); others stay outside.
    dtypes: tuple[str, ...] | None = None
    # Like `check`, also given the result dtype: a reason the op cannot be fused, or None.
    check_dtype: Callable[[list, str], str | None] = lambda consts, dtype: None
    # ATen's CPU kernel converts the op's Python-number operands (the scalar, alpha) to an f16/bf16 result's
    # dtype before computing (add, sub, rsub, remainder, fmod; mul and div keep them in f32): precision="eager"
    # rounds them the same way (`bf16 + 0.1` adds 0.10009765625).
    half_scalars: bool = False
    # Positions of float constants `emit` prints as a plain operand and never reads (`x * 0.5`, an eps): a
    # kernel may take them as launch arguments instead (see `liftable_constants`). A position whose value
    # picks the formula (alpha == 1, a pow exponent, a lerp weight's branch) is never listed.
    scalar_args: tuple[int, ...] = ()


@dataclass(frozen=True)
class Types:
    """What a `typed` rule's emitter knows: the dtype tensor operands were cast to,
    the first tensor operand's storage dtype and the result's storage dtype."""

    target: str
    operand: str
    result: str
    # precision="eager": follow eager's own intermediate roundings inside one op where they are known.
    eager: bool = False


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


def _gelu(a, c, t):
    x = a[0]
    if c[1] == "tanh":
        return f"0.5 * {x} * (1 + {_tanh(f'0.7978845608028654 * ({x} + 0.044715 * {x} * {x} * {x})')})"
    # CUDA eager's form for every dtype (mlirfuse/ops/special_values.py): -0.0 where erf is -1 and at -0.0,
    # x at the largest finite x; eager's CPU loops differ by path and by CPU there.
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
    "torch.aten.reciprocal": _unary("fdiv(1.0, {0})"),
    "torch.aten.sigmoid": _unary("tl.sigmoid({0})"),
    "torch.aten.tanh": Rule("arith", lambda a, c: _tanh(a[0]), float_only=True),
    # eager's sign(nan) is 0; float literals keep the value a float (all-int branches would make it int32)
    "torch.aten.sign": Rule(
        "arith", lambda a, c: f"tl.where({a[0]} > 0, 1.0, tl.where({a[0]} < 0, -1.0, 0.0))", float_only=True
    ),
    "torch.aten.silu": _unary("{0} * tl.sigmoid({0})"),
    "torch.aten.gelu": Rule(
        "arith", _gelu, constant_args=(1,), float_only=True, typed=True,
        check=lambda c: None if c[1] in ("none", "tanh") else f"approximate={c[1]!r}",
    ),
    # eager's formulas, min(max(x + 3, 0), 6) / 6 and x * that: x * 6 overflows to inf near f32's max
    "torch.aten.hardsigmoid": _unary("tl.where({0} + 3 < 0, 0, tl.where({0} + 3 > 6, 6, {0} + 3)) / 6"),
    "torch.aten.hardswish": _unary("{0} * tl.where({0} + 3 < 0, 0, tl.where({0} + 3 > 6, 6, {0} + 3)) / 6"),
    "torch.aten.leaky_relu": Rule(
        "arith", lambda a, c: f"tl.where({a[0]} > 0, {a[0]}, {a[0]} * {a[1]})", constant_args=(1,), float_only=True,
        scalar_args=(1,),
    ),
    "torch.aten.hardtanh": Rule(
        "arith", lambda a, c: _clamp(a, c), constant_args=(1, 2), float_only=True, scalar_args=(1, 2)
    ),
    "torch.aten.clamp": Rule("arith", _clamp, constant_args=(1, 2), scalar_args=(1, 2)),
    "torch.aten.clamp_min": Rule("arith", lambda a, c: _clamp([a[0], a[1], None], [c[0], c[1], None]), constant_args=(1,), scalar_args=(1,)),
    "torch.aten.clamp_max": Rule("arith", lambda a, c: _clamp([a[0], None, a[1]], [c[0], None, c[1]]), constant_args=(1,), scalar_args=(1,)),
    # binary arithmetic; `.Scalar` forms take a constant second operand
    "torch.aten.add.Tensor": Rule("arith", _with_alpha("+"), half_scalars=True, constant_args=(2,), check=_alpha_const, tensor_args=(0, 1)),
    "torch.aten.add.Scalar": Rule(
        "arith", _with_alpha("+"), half_scalars=True, constant_args=(1, 2), check=_alpha_const, scalar_args=(1,)
    ),
    "torch.aten.sub.Tensor": Rule("arith", _with_alpha("-"), half_scalars=True, constant_args=(2,), check=_alpha_const, tensor_args=(0, 1)),
    "torch.aten.sub.Scalar": Rule(
        "arith", _with_alpha("-"), half_scalars=True, constant_args=(1, 2), check=_alpha_const, scalar_args=(1,)
    ),
    "torch.aten.rsub.Scalar": Rule(
        "arith", lambda a, c: f"{a[1]} - {a[0]}" if c[2] == 1 else f"{a[1]} - {a[2]} * {a[0]}",
        constant_args=(1, 2), check=_alpha_const, half_scalars=True, scalar_args=(1,),
    ),
    "torch.aten.mul.Tensor": _binary("{0} * {1}"),
    "torch.aten.mul.Scalar": Rule("arith", lambda a, c: f"{a[0]} * {a[1]}", constant_args=(1,), scalar_args=(1,)),
    "torch.aten.div.Tensor": _binary("fdiv({0}, {1})"),
    "torch.aten.div.Scalar": Rule("arith", lambda a, c: f"fdiv({a[0]}, {a[1]})", constant_args=(1,), scalar_args=(1,)),
    "torch.aten.maximum": _binary(f"tl.maximum({{0}}, {{1}}, {NAN_ALL})"),
    "torch.aten.minimum": _binary(f"tl.minimum({{0}}, {{1}}, {NAN_ALL})"),
    # comparisons
    **{
        f"torch.aten.{name}.{form}": Rule(
            "compare", (lambda sym: lambda a, c: f"{a[0]} {sym} {a[1]}")(sym),
            constant_args=() if form == "Tensor" else (1,),
            tensor_args=(0, 1) if form == "Tensor" else (0,),
            scalar_args=() if form == "Tensor" else (1,),
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
        "select", lambda a, c: f"tl.where({a[0]}, {a[1]}, {a[2]})", constant_args=(2,), tensor_args=(0, 1), scalar_args=(2,)
    ),
    "torch.aten.where.ScalarSelf": Rule(
        "select", lambda a, c: f"tl.where({a[0]}, {a[1]}, {a[2]})", constant_args=(1,), tensor_args=(0, 2), scalar_args=(1,)
    ),
    "torch.aten.where.Scalar": Rule(
        "select", lambda a, c: f"tl.where({a[0]}, {a[1]}, {a[2]})", constant_args=(1, 2), tensor_args=(0,)
    ),
    "torch.aten.masked_fill.Scalar": Rule(
        "select", lambda a, c: f"tl.where({a[1]}, {a[2]}, {a[0]})", constant_args=(2,), cond=1, tensor_args=(0, 1),
        scalar_args=(2,),
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


# --- integer semantics, division, shifts, float special functions ---------------------------
# Triton's integer `//` and `%` truncate; eager's floor division and remainder
# round toward -inf. The multi-line formulas are helpers in
# lowering/math_helpers.py, named here by the expressions that call them.


def _nonzero_divisor(c) -> str | None:
    return "division by a zero scalar" if c[1] == 0 else None


def _floordiv(a, t) -> str:
    if t.target in INT_DTYPES:
        return f"floordiv_int({a[0]}, {a[1]})"
    if t.result in ("float16", "bfloat16"):  # eager rounds every step to the dtype
        return f"floordiv_half({a[0]}, {a[1]}, {t.result == 'bfloat16'})"
    return f"floordiv_float({a[0]}, {a[1]})"


def _div_mode(a, c, t) -> str:
    mode = c[-1]
    if mode is None:
        return f"fdiv({a[0]}, {a[1]})"
    if mode == "floor":
        return _floordiv(a, t)
    if t.target in INT_DTYPES:
        return f"{a[0]} // {a[1]}"
    return f"trunc({_rounded(f'fdiv({a[0]}, {a[1]})', t.result)})"  # f16/bf16: the quotient rounded first, as eager


def _remainder_scalar(a, c) -> str:
    mod = f"({a[0]} % {a[1]})"
    wrong_sign = f"{mod} < 0" if c[1] > 0 else f"{mod} > 0"
    return f"tl.where({wrong_sign}, {mod} + {a[1]}, {mod})"


def _bitwise_scalar(sym: str):
    def emit(a, c, t):
        expr = f"{a[0]} {sym} {a[1]}"
        return f"(({expr}) != 0)" if t.target == "bool" else expr

    return emit


def _shift(left: bool):
    """Eager's shifts: an amount outside [0, bits) gives 0 (left) or the sign fill (right)."""

    def emit(a, c, t):
        bits = BITS[t.target]
        if c[1] is not None:  # a constant amount
            if 0 <= c[1] < bits:
                return f"{a[0]} {'<<' if left else '>>'} {a[1]}"
            return f"{a[0]} * 0" if left else f"{a[0]} >> {bits - 1}"
        bad = f"({a[1]} >= {bits})" if t.target == "uint8" else f"(({a[1]} < 0) | ({a[1]} >= {bits}))"
        if left:
            return f"tl.where({bad}, 0, {a[0]} << tl.where({bad}, 0, {a[1]}))"
        return f"{a[0]} >> tl.where({bad}, {bits - 1}, {a[1]})"

    return emit


def _clamp_tensor(a, c) -> str:
    x = a[0]
    if a[1] != "None":
        x = f"tl.maximum({x}, {a[1]}, {NAN_ALL})"
    if a[2] != "None":
        x = f"tl.minimum({x}, {a[2]}, {NAN_ALL})"
    return x


def _f64(text: str, t) -> str:
    """An f64 helper's result in the target dtype."""
    return text if t.target == "float64" else f"{text}.to({TRITON_DTYPES[t.target]})"


def _splat(value, like: str, dtype: str) -> str:
    """`value` as a tensor of `dtype` shaped like the tensor expression `like` (helpers take tensors)."""
    return f"(tl.zeros_like({like}).to({TRITON_DTYPES[dtype]}) + {value!r})"


def _pow_general(a, c, t) -> str:
    """pow(x, e) for exponents outside the `_POW` table: repeated products on ints, f64 pow on floats."""
    if t.target in INT_DTYPES:
        e = c[1]
        return " * ".join([a[0]] * e) if e > 0 else f"({a[0]} * 0 + 1)"
    return _f64(f"pow_f64({a[0]}, {_splat(float(c[1]), a[0], 'float64')})", t)


def _pow_tensor_scalar(a, c, t) -> str:
    if t.target not in INT_DTYPES and c[1] in _POW:
        if t.eager and c[1] in (3, -2) and t.operand in ("bfloat16", "float16"):
            return _pow_eager_square(a[0], c[1], t.operand)
        return _pow(a, c, t.operand)
    return _pow_general(a, c, t)


def _pow_eager_square(x: str, e: int, dtype: str) -> str:
    """bf16/f16 pow(x, 3) and pow(x, -2) as eager computes them: from x * x rounded to the dtype.

    ATen's bf16 kernels (CPU vectorized and CUDA) multiply BFloat16 values, so
    x * x is rounded before the last step (pow(x, 3) is x*x*x rounded twice,
    fuzz seeds 2750077, 2750142); for f16 CUDA does the same and the CPU takes
    std::pow in f32 (the `half_square` helper picks by where the kernel runs).
    """
    square = _rounded(f"{x} * {x}", dtype) if dtype == "bfloat16" else f"half_square({x})"
    return f"{square} * {x}" if e == 3 else f"1.0 / {square}"


def _threshold(a, c, t) -> str:
    """x <= threshold ? value : x; on integers eager converts both numbers to the dtype first (truncating:
    threshold(-0.5) is x <= 0), and a float literal would make the result float (fuzz seed 2760595 with
    --focus unary,...,mixed: an int64 threshold summed, then shifted: "invalid operands of type floatN")."""
    if t.target in INT_DTYPES:
        return f"tl.where({a[0]} <= {int(c[1])}, {int(c[2])}, {a[0]})"
    return f"tl.where({a[0]} <= {a[1]}, {a[2]}, {a[0]})"


def _addcmul(a, c, t) -> str:
    """self + value * t1 * t2; on floats one fma, fma(value * t1, t2, self), as ATen's CPU kernel rounds it."""
    scaled = a[1] if c[3] == 1 else f"{a[3]} * {a[1]}"
    if t.target in INT_DTYPES:
        return f"{a[0]} + {scaled} * {a[2]}"
    return f"tl.fma({scaled}, {a[2]}, {a[0]})"


def _integer_value_check(c, dtype) -> str | None:
    """addcmul on integers: eager casts `value` to the integer dtype first (0.5 -> 0)."""
    if (dtype in INT_DTYPES or dtype == "bool") and isinstance(c[3], float) and not c[3].is_integer():
        return f"{dtype} addcmul with the non-integer value {c[3]!r} (eager truncates it)"
    return None


def _pow_tensor_scalar_check(c, dtype) -> str | None:
    e = c[1]
    if isinstance(e, bool) or not isinstance(e, (int, float)) or not math.isfinite(e):
        return f"exponent {e!r} is not a finite number"
    if dtype in INT_DTYPES or dtype == "bool":
        if dtype == "bool" or not isinstance(e, int):
            return f"{dtype} ** {e!r}"
        if not 0 <= e <= 16:
            return f"integer exponent {e} outside [0, 16]"
    return None


def _pow_tensors(a, c, t) -> str:
    if t.target in INT_DTYPES:
        return f"pow_int({a[0]}, {a[1]})"
    return _f64(f"pow_f64({a[0]}, {a[1]})", t)


def _pow_scalar_base(a, c, t) -> str:
    if t.target in INT_DTYPES:
        return f"pow_int({_splat(c[0], a[1], t.target)}, {a[1]})"
    return _f64(f"pow_f64({_splat(float(c[0]), a[1], 'float64')}, {a[1]})", t)


def _pow_scalar_base_check(c, dtype) -> str | None:
    if isinstance(c[0], bool) or not isinstance(c[0], (int, float)) or not math.isfinite(c[0]):
        return f"base {c[0]!r} is not a finite number"
    if dtype == "bool" or (dtype in INT_DTYPES and not isinstance(c[0], int)):
        return f"{c[0]!r} ** a {dtype} tensor"
    return None


def _is_special(a, t, test: str) -> str:
    """isnan/isinf/... of a float; integers and bools are never NaN or infinite."""
    if t.target not in FLOAT_DTYPES:
        return f"({a[0]} == {a[0]})" if test == "isfinite" else f"({a[0]} != {a[0]})"
    big = FLOAT_MAX[t.target]
    x = a[0]
    return {
        "isnan": f"{x} != {x}",
        "isinf": f"tl.abs({x}) > {big}",
        "isposinf": f"{x} > {big}",
        "isneginf": f"{x} < -{big}",
        "isfinite": f"tl.abs({x}) <= {big}",
    }[test]


def _signbit(a, c, t) -> str:
    if t.target in FLOAT_DTYPES:
        return f"signbit({a[0]})"
    return f"({a[0]} != {a[0]})" if t.target in ("bool", "uint8") else f"{a[0]} < 0"


def _nan_to_num(a, c, t) -> str:
    if t.result not in FLOAT_DTYPES:
        return a[0]
    big = FLOAT_MAX[t.target]
    nan = a[1] if c[1] is not None else "0.0"
    posinf = a[2] if c[2] is not None else FLOAT_MAX[t.result]
    neginf = a[3] if c[3] is not None else "-" + FLOAT_MAX[t.result]
    x = a[0]
    return f"tl.where({x} != {x}, {nan}, tl.where({x} > {big}, {posinf}, tl.where({x} < -{big}, {neginf}, {x})))"


def _copysign_scalar(a, c) -> str:
    negative = c[1] < 0 or (c[1] == 0 and math.copysign(1.0, c[1]) < 0)
    return f"-tl.abs({a[0]})" if negative else f"tl.abs({a[0]})"


def _lerp(a, c) -> str:
    start, end, w = a
    small = f"{start} + {w} * ({end} - {start})"
    large = f"{end} - ({end} - {start}) * (1 - {w})"
    if c[2] is not None:  # a constant weight picks the branch here
        return small if abs(c[2]) < 0.5 else large
    return f"tl.where(tl.abs({w}) < 0.5, {small}, {large})"


def _elu(a, c) -> str:
    alpha, scale, input_scale = c[1], c[2], c[3]
    x = a[0]
    negative = f"expm1({x} * {literal(float(input_scale))}) * {literal(float(alpha * scale))}"
    positive = x if scale == 1 else f"{x} * {a[2]}"
    return f"tl.where({x} > 0, {positive}, {negative})"


def _finite_numbers(positions):
    def check(c):
        for i in positions:
            if c[i] is not None and (isinstance(c[i], bool) or not isinstance(c[i], (int, float)) or not math.isfinite(c[i])):
                return f"operand #{i} ({c[i]!r}) is not a finite number"
        return None

    return check


def _softplus(a, c) -> str:
    x, beta = a[0], c[1]
    scaled = x if beta == 1 else f"{x} * {a[1]}"
    soft = f"log1p(tl.exp({scaled}))" if beta == 1 else f"log1p(tl.exp({scaled})) / {a[1]}"
    return f"tl.where({scaled} > {a[2]}, {x}, {soft})"


def _rounded(expr: str, dtype: str) -> str:
    """`expr` (computed in f32) rounded to f16/bf16 and widened again: an intermediate eager rounds."""
    if dtype == "float16":
        return f"({expr}).to(tl.float16).to(tl.float32)"
    if dtype == "bfloat16":
        return f"round_to_bf16({expr}).to(tl.float32)"
    return f"({expr})"


def _logit(a, c, t) -> str:
    x = a[0]
    if c[1] is not None:
        # Eager clamps in the tensor's dtype: for f16/bf16 both bounds are rounded to it first (bf16 logit(1.0,
        # eps=0.1) clamps to 0.8984375 and gives 2.1875, not logit(0.9) = 2.203125; fuzz seed 2781551).
        bounds = (float(c[1]), 1.0 - float(c[1]))
        if t.result in ("float16", "bfloat16"):
            bounds = tuple(round_to(v, t.result) for v in bounds)
        lo, hi = (literal(v) for v in bounds)
        x = f"tl.where({x} < {lo}, {lo}, tl.where({x} > {hi}, {hi}, {x}))"
    # f16/bf16: eager rounds 1 - x and the quotient to the dtype before the log.
    denominator = _rounded(f"1 - {x}", t.result)
    return f"tl.log({_rounded(f'{x} / {denominator}', t.result)})"


def _float_binary(template: str) -> Rule:
    return Rule("arith", lambda a, c: template.format(*a), tensor_args=(0, 1), float_only=True)


def _int_amount(c) -> str | None:
    return None if isinstance(c[1], int) and not isinstance(c[1], bool) else f"shift amount {c[1]!r} is not an integer"


def _f64_unary(helper: str) -> Rule:
    return Rule("arith", lambda a, c, t: _f64(f"{helper}({a[0]})", t), float_only=True, typed=True)


_INT_OR_FLOAT = INT_DTYPES + FLOAT_DTYPES
_FLOAT_ARGS = _finite_numbers((1, 2, 3))

RULES.update({
    "torch.aten.remainder.Tensor": Rule("arith", lambda a, c: f"remainder({a[0]}, {a[1]})", tensor_args=(0, 1), dtypes=_INT_OR_FLOAT),
    "torch.aten.remainder.Scalar": Rule(
        "arith", _remainder_scalar, constant_args=(1,), check=_nonzero_divisor, dtypes=_INT_OR_FLOAT,
        half_scalars=True,
    ),
    "torch.aten.fmod.Tensor": Rule("arith", lambda a, c: f"fmod({a[0]}, {a[1]})", tensor_args=(0, 1), dtypes=_INT_OR_FLOAT),
    "torch.aten.fmod.Scalar": Rule(
        "arith", lambda a, c: f"fmod({a[0]}, {a[1]})", constant_args=(1,), check=_nonzero_divisor, dtypes=_INT_OR_FLOAT,
        half_scalars=True,
    ),
    "torch.aten.floor_divide": Rule(
        "arith", lambda a, c, t: _floordiv(a, t), tensor_args=(0, 1), typed=True, dtypes=_INT_OR_FLOAT
    ),
    "torch.aten.floor_divide.Scalar": Rule(
        "arith", lambda a, c, t: _floordiv(a, t), constant_args=(1,), check=_nonzero_divisor, typed=True,
        dtypes=_INT_OR_FLOAT,
    ),
    "torch.aten.div.Tensor_mode": Rule(
        "arith", _div_mode, constant_args=(2,), tensor_args=(0, 1), typed=True, dtypes=_INT_OR_FLOAT,
        check=lambda c: None if c[2] in (None, "trunc", "floor") else f"rounding_mode={c[2]!r}",
    ),
    "torch.aten.div.Scalar_mode": Rule(
        "arith", _div_mode, constant_args=(1, 2), typed=True, dtypes=_INT_OR_FLOAT,
        check=lambda c: _nonzero_divisor(c) or (None if c[2] in (None, "trunc", "floor") else f"rounding_mode={c[2]!r}"),
    ),
    **{
        f"torch.aten.{name}.Scalar": Rule(
            "bitwise", _bitwise_scalar(sym), constant_args=(1,), typed=True, dtypes=INT_DTYPES + ("bool",)
        )
        for names, sym in ((("bitwise_and", "__and__"), "&"), (("bitwise_or", "__or__"), "|"), (("bitwise_xor", "__xor__"), "^"))
        for name in names
    },
    **{
        name: Rule("bitwise", _shift(left), tensor_args=(0, 1) if form == "Tensor" else (0,), typed=True, dtypes=INT_DTYPES,
                   constant_args=() if form == "Tensor" else (1,), check=(lambda c: None) if form == "Tensor" else _int_amount)
        for left, names in ((True, ("bitwise_left_shift", "__lshift__")), (False, ("bitwise_right_shift", "__rshift__")))
        for base in names
        for form in ("Tensor", "Scalar", "Tensor_Scalar")
        for name in [f"torch.aten.{base}.{form}"]
    },
    "torch.aten.clamp.Tensor": Rule("arith", _clamp_tensor, constant_args=(1, 2), tensor_args=(0, 1, 2)),
    "torch.aten.clamp_min.Tensor": _binary(f"tl.maximum({{0}}, {{1}}, {NAN_ALL})"),
    "torch.aten.clamp_max.Tensor": _binary(f"tl.minimum({{0}}, {{1}}, {NAN_ALL})"),
    # fmax/fmin ignore a NaN; of equal values (+0.0 and -0.0) eager gives the first operand, in its scalar and
    # vectorized loops alike (fuzz seed 2750020 with --focus unary,binary,...,mixed: fmin(+0.0, -0.0)).
    "torch.aten.fmax": _binary("tl.where({0} == {1}, {0}, tl.maximum({0}, {1}, propagate_nan=tl.PropagateNan.NONE))"),
    "torch.aten.fmin": _binary("tl.where({0} == {1}, {0}, tl.minimum({0}, {1}, propagate_nan=tl.PropagateNan.NONE))"),
    "torch.aten.pow.Tensor_Scalar": Rule(
        "arith", _pow_tensor_scalar, constant_args=(1,), typed=True, check_dtype=_pow_tensor_scalar_check
    ),
    "torch.aten.pow.Tensor_Tensor": Rule("arith", _pow_tensors, tensor_args=(0, 1), typed=True, dtypes=_INT_OR_FLOAT),
    "torch.aten.pow.Scalar": Rule(
        "arith", _pow_scalar_base, constant_args=(0,), tensor_args=(1,), typed=True, check_dtype=_pow_scalar_base_check
    ),
    # rounding and parts
    "torch.aten.trunc": _unary("trunc({0})"),
    "torch.aten.fix": _unary("trunc({0})"),
    "torch.aten.round": _unary("round_half_even({0})"),
    "torch.aten.frac": _unary("{0} - trunc({0})"),
    # more transcendental functions
    "torch.aten.expm1": _unary("expm1({0})"),
    "torch.aten.log1p": _unary("log1p({0})"),
    "torch.aten.log10": _unary("tl.log({0}) * 0.4342944819032518"),
    "torch.aten.tan": _unary("tl.sin({0}) / tl.cos({0})"),
    "torch.aten.sinh": _unary("sinh({0})"),
    "torch.aten.cosh": _unary("cosh({0})"),
    "torch.aten.asinh": _unary("asinh({0})"),
    "torch.aten.acosh": _unary("acosh({0})"),
    "torch.aten.atanh": _unary("atanh({0})"),
    "torch.aten.atan": _f64_unary("atan_f64"),
    "torch.aten.asin": _f64_unary("asin_f64"),
    "torch.aten.acos": _f64_unary("acos_f64"),
    "torch.aten.atan2": Rule(
        "arith", lambda a, c, t: _f64(f"atan2_f64({a[0]}, {a[1]})", t), tensor_args=(0, 1), float_only=True, typed=True
    ),
    "torch.aten.sgn": RULES["torch.aten.sign"],
    # float classification
    **{
        f"torch.aten.{test}": Rule("compare", (lambda test: lambda a, c, t: _is_special(a, t, test))(test), typed=True)
        for test in ("isnan", "isinf", "isfinite", "isposinf", "isneginf")
    },
    "torch.aten.signbit": Rule("compare", _signbit, typed=True),
    "torch.aten.copysign.Tensor": _float_binary("tl.where(signbit({1}), -tl.abs({0}), tl.abs({0}))"),
    "torch.aten.copysign.Scalar": Rule("arith", _copysign_scalar, constant_args=(1,), float_only=True),
    "torch.aten.nan_to_num": Rule(
        "arith", _nan_to_num, constant_args=(1, 2, 3), typed=True, check=_finite_numbers((1, 2, 3))
    ),
    # activations and friends
    "torch.aten.elu": Rule("arith", _elu, constant_args=(1, 2, 3), float_only=True, check=_FLOAT_ARGS),
    "torch.aten.celu": Rule(
        "arith", lambda a, c: _elu([a[0], a[1], "1", None], [c[0], c[1], 1, 1 / c[1]]), constant_args=(1,), float_only=True,
        check=lambda c: _finite_numbers((1,))(c) or ("alpha is 0" if c[1] == 0 else None),
    ),
    "torch.aten.selu": _unary(
        "tl.where({0} > 0, {0} * 1.0507009873554805, expm1({0}) * 1.7580993408473766)"
    ),
    "torch.aten.softplus": Rule("arith", _softplus, constant_args=(1, 2), float_only=True, check=_finite_numbers((1, 2))),
    "torch.aten.mish": _unary("{0} * tanh(log1p(tl.exp({0})))"),
    "torch.aten.hardshrink": Rule(
        "arith", lambda a, c: f"tl.where(({a[0]} >= -({a[1]})) & ({a[0]} <= {a[1]}), 0, {a[0]})", constant_args=(1,),
        float_only=True, check=_finite_numbers((1,)),
    ),
    "torch.aten.softshrink": Rule(
        "arith",
        lambda a, c: f"tl.where({a[0]} > {a[1]}, {a[0]} - {a[1]}, tl.where({a[0]} < -({a[1]}), {a[0]} + {a[1]}, {a[0]} * 0))",
        constant_args=(1,), float_only=True, check=_finite_numbers((1,)),
    ),
    "torch.aten.threshold": Rule("arith", _threshold, constant_args=(1, 2), dtypes=_INT_OR_FLOAT, typed=True),
    # min(max(x, 0), 6) as eager's clamp: x itself where it equals a bound, so -0.0 stays -0.0
    "torch.aten.relu6": _unary("tl.where({0} < 0, 0, tl.where({0} > 6, 6, {0}))", float_only=False),
    "torch.aten.logit": Rule("arith", _logit, constant_args=(1,), float_only=True, typed=True, check=_finite_numbers((1,))),
    "torch.aten.xlogy.Tensor": _float_binary("tl.where({1} != {1}, {1}, tl.where({0} == 0, 0.0, {0} * tl.log({1})))"),
    "torch.aten.heaviside": _binary("tl.where({0} == 0, {1}, tl.where({0} > 0, 1, 0))"),
    "torch.aten.logaddexp": _float_binary("logaddexp({0}, {1})"),
    "torch.aten.logaddexp2": _float_binary("logaddexp2({0}, {1})"),
    "torch.aten.lerp.Scalar": Rule("arith", _lerp, constant_args=(2,), tensor_args=(0, 1), float_only=True),
    "torch.aten.lerp.Tensor": Rule("arith", _lerp, tensor_args=(0, 1, 2), float_only=True),
    "torch.aten.addcmul": Rule(
        "arith", _addcmul, constant_args=(3,), tensor_args=(0, 1, 2), typed=True,
        check=_finite_numbers((3,)), check_dtype=_integer_value_check,
    ),
    "torch.aten.addcdiv": Rule(
        "arith", lambda a, c: f"{a[0]} + {a[1]} / {a[2]}" if c[3] == 1 else f"{a[0]} + {a[3]} * {a[1]} / {a[2]}",
        constant_args=(3,), tensor_args=(0, 1, 2), float_only=True, check=_finite_numbers((3,)),
    ),
    "torch.aten.masked_fill.Tensor": Rule(
        "select", lambda a, c: f"tl.where({a[1]}, {a[2]}, {a[0]})", cond=1, tensor_args=(0, 1, 2)
    ),
    "torch.aten.square": Rule("arith", lambda a, c: f"{a[0]} * {a[0]}"),
    "torch.aten.deg2rad": _unary("{0} * 0.017453292519943295"),
    "torch.aten.rad2deg": _unary("{0} * 57.29577951308232"),
    "torch.aten.sinc": _unary("tl.where({0} == 0, 1.0, tl.sin({0} * 3.141592653589793) / ({0} * 3.141592653589793))"),
    "torch.aten.ldexp.Tensor": _float_binary("{0} * tl.exp2({1})"),
    "torch.aten.hypot": Rule(
        "arith", lambda a, c, t: _f64(f"hypot_f64({a[0]}, {a[1]})", t), tensor_args=(0, 1), float_only=True, typed=True
    ),
    "torch.aten.remainder.Scalar_Tensor": Rule(
        "arith", lambda a, c, t: f"remainder({_splat(c[0], a[1], t.target)}, {a[1]})",
        constant_args=(0,), tensor_args=(1,), typed=True, dtypes=_INT_OR_FLOAT, check=_finite_numbers((0,)),
    ),
    # A Python number made a 0-d tensor (`div(x, 3, rounding_mode=...)` imports as one).
    "torch.prim.NumToTensor.Scalar": Rule(
        "arith", lambda a, c, t: f"tl.full([], {a[0]}, {TRITON_DTYPES[t.result]})", constant_args=(0,), tensor_args=(),
        typed=True, check=_finite_numbers((0,)),
    ),
})
# Other spellings of the rules above.
RULES.update({
    "torch.aten.true_divide.Tensor": RULES["torch.aten.div.Tensor"],
    "torch.aten.float_power.Tensor_Scalar": RULES["torch.aten.pow.Tensor_Scalar"],
    "torch.aten.float_power.Tensor_Tensor": RULES["torch.aten.pow.Tensor_Tensor"],
    "torch.aten.float_power.Scalar": RULES["torch.aten.pow.Scalar"],
})


def literal(value) -> str | None:
    """A Python literal Triton accepts for a constant, or None if there is none."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    return None


# What a lifted constant may meet: Triton passes a Python float argument as f32, so the op must compute in f32
# (f64 would see the value rounded to f32 where its literal was exact).
_F32_COMPUTED = ("float32", "float16", "bfloat16")


def liftable_constants(block, floats=None) -> list:
    """The float constants of a group or kernel body a kernel may take as launch arguments, in body order.

    A `torch.constant.float` is liftable when it is finite (inf and NaN stay: eager has special cases for
    them) and every use is a `scalar_args` position of an elementwise op computing in f32 (f32, f16 or bf16
    tensors, a float or bool result): the lowering prints it as a plain literal there and nothing reads its
    value, so passing it in changes no line of the kernel. Any other use (a pow exponent, alpha, a
    reduction's or a view's argument, an sdpa scale) keeps it part of the kernel's identity. `floats`: the
    body's `torch.constant.float` ops in order, where the caller has them (then the body is not listed).
    """
    found = []
    for op in block.operations if floats is None else floats:
        if op.operation.name != "torch.constant.float":
            continue
        value = op.results[0]
        uses = list(value.uses)
        if uses and math.isfinite(constant_value(value)) and all(_plain_scalar_use(u.owner, u.operand_number) for u in uses):
            found.append(value)
    return found


def _plain_scalar_use(op, position: int) -> bool:
    rule = RULES.get(torch_name(op))
    if rule is None or position not in rule.scalar_args or len(op.results) != 1:
        return False
    result = tensor_type(op.results[0].type)
    data = [i for i in rule.tensor_args if i < len(op.operands) and not (rule.kind == "select" and i == rule.cond)]
    tensors = [tensor_type(op.operands[i].type) for i in data]
    return (
        result is not None and result.dtype in (*_F32_COMPUTED, "bool")
        and all(t is not None and t.dtype in _F32_COMPUTED for t in tensors)
    )


def why_not_fusible(op) -> str | None:
    """None if `op` can join a pointwise group; otherwise the reason, for reports."""
    rule = RULES.get(torch_name(op))
    if rule is None:
        return "unsupported op"
    if len(op.results) != 1:
        return "has more than one result"
    # Sizes may be `?`: kernels take their sizes as arguments (lowering/dynamic.py).
    result = tensor_type(op.results[0].type)
    if result is None:
        return "result is not a ranked tensor of a supported dtype"
    consts = []
    for i, operand in enumerate(op.operands):
        t = tensor_type(operand.type)
        if i in rule.tensor_args and t is not None:
            consts.append(None)
            continue
        value = constant_value(operand)
        if value is NO_CONSTANT:
            return f"operand #{i} is neither a tensor nor a constant"
        if i not in rule.constant_args and not isinstance(value, (bool, int, float)):
            return f"operand #{i} ({value!r}) is not a number"
        consts.append(value)
    # Integer and bool operands of a float-only op are converted to the float
    # result first, as eager does (exp of an int64 tensor is float32).
    if rule.float_only and result.dtype not in FLOAT_DTYPES:
        return f"result is {result.dtype}; the op is fused for floating types only"
    if rule.dtypes is not None and result.dtype not in rule.dtypes:
        return f"result is {result.dtype}; eager computes the op for {', '.join(rule.dtypes)} only"
    return rule.check(consts) or rule.check_dtype(consts, result.dtype)


def fusible(op) -> bool:
    return why_not_fusible(op) is None


FAMILY = Family(
    __name__, frozenset(RULES), why_not_fusible, fused=frozenset(RULES), pure=frozenset(RULES),
    lowering="mlirfuse/lowering/emitter.py",
    limits="one result, operands tensors or constants; float-only ops on float results, the others on the dtypes eager "
    "computes them for; constant arguments where the rule needs them (alpha, exponent, dtype)",
)
