"""Integer semantics, division modes, shifts, pow and the float special functions, against eager.

Each test compiles one module that computes a family of ops on one dtype and
checks that every op ran in a Triton kernel (no ATen fallback) and that the
results match eager PyTorch: exactly for integers and bools, with the
dtype's default tolerances (and NaN positions) for floats. Inputs hold the
cases where the formulas differ from the naive ones: negative operands of
floor division and remainder, shift amounts outside [0, bits), -0.0, +-inf,
NaN, halves for rounding, zero divisors of float division.
"""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

from helpers import compile_and_compare

SHAPE = (3, 11)
# CI runs each family on the dtypes that take different paths (8-bit wrap and
# unsigned, 64-bit, f64 helpers, bf16/f16 rounding); MLIRFUSE_ALL_DTYPES=1 runs every dtype.
ALL = os.environ.get("MLIRFUSE_ALL_DTYPES") == "1"
INTS = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8] if ALL else [torch.int8, torch.int64, torch.uint8]
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16] if ALL else [torch.float32, torch.float64, torch.bfloat16]
HALVES = [torch.float32, torch.float16, torch.bfloat16] if ALL else [torch.float32, torch.float16]
INF, NAN = float("inf"), float("nan")


def ints(dtype, low=-20, high=21):
    if dtype == torch.uint8:
        low = max(low, 0)
    return torch.randint(low, high, SHAPE, dtype=dtype)


def divisors(dtype):
    """Non-zero, both signs (eager raises on an integer division by zero)."""
    d = torch.randint(1, 6, SHAPE, dtype=dtype)
    return d if dtype == torch.uint8 else d * (1 - 2 * torch.randint(0, 2, SHAPE, dtype=dtype))


def specials(dtype):
    """Random floats with -0.0, +-inf and NaN planted at known places."""
    x = (torch.randn(SHAPE) * 4).to(dtype)
    flat = x.view(-1)
    flat[0], flat[1], flat[2], flat[3], flat[4] = -0.0, INF, -INF, NAN, 0.0
    return x


def halves(dtype):
    """Values on .5 boundaries (rounding ties) and near integers, both signs."""
    x = torch.arange(-16, 17, dtype=torch.float32)[: SHAPE[0] * SHAPE[1]].view(SHAPE) * 0.25
    return x.to(dtype)


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_division_family(dtype):
    a, b = ints(dtype), divisors(dtype)
    compile_and_compare(
        lambda a, b: (
            a // b, torch.remainder(a, b), torch.fmod(a, b),
            torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
            a // 3, a % 3, torch.fmod(a, 3), torch.div(a, 3, rounding_mode="trunc"),
        ),
        (a, b),
    )


@pytest.mark.parametrize("dtype", [torch.int32], ids=str)
def test_integer_division_negative_scalar(dtype):
    a = ints(dtype)
    compile_and_compare(lambda a: (a // -3, a % -3, torch.fmod(a, -3), torch.div(a, -3, rounding_mode="floor")), (a,))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_float_division_family(dtype):
    # Divisors with both signs and zeros; dividends with -0.0, inf and NaN.
    a = specials(dtype)
    b = torch.randint(-3, 4, SHAPE).to(dtype) * 0.5
    compile_and_compare(
        lambda a, b: (
            torch.floor_divide(a, b), torch.remainder(a, b), torch.fmod(a, b),
            torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
            a // 1.5, a % -1.5, torch.fmod(a, 2.0), torch.div(a, 0.5, rounding_mode="trunc"),
        ),
        (a, b),
        equal_nan=True,
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_division_rounds_like_eager(dtype):
    # Eager divides f16/bf16 in the dtype's arithmetic: the quotient is rounded
    # before trunc, each step of floor division too (1-8 % of random pairs differ from f32).
    a, b = (torch.randn(64, 64) * 50).to(dtype), (torch.randn(64, 64) * 3).to(dtype)
    compile_and_compare(
        lambda a, b: (torch.div(a, b, rounding_mode="trunc"), torch.div(a, b, rounding_mode="floor"), a // b),
        (a, b), atol=0, rtol=0, equal_nan=True,
    )


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_bitwise_scalar_and_shifts(dtype):
    bits = torch.iinfo(dtype).bits
    a = ints(dtype, -100, 100)
    # Amounts inside [0, bits) and outside it on both sides.
    s = torch.randint(-2, bits + 3, SHAPE, dtype=torch.int64)
    s = s.clamp(min=0).to(dtype) if dtype == torch.uint8 else s.to(dtype)
    compile_and_compare(
        lambda a, s: (
            a & 6, a | 5, a ^ 3, torch.bitwise_and(a, 12),
            a << 3, a >> 2, a << s, a >> s,
            torch.bitwise_left_shift(a, s), torch.bitwise_right_shift(a, s),
        ),
        (a, s),
    )



@pytest.mark.parametrize("dtype", [torch.int16, torch.bool], ids=str)
def test_bitwise_tensor_ops(dtype):
    # bitwise_and/or/xor of two tensors (not the scalar forms above) and bitwise_not.
    a, b = (torch.rand(SHAPE) > 0.5, torch.rand(SHAPE) > 0.5) if dtype == torch.bool else (ints(dtype, -300, 300), ints(dtype, -300, 300))
    compile_and_compare(
        lambda a, b: (torch.bitwise_and(a, b), torch.bitwise_or(a, b), torch.bitwise_xor(a, b), torch.bitwise_not(a)),
        (a, b), op="torch.aten.bitwise_xor",
    )

@pytest.mark.parametrize("dtype", [torch.int8, torch.int64], ids=str)
def test_integer_pow(dtype):
    a = ints(dtype, -4, 5)
    e = torch.randint(-2, 6, SHAPE, dtype=dtype)  # negative exponents: 0 except for bases 1 and -1
    compile_and_compare(lambda a, e: (a**2, a**3, a**5, a**0, torch.pow(a, e), 2**e.abs()), (a, e))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_float_pow(dtype):
    x = specials(dtype)
    y = torch.tensor([0.0, 2.0, -1.0, 0.5, 3.0, -3.0, 2.5, INF, -INF, NAN, 1.0] * 3).view(SHAPE).to(dtype)
    compile_and_compare(
        lambda x, y: (torch.pow(x, y), x.abs() ** 1.7, torch.pow(2.0, y), torch.pow(x, 4), x**-2.5),
        (x, y),
        equal_nan=True,
    )


def test_int_tensor_float_results():
    # Float-only ops take integer and bool tensors as eager does: converted to the float result first.
    i, b = ints(torch.int64), torch.rand(SHAPE) > 0.5
    compile_and_compare(
        lambda i, b: (torch.exp(i.abs() % 5), torch.sigmoid(i), torch.sqrt(i.abs()), torch.sin(b), i**0.5, i / 2),
        (i, b),
        equal_nan=True,
    )


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_rounding(dtype):
    x = torch.cat([halves(dtype).view(-1), specials(dtype).view(-1)]).view(6, 11)
    compile_and_compare(lambda x: (torch.trunc(x), torch.round(x), torch.frac(x), torch.fix(x)), (x,), equal_nan=True)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_transcendental(dtype):
    x = specials(dtype)
    u = (torch.rand(SHAPE) * 1.98 - 0.99).to(dtype)  # inside (-1, 1)
    u.view(-1)[:4] = torch.tensor([-0.0, 0.0, 1e-4, -1e-6])
    big = (torch.rand(SHAPE) * 10 + 1).to(dtype)
    compile_and_compare(
        lambda x, u, big: (
            torch.expm1(u), torch.log1p(u), torch.log10(big), torch.tan(u), torch.sinh(x), torch.cosh(u),
            torch.asinh(x), torch.acosh(big), torch.atanh(u), torch.atan(x), torch.asin(u), torch.acos(u),
            torch.expm1(x), torch.log1p(x.abs()), torch.sgn(x),
        ),
        (x, u, big),
        equal_nan=True,
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_atan2_quadrants_and_zeros(dtype):
    v = torch.tensor([0.0, -0.0, 1.0, -1.0, INF, -INF, NAN, 2.5, -3.0])
    y, x = torch.meshgrid(v, v, indexing="ij")
    compile_and_compare(torch.atan2, (y.to(dtype).contiguous(), x.to(dtype).contiguous()), equal_nan=True)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_classification_and_sign(dtype):
    x, y = specials(dtype), specials(dtype).flip(1).contiguous()
    compile_and_compare(
        lambda x, y: (
            torch.isnan(x), torch.isinf(x), torch.isfinite(x), torch.isposinf(x), torch.isneginf(x), torch.signbit(x),
            torch.copysign(x, y), torch.copysign(x, -1.0), torch.nan_to_num(x), torch.nan_to_num(x, 1.0, 2.0, -2.0),
        ),
        (x, y),
        equal_nan=True,
    )


@pytest.mark.parametrize("dtype", [torch.uint8, torch.bool], ids=str)
def test_classification_of_integers(dtype):
    x = torch.rand(SHAPE) > 0.5 if dtype == torch.bool else ints(dtype)
    compile_and_compare(lambda x: (torch.isnan(x), torch.isinf(x), torch.isfinite(x), torch.signbit(x)), (x,))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_clamp_with_tensor_bounds(dtype):
    x = specials(dtype) if dtype.is_floating_point else ints(dtype)
    lo = (torch.randn(SHAPE) - 1).to(dtype)
    hi = lo + 2
    compile_and_compare(
        lambda x, lo, hi: (torch.clamp(x, lo, hi), torch.clamp(x, min=lo), torch.clamp(x, max=hi), torch.fmax(x, lo), torch.fmin(x, hi)),
        (x, lo, hi),
        equal_nan=True,
    )


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_activations(dtype):
    x = (torch.randn(SHAPE) * 4).to(dtype)
    p = torch.rand(SHAPE).to(dtype)
    compile_and_compare(
        lambda x, p: (
            F.elu(x), F.elu(x, 0.5), F.celu(x, 2.0), F.selu(x), F.softplus(x), F.softplus(x, 2.0, 5.0), F.mish(x),
            F.hardshrink(x, 1.0), F.softshrink(x, 1.0), F.threshold(x, 0.5, -3.0), F.relu6(x),
            torch.logit(p), torch.logit(p, 0.25),
        ),
        (x, p),
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_binary_float_functions(dtype):
    x, y = specials(dtype), (torch.rand(SHAPE) * 3).to(dtype)
    y.view(-1)[5:8] = torch.tensor([0.0, NAN, INF])
    w = torch.rand(SHAPE).to(dtype)
    compile_and_compare(
        lambda x, y, w: (
            torch.xlogy(x, y), torch.heaviside(x, y), torch.logaddexp(x, y), torch.logaddexp2(x, x),
            torch.lerp(x, y, 0.3), torch.lerp(x, y, 0.7), torch.lerp(y, w, w),
            torch.addcmul(x, y, w, value=2), torch.addcdiv(x, y, w + 1, value=-0.5), torch.addcmul(y, w, w),
        ),
        (x, y, w),
        equal_nan=True,
    )


def test_masked_fill_with_tensor_value():
    x, m = torch.randn(SHAPE), torch.rand(SHAPE) > 0.5
    compile_and_compare(lambda x, m: x.masked_fill(m, torch.tensor(-2.0)), (x, m), op="torch.aten.masked_fill.Tensor")


def test_other_spellings_and_small_ops():
    # Ops the importer spells `torch.operator` (true_divide, hypot, float_power,
    # the scalar-first remainder, `^` of tensors) fuse like the ops they are.
    x, y = specials(torch.float32), (torch.rand(SHAPE) * 3 + 0.5)
    i, j = ints(torch.int32), divisors(torch.int32)
    compile_and_compare(
        lambda x, y, i, j: (
            torch.sinc(x), torch.deg2rad(x), torch.rad2deg(i), torch.square(x), torch.square(i),
            torch.ldexp(y, i % 4), torch.hypot(x, y), torch.true_divide(x, y), torch.float_power(y, 1.5),
            torch.float_power(y, i % 3), 7 % j, i ^ j, torch.remainder(2.5, y),
        ),
        (x, y, i, j),
        equal_nan=True,
    )


def test_integer_addcmul_with_a_fractional_value_matches_eager():
    # Eager casts value to int64 first (0.5 -> 0, 1.7 -> 1): a fused 0.5 * b * c would differ (fuzz seed 70404155).
    a, b = torch.tensor([1, 2, 3]), torch.tensor([3, -4, 5])
    for value in (0.5, 1.7, -0.5, 2.0):
        compile_and_compare(lambda a, b, value=value: torch.addcmul(a, b, b, value=value), (a, b), fused=value == 2.0)
