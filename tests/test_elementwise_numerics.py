"""Every fusible elementwise op, run as a Triton kernel, against eager PyTorch.

Each case wraps one op in a module, compiles it, and checks that the op ran
inside a fusion.kernel (no ATen fallback) and that the result matches eager
with `torch.testing.assert_close`'s default tolerances for the dtype.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from helpers import compile_and_compare

SHAPE = (4, 33)
NAN = float("nan")
INF = float("inf")


# Input factories: called inside the test, after the autouse seed fixture.
def randn(n: int = 1):
    return lambda: tuple(torch.randn(SHAPE) for _ in range(n))


def positive(n: int = 1):
    return lambda: tuple(torch.rand(SHAPE) + 0.1 for _ in range(n))


def wide(n: int = 1):
    """Spread beyond [-3, 3] so piecewise ops (hardsigmoid, hardtanh, floor) take every branch."""
    return lambda: tuple(torch.randn(SHAPE) * 4 for _ in range(n))


def grid(n: int = 1):
    """Small integers as floats, so that equalities actually hold somewhere."""
    return lambda: tuple(torch.randint(-3, 4, SHAPE).float() for _ in range(n))


def bools(n: int = 1):
    return lambda: tuple(torch.rand(SHAPE) > 0.5 for _ in range(n))


def ints(dtype=torch.int64, n: int = 1):
    return lambda: tuple(torch.randint(-5, 6, SHAPE, dtype=dtype) for _ in range(n))


def with_nans(t: torch.Tensor, every: int = 5) -> torch.Tensor:
    t = t.clone()
    t.view(-1)[::every] = NAN
    return t


def nan_randn(n: int = 1):
    """NaNs in every input, at different positions, plus +-inf."""

    def make():
        out = []
        for k in range(n):
            t = with_nans(torch.randn(SHAPE) * 4, every=5 + 2 * k)
            t.view(-1)[1] = INF
            t.view(-1)[2] = -INF
            out.append(t)
        return tuple(out)

    return make


def row(n_full: int = 1):
    """[4,33] tensors and one [33] row broadcast against them."""
    return lambda: tuple(torch.randn(SHAPE) for _ in range(n_full)) + (torch.randn(SHAPE[1]),)


def column():
    return lambda: (torch.randn(SHAPE), torch.randn(SHAPE[0], 1))


def case(name, fn, inputs, op=None, **tolerances):
    """One parametrization: `op` (e.g. 'torch.aten.relu') must end up in a fusion.kernel."""
    return pytest.param(fn, inputs, op, tolerances, id=name)


A = "torch.aten."

UNARY = [
    case("neg", torch.neg, randn(), A + "neg"),
    case("abs", torch.abs, randn(), A + "abs"),
    case("relu", torch.relu, randn(), A + "relu"),
    case("exp", torch.exp, randn(), A + "exp"),
    case("exp2", torch.exp2, randn(), A + "exp2"),
    case("log", torch.log, positive(), A + "log"),
    case("log2", torch.log2, positive(), A + "log2"),
    case("sqrt", torch.sqrt, positive(), A + "sqrt"),
    case("rsqrt", torch.rsqrt, positive(), A + "rsqrt"),
    case("sin", torch.sin, wide(), A + "sin"),
    case("cos", torch.cos, wide(), A + "cos"),
    case("erf", torch.erf, randn(), A + "erf"),
    case("floor", torch.floor, wide(), A + "floor"),
    case("ceil", torch.ceil, wide(), A + "ceil"),
    case("reciprocal", torch.reciprocal, randn(), A + "reciprocal"),
    case("sigmoid", torch.sigmoid, wide(), A + "sigmoid"),
    case("tanh", torch.tanh, wide(), A + "tanh"),
    case("sign", torch.sign, grid(), A + "sign"),
    case("silu", F.silu, wide(), A + "silu"),
    case("gelu", F.gelu, wide(), A + "gelu"),
    case("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), wide(), A + "gelu"),
    case("hardsigmoid", F.hardsigmoid, wide(), A + "hardsigmoid"),
    case("hardswish", F.hardswish, wide(), A + "hardswish"),
    case("leaky_relu", F.leaky_relu, randn(), A + "leaky_relu"),
    case("leaky_relu_slope", lambda x: F.leaky_relu(x, 0.2), randn(), A + "leaky_relu"),
    case("hardtanh", F.hardtanh, wide(), A + "hardtanh"),
    case("hardtanh_bounds", lambda x: F.hardtanh(x, -0.5, 2.0), wide(), A + "hardtanh"),
    case("clamp", lambda x: torch.clamp(x, -0.5, 0.5), randn(), A + "clamp"),
    case("clamp_only_min", lambda x: torch.clamp(x, min=0.0), randn(), A + "clamp"),
    case("clamp_only_max", lambda x: torch.clamp(x, max=0.25), randn(), A + "clamp"),
    case("clamp_min", lambda x: torch.clamp_min(x, 0.1), randn(), A + "clamp_min"),
    case("clamp_max", lambda x: torch.clamp_max(x, -0.1), randn(), A + "clamp_max"),
    case("pow_2", lambda x: x**2, randn(), A + "pow.Tensor_Scalar"),
    case("pow_3", lambda x: torch.pow(x, 3), randn(), A + "pow.Tensor_Scalar"),
    case("pow_half", lambda x: x**0.5, positive(), A + "pow.Tensor_Scalar"),
    case("pow_minus_1", lambda x: x**-1, positive(), A + "pow.Tensor_Scalar"),
    case("pow_minus_half", lambda x: x**-0.5, positive(), A + "pow.Tensor_Scalar"),
]

BINARY = [
    case("add", torch.add, randn(2), A + "add.Tensor"),
    case("add_broadcast_row", torch.add, row(), A + "add.Tensor"),
    case("add_broadcast_column", torch.add, column(), A + "add.Tensor"),
    case("add_scalar", lambda x: x + 2.5, randn(), A + "add"),
    case("add_alpha", lambda x, y: torch.add(x, y, alpha=2), randn(2), A + "add.Tensor"),
    case("add_scalar_alpha", lambda x: torch.add(x, 2, alpha=3), randn(), A + "add.Scalar"),
    case("sub", torch.sub, randn(2), A + "sub.Tensor"),
    case("sub_alpha", lambda x, y: torch.sub(x, y, alpha=0.5), randn(2), A + "sub.Tensor"),
    case("sub_scalar", lambda x: x - 1.5, randn(), A + "sub"),
    case("rsub_scalar", lambda x: 2 - x, randn(), A + "rsub.Scalar"),
    case("rsub_scalar_alpha", lambda x: torch.rsub(x, 2, alpha=3), randn(), A + "rsub.Scalar"),
    case("mul", torch.mul, randn(2), A + "mul.Tensor"),
    case("mul_broadcast", torch.mul, row(), A + "mul.Tensor"),
    case("mul_scalar", lambda x: x * 3, randn(), A + "mul"),
    case("div", torch.div, (lambda: (torch.randn(SHAPE), torch.rand(SHAPE) + 0.5)), A + "div.Tensor"),
    case("div_scalar", lambda x: x / 3, randn(), A + "div"),
    case("maximum", torch.maximum, randn(2), A + "maximum"),
    case("minimum", torch.minimum, randn(2), A + "minimum"),
]

COMPARE = [
    case(f"{name}_{form}", fn, grid(2) if form == "tensor" else grid(), A + f"{name}.{form.capitalize()}")
    for name, tensor_fn, scalar_fn in (
        ("eq", torch.eq, lambda x: x == 1),
        ("ne", torch.ne, lambda x: x != 1),
        ("lt", torch.lt, lambda x: x < 1),
        ("le", torch.le, lambda x: x <= 1),
        ("gt", torch.gt, lambda x: x > -1),
        ("ge", torch.ge, lambda x: x >= -1),
    )
    for form, fn in (("tensor", tensor_fn), ("scalar", scalar_fn))
]

LOGICAL = [
    case("logical_not", torch.logical_not, bools(), A + "logical_not"),
    case("logical_not_float", torch.logical_not, grid(), A + "logical_not"),
    case("logical_and", torch.logical_and, bools(2), A + "logical_and"),
    case("logical_or", torch.logical_or, bools(2), A + "logical_or"),
    case("logical_xor", torch.logical_xor, bools(2), A + "logical_xor"),
    case("logical_and_float", torch.logical_and, grid(2), A + "logical_and"),
]

def masked(n: int = 1):
    """A bool mask and `n` float tensors."""
    return lambda: (torch.rand(SHAPE) > 0.5,) + tuple(torch.randn(SHAPE) for _ in range(n))


SELECT = [
    case("where_tensor", torch.where, masked(2), A + "where.self"),
    case("where_scalar_other", lambda m, x: torch.where(m, x, 0.5), masked(), A + "where.ScalarOther"),
    case("where_scalar_self", lambda m, y: torch.where(m, -0.5, y), masked(), A + "where.ScalarSelf"),
    case("where_scalars", lambda m: torch.where(m, 1.0, 0.0), masked(0), A + "where"),
    case("masked_fill", lambda m, x: x.masked_fill(m, 2.0), masked(), A + "masked_fill.Scalar"),
    case("masked_fill_neg_inf", lambda m, x: x.masked_fill(m, float("-inf")), masked(), A + "masked_fill.Scalar"),
    # The usual spelling: the mask is computed from the value it selects from.
    case("where_from_own_mask", lambda x, y: torch.where(x > 0, x, y), randn(2), A + "where.self"),
    case("masked_fill_from_own_mask", lambda x: x.masked_fill(x < 0, 0.0), randn(), A + "masked_fill.Scalar"),
]

CASTS = [
    case("to_float16", lambda x: x.to(torch.float16), randn()),
    case("to_bfloat16", lambda x: x.to(torch.bfloat16), randn()),
    case("to_int32", lambda x: x.to(torch.int32), wide()),
    case("to_bool", lambda x: x.bool(), grid()),
    case("int_to_float", lambda x: x.float(), ints()),
    case("int64_to_int32", lambda x: x.to(torch.int32), ints()),
    case("bool_to_float", lambda x: x.float(), bools()),
    case("float16_to_float32", lambda x: x.float(), lambda: (torch.randn(SHAPE, dtype=torch.float16),)),
    # A cast inside a chain: the cast is not the graph's only op.
    case("cast_in_chain", lambda x: (x * 2).to(torch.float16) + 1, randn()),
]

NANS = [
    case("relu_nan", torch.relu, nan_randn(), A + "relu", equal_nan=True),
    case("clamp_nan", lambda x: torch.clamp(x, -1.0, 1.0), nan_randn(), A + "clamp", equal_nan=True),
    case("clamp_min_nan", lambda x: torch.clamp_min(x, 0.0), nan_randn(), A + "clamp_min", equal_nan=True),
    case("hardtanh_nan", F.hardtanh, nan_randn(), A + "hardtanh", equal_nan=True),
    case("leaky_relu_nan", F.leaky_relu, nan_randn(), A + "leaky_relu", equal_nan=True),
    case("maximum_nan", torch.maximum, nan_randn(2), A + "maximum", equal_nan=True),
    case("minimum_nan", torch.minimum, nan_randn(2), A + "minimum", equal_nan=True),
    case("maximum_nan_one_side", torch.maximum, lambda: (with_nans(torch.randn(SHAPE)), torch.randn(SHAPE)),
         A + "maximum", equal_nan=True),
    case("minimum_nan_other_side", torch.minimum, lambda: (torch.randn(SHAPE), with_nans(torch.randn(SHAPE))),
         A + "minimum", equal_nan=True),
    case("sign_nan", torch.sign, nan_randn(), A + "sign", equal_nan=True),
    case("eq_nan", lambda x, y: x == y, lambda: (with_nans(torch.randn(SHAPE)), with_nans(torch.randn(SHAPE), 3)),
         A + "eq.Tensor"),
    case("ne_nan", lambda x: x != x, nan_randn(), A + "ne.Tensor"),
]


@pytest.mark.parametrize("fn, inputs, op, tolerances", UNARY + BINARY + COMPARE + LOGICAL + SELECT + CASTS + NANS)
def test_op_matches_eager(fn, inputs, op, tolerances):
    compile_and_compare(fn, inputs(), op=op, **tolerances)


# --- dtypes -------------------------------------------------------------------------------------


def chain(x, y):
    return torch.sigmoid(torch.relu(x * y + 1))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64], ids=str)
def test_low_and_high_precision_chain(dtype):
    # f16/bf16 are computed in f32 and rounded once on store, as Inductor does;
    # eager rounds after every op, which the dtype's default tolerance absorbs.
    x, y = torch.randn(SHAPE, dtype=dtype), torch.randn(SHAPE, dtype=dtype)
    cm = compile_and_compare(chain, (x, y))
    assert cm.stats["launches"] == 1


def test_mixed_precision_promotes():
    x, y = torch.randn(SHAPE, dtype=torch.float16), torch.randn(SHAPE)
    cm = compile_and_compare(lambda x, y: torch.relu(x * y), (x, y))
    assert cm(x, y).dtype == torch.float32


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
def test_integer_arithmetic(dtype):
    a, b = ints(dtype, 2)()
    cm = compile_and_compare(lambda a, b: torch.neg(torch.relu(torch.add(a, b, alpha=2) - 3).abs() * 5), (a, b))
    assert cm(a, b).dtype == dtype


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
def test_integer_binary_ops(dtype):
    a, b = ints(dtype, 2)()
    compile_and_compare(lambda a, b: (torch.maximum(a, b), torch.minimum(a, b), a * b, a - b), (a, b))


def test_int32_int64_promotion():
    a, b = ints(torch.int32)()[0], ints(torch.int64)()[0]
    cm = compile_and_compare(lambda a, b: torch.relu(a * b - 2), (a, b))
    assert cm(a, b).dtype == torch.int64


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_compared_with_python_float(dtype):
    # Eager rounds the scalar to the tensor's dtype before comparing, so a
    # tensor holding round(0.1) equals 0.1; the values sit exactly on the
    # rounded scalars to make any difference visible.
    x = torch.tensor([0.1, 0.2, 0.3, 1 / 3, 0.7] * 4, dtype=dtype).view(4, 5)
    compile_and_compare(lambda x: (x == 0.1, x > 0.1, x <= 0.3, x >= 1 / 3), (x,))


def test_integer_tensor_with_float_scalar():
    a = ints(torch.int64)()[0]
    cm = compile_and_compare(lambda a: (a * 0.5, a / 2), (a,))
    assert all(t.dtype == torch.float32 for t in cm(a))


def test_integer_true_division_gives_float():
    a = ints(torch.int64)()[0]
    b = torch.randint(1, 5, SHAPE)
    cm = compile_and_compare(lambda a, b: a / b, (a, b))
    assert cm(a, b).dtype == torch.float32


def test_integer_compared_with_float_scalar():
    a = ints(torch.int32)()[0]
    compile_and_compare(lambda a: (a > 0.5, a == -2, a <= -1.5), (a,))


def test_bool_outputs():
    x, y = torch.randn(SHAPE), torch.randn(SHAPE)
    cm = compile_and_compare(lambda x, y: torch.logical_not(~(x <= y)), (x, y))
    assert cm(x, y).dtype == torch.bool


def test_bool_operators():
    # `&`, `|` and `~` on bool tensors are how masks are usually written.
    a, b = torch.rand(SHAPE) > 0.5, torch.rand(SHAPE) > 0.5
    compile_and_compare(lambda a, b: (a & b, a | b, ~a), (a, b))


def test_bool_xor_operator_runs():
    # `^` imports as a generic `torch.operator "torch.aten.__xor__.Tensor"`;
    # fused or not, the compiled module must run it.
    a, b = torch.rand(SHAPE) > 0.5, torch.rand(SHAPE) > 0.5
    compile_and_compare(lambda a, b: a ^ b, (a, b), fused=False)


# --- layouts and broadcasting -------------------------------------------------------------------


def _noncontiguous_views():
    return {
        "transposed": torch.randn(SHAPE[1], SHAPE[0]).t(),
        "strided_slice": torch.randn(SHAPE[0], 2 * SHAPE[1])[:, ::2],
        "expanded": torch.randn(1, SHAPE[1]).expand(SHAPE),
    }


@pytest.mark.parametrize("kind", ["transposed", "strided_slice", "expanded"])
def test_noncontiguous_input_at_call_time(kind):
    x = _noncontiguous_views()[kind]
    y = torch.randn(SHAPE)
    assert not x.is_contiguous()
    # Compiled for contiguous inputs; the kernel addresses inputs through their strides.
    model_fn = lambda x, y: torch.tanh(x * y) - 0.5  # noqa: E731
    cm = compile_and_compare(model_fn, (x.contiguous(), y))
    torch.testing.assert_close(cm(x, y), model_fn(x, y))


def test_noncontiguous_example_input():
    x = torch.randn(SHAPE[1], SHAPE[0]).t()
    compile_and_compare(lambda x: torch.relu(x) + 1, (x,))


def test_broadcast_vector_against_matrix():
    v, m = torch.randn(16), torch.randn(4, 16)
    compile_and_compare(lambda v, m: torch.relu(v + m) * 2, (v, m), op=A + "add.Tensor")


def test_broadcast_zero_dim_tensor():
    s, m = torch.tensor(1.5), torch.randn(4, 16)
    compile_and_compare(lambda s, m: torch.sigmoid(m * s) - 1, (s, m), op=A + "mul.Tensor")


def test_zero_dim_only():
    s = torch.tensor(0.75)
    compile_and_compare(lambda s: torch.relu(s) * 2 + 1, (s,))


def test_empty_tensor():
    x = torch.randn(0, 16)
    compile_and_compare(lambda x: torch.relu(x) + 1, (x,), fused=False)
