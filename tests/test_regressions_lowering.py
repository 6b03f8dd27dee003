"""Regressions from issue 9 in the Triton lowering, each against eager PyTorch.

Every case here once gave a wrong answer, a crash, or an out-of-bounds store
(silent in the interpreter, a wild write on a GPU); the out-of-bounds ones are
caught by writing the kernel's outputs into buffers with guard regions.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from mlirfuse.ops import special_values
from mlirfuse.runtime.kernels import Launcher
from helpers import Lambda, compile_and_compare

# --- concat kernels: pieces one wide along the cat dim ------------------------------------------


def cat_with_transposed(a, b):
    c = a.exp()
    return torch.cat([c, b.t()], dim=0), c


def cat_of_split(a, b):
    return torch.cat(torch.split(a - b, [3, 1], dim=1), dim=1)


@pytest.mark.parametrize(
    "fn, shapes",
    [
        # b.t() is [1,4]: a piece one row wide in a [3,4] iteration space.
        pytest.param(cat_with_transposed, [(3, 4), (4, 1)], id="cat_transposed_one_row"),
        # c is [1,4] and also returned: its own store must stay inside its [1,4] buffer.
        pytest.param(cat_with_transposed, [(1, 4), (4, 3)], id="cat_returned_one_row"),
        pytest.param(cat_with_transposed, [(3, 4), (4, 3)], id="cat_transposed_same_shape"),
        pytest.param(cat_of_split, [(2, 4), (4,)], id="split_cat_broadcast_row"),
        pytest.param(cat_of_split, [(2, 4), (2, 1)], id="split_cat_broadcast_column"),
        pytest.param(cat_of_split, [(2, 4), (2, 4)], id="split_cat_same_shape"),
    ],
)
def test_concat_piece_one_wide(fn, shapes, monkeypatch):
    # The transpose of an input stays outside the kernel (the launch reads it strided).
    cm = compile_and_compare(fn, tuple(torch.randn(s) for s in shapes), fused=False)
    assert any(k.kind == "concat" for k in cm.kernels.values()), cm.mlir
    assert_stores_in_bounds(cm, monkeypatch)


def test_concat_exports_a_lower_rank_value(monkeypatch):
    # e = exp(y) is [4], broadcast into a [3,4] piece and returned: stored once, at its own indices.
    def f(x, y):
        e = y.exp()
        return torch.cat([x + e, x], dim=0), e

    cm = compile_and_compare(f, (torch.randn(3, 4), torch.randn(4)))
    assert_stores_in_bounds(cm, monkeypatch)


def assert_stores_in_bounds(cm, monkeypatch) -> None:
    """Run every kernel as a checked launch: a store outside its output raises KernelBoundsError.

    Checked launches (mlirfuse/runtime/checks.py) put guard bytes around each
    output and make the interpreter refuse addresses outside their tensors.
    """
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "1")
    for kernel in cm.kernels.values():
        inputs = [torch.randn(t.shape).to(getattr(torch, t.dtype)) for t in kernel.inputs]
        Launcher(kernel)(*inputs)


# --- bool and integer arithmetic ----------------------------------------------------------------


def bool_pair():
    return torch.tensor([True, False, True, False] * 3), torch.tensor([True, True, False, False] * 3)


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(torch.add, id="add"),  # eager: logical or, never 1 + 1 wrapping to 0
        pytest.param(torch.mul, id="mul"),
        pytest.param(torch.maximum, id="maximum"),
        pytest.param(torch.minimum, id="minimum"),
        pytest.param(lambda a, b: (a + b) & ~a, id="add_then_bitwise"),
        pytest.param(lambda a, b: torch.bitwise_xor(~(a * b), b), id="bitwise_not_xor"),
        pytest.param(lambda a, b: (a + b).float() * 2, id="add_then_float"),
        pytest.param(lambda a, b: (a + b + a).to(torch.int32), id="add_twice_then_int"),
    ],
)
def test_bool_arithmetic_matches_eager(fn):
    cm = compile_and_compare(fn, bool_pair())
    assert cm.stats["launches"] == 1


# --- casts ------------------------------------------------------------------------------------


def values_of(dtype):
    if dtype == torch.bool:
        return torch.tensor([True, False, True, True])
    if dtype == torch.uint8:
        return torch.tensor([0, 1, 200, 255], dtype=dtype)
    if dtype.is_floating_point:
        return torch.tensor([0.1, -3.3, 1e30, 257.0], dtype=dtype)
    big = {torch.int8: 127, torch.int32: 2**31 - 1, torch.int64: 2**53 + 1}[dtype]
    return torch.tensor([-5, 0, 3, big], dtype=dtype)


@pytest.mark.parametrize("to", [torch.bfloat16, torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize(
    "source", [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float64], ids=str
)
def test_cast_into_low_precision_in_a_kernel(source, to):
    if source == torch.float64 and to == torch.float32:
        pytest.skip("covered by the plain casts")
    x = values_of(source)
    compile_and_compare(lambda x: (x.to(to) * 2, x.to(to)), (x,))


@pytest.mark.parametrize("low", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("to", [torch.float32, torch.float64, torch.int32], ids=str)
def test_cast_out_of_low_precision_rounds_first(low, to):
    # A kernel computes f16/bf16 in f32; a cast out of it must see the value rounded to its dtype,
    # as eager's tensor is (fuzz seed 515058: (linear + x).to(float32) gave non-f16 values).
    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(64, generator=g) * 30).to(low), (torch.randn(64, generator=g) * 30).to(low)
    assert not torch.equal((a.float() + b.float()).to(low).float(), a.float() + b.float())  # rounding shows
    compile_and_compare(lambda a, b: ((a + b).to(to),), (a, b), rtol=0, atol=0)


@pytest.mark.parametrize("low", [torch.float16, torch.bfloat16], ids=str)
def test_cat_piece_of_low_precision_rounds_first(low):
    # A f16/bf16 piece of a float32 cat is widened from its rounded values, as eager's tensor is
    # (fuzz seed 880377: cat([v.float(), x - 1, v]) with v = pow(f16, 3) stored v unrounded).
    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(4, 8, generator=g) * 30).to(low), (torch.randn(4, 8, generator=g) * 30).to(low)
    assert not torch.equal((a.float() + b.float()).to(low).float(), a.float() + b.float())  # rounding shows
    compile_and_compare(lambda a, b, c: (torch.cat([a + b, c], 0),), (a, b, torch.randn(2, 8)), rtol=0, atol=0)


def test_bfloat16_to_bool_in_a_kernel():
    # A computed bf16 value made bool and compared with a float, or widened again: the bool once came
    # from a bf16 compare the interpreter cannot cast on (fuzz seed 9200311: x.bool() == 0.5 crashed).
    x = torch.tensor([[0.0, -0.0, 1.5, -2.0], [0.25, 3.0, -0.0, 7.0]], dtype=torch.bfloat16)
    compile_and_compare(lambda x: ((x * 2).bool() == 0.5, (x - 1).bool().float(), (x + 0).bool()), (x,))


def test_relu6_keeps_negative_zero():
    # relu6 is clamp(x, 0, 6): a bound equal to x gives x, so -0.0 stays -0.0 (fuzz seed 880424).
    x = torch.tensor([-0.0, 0.0, -1.0, 3.0, 6.0, 7.0, math.nan, -math.inf])
    actual = compile_and_compare(F.relu6, (x,), rtol=0, atol=0, equal_nan=True)(x)
    assert torch.equal(actual.signbit(), F.relu6(x).signbit())


def test_sign_into_bfloat16():
    # sign's branches are all literals: its value must still be a float, or bf16 rounding reads int bits.
    x = torch.tensor([-2.0, 0.0, 3.0, -0.5], dtype=torch.bfloat16)
    compile_and_compare(torch.sign, (x,))


# --- special values -----------------------------------------------------------------------------

# The specified inputs (special_values.INPUTS) first, then finite ones: small and mid-range values
# (tanh's polynomial and its exp branch), values whose intermediates overflow or underflow.
SPECIAL = [math.inf, -math.inf, math.nan, -0.0, 0.0, 1.0, -1.0, 3.0, -3.0, 0.5, -0.5, 88.0, -88.0, 1e30, -1e30,
           3.4e38, 1e-3, -1e-3, 1e-20, 0.3, -0.54, 0.56]

# Every unary elementwise op fused for floats, as eager spells it, keyed by its special_values.TABLE label.
SWEEP = {
    "neg": torch.neg, "abs": torch.abs, "relu": torch.relu, "exp": torch.exp, "exp2": torch.exp2, "log": torch.log,
    "log2": torch.log2, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "sin": torch.sin, "cos": torch.cos, "erf": torch.erf,
    "floor": torch.floor, "ceil": torch.ceil, "reciprocal": torch.reciprocal, "sigmoid": torch.sigmoid,
    "tanh": torch.tanh, "sign": torch.sign, "silu": F.silu, "gelu": F.gelu,
    "gelu(approximate='tanh')": lambda x: F.gelu(x, approximate="tanh"), "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish, "leaky_relu": F.leaky_relu, "hardtanh": F.hardtanh,
    "clamp(x, -0.5, 0.5)": lambda x: torch.clamp(x, -0.5, 0.5), "clamp_min(x, 0.1)": lambda x: torch.clamp_min(x, 0.1),
    "clamp_max(x, -0.1)": lambda x: torch.clamp_max(x, -0.1), "x ** 2": lambda x: x**2, "x ** 3": lambda x: x**3,
    "x ** 0.5": lambda x: x**0.5, "x ** -1": lambda x: x**-1, "x ** -0.5": lambda x: x**-0.5,
    "x ** -2": lambda x: x**-2, "x + 2.5": lambda x: x + 2.5, "x * 0.0": lambda x: x * 0.0,
    "x + (-0.0)": lambda x: x + (-0.0), "2 - x": lambda x: 2 - x, "x / 3": lambda x: x / 3,
}


def _same_class(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per element: both NaN, both the same infinity, both zeros of one sign, or both finite and nonzero.

    A subnormal counts as a zero of its sign (the interpreter's bf16 rounding flushes them, as a GPU's
    flush-to-zero mode does).
    """
    both_nan = a.isnan() & b.isnan()
    tiny = torch.finfo(a.dtype).tiny
    zero_a, zero_b = a.abs() < tiny, b.abs() < tiny
    finite = a.isfinite() & b.isfinite() & ~zero_a & ~zero_b
    return both_nan | (a.isinf() & (a == b)) | (zero_a & zero_b & (a.signbit() == b.signbit())) | finite


def test_special_values_sweep_covers_the_table():
    assert list(SWEEP) == list(special_values.TABLE)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=str)
def test_special_values_match_spec_or_eager(dtype):
    """Each element is what special_values.TABLE specifies (at ±inf, NaN, ±0) or the float64 value rounded
    to the dtype (at finite inputs), or else eager's on this machine; nothing else passes.

    Eager's own answer at these points depends on the CPU and the loop it takes (special_values.py), so
    no single machine's eager is the reference; float64 eager stands for the exact value.
    """
    names = list(SWEEP)

    def every_op(x):
        return tuple(SWEEP[n](x) for n in names)

    x = torch.tensor(SPECIAL).to(dtype)
    cm = mlirfuse.compile(Lambda(every_op), (x,))
    assert cm.stats["launches"] == 1
    n = len(special_values.INPUTS)
    dtype_name = str(dtype).removeprefix("torch.")
    for name, actual, eager, exact in zip(names, cm(x), every_op(x), every_op(x.double())):
        spec = exact.to(dtype)
        spec[:n] = torch.tensor([special_values.value(v) for v in special_values.row(name, dtype_name)])
        where = f"{name}({x.tolist()}): got {actual.tolist()}, eager {eager.tolist()}, specified {spec.tolist()}"
        assert actual.dtype == eager.dtype, where
        # An element takes eager's value where it is of eager's class, else the specified one.
        allowed = torch.where(_same_class(actual, eager), eager, spec)
        assert _same_class(actual, allowed).all(), where
        torch.testing.assert_close(actual, allowed, equal_nan=True, msg=where)


def test_special_values_doc_is_current():
    doc = Path(__file__).parents[1] / "docs" / "special-values.md"
    assert doc.read_text() == special_values.markdown(), "regenerate: python -m mlirfuse.ops.special_values > " + str(doc)


def test_cat_of_empty_pieces_read_in_a_kernel():
    # Every piece empty along the cat dim (triu_indices(0, 0) decomposed): the lowering found no piece to read.
    x, y = torch.randn(2, 0), torch.randn(2, 0)
    cm = compile_and_compare(lambda x, y: torch.cat([x, y], 1) * 2, (x, y))
    assert cm(x, y).shape == (2, 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_acosh_below_one_is_nan_far_from_it_too(dtype):
    """acosh(-1.2e7) was 0 and acosh(-1e20) inf (the log1p form cancels, the large-x branch took -1e20): eager gives NaN (fuzz seed 2210162)."""
    x = torch.tensor([-1.2326e7, -1e20, -5.0, -1.0, 0.5, 1.0, 1.5, 3e38, float("-inf"), float("inf"), float("nan")]).to(dtype)
    compile_and_compare(torch.acosh, (x,), equal_nan=True)


@pytest.mark.parametrize("threshold, value", [(0.5, -1.0), (-0.5, 2.7), (-1.5, 3)])
def test_integer_threshold_truncates_its_numbers(threshold, value):
    # Fuzz seed 2760595 (--focus unary,...,mixed): F.threshold of an int64 tensor emitted the float literals, so the
    # result was float inside the kernel; summed and shifted it failed ("invalid operands of type floatN"). Eager
    # converts both numbers to the dtype first, truncating: threshold -0.5 is x <= 0, value 2.7 is 2.
    x = torch.arange(-5, 6).repeat(4, 1).T.contiguous()
    shift = torch.randint(0, 4, (11, 1))

    def fn(x, shift):
        v = F.threshold(x, threshold, value)
        s = v.sum(1, keepdim=True)
        return v, s, s >> shift

    compile_and_compare(fn, (x, shift))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("eps", [0.1, 0.07])
def test_logit_clamps_to_bounds_of_its_dtype(dtype, eps):
    # Fuzz seed 2781551: eager clamps x to [eps, 1 - eps] in the tensor's dtype, so bf16 logit(1.0, eps=0.1) is
    # logit(0.8984375) = 2.1875; the kernel clamped to 0.9 and gave 2.203125 (within bf16's tolerance, but a
    # different value at every clamped element, in both precisions).
    x = torch.tensor([0.0, 1.0, 0.05, 0.97, 0.5, 0.3] * 8, dtype=dtype)
    cm = mlirfuse.compile(Lambda(lambda x: torch.logit(x, eps=eps)), (x,))
    assert torch.equal(cm(x), torch.logit(x, eps=eps))


@pytest.mark.parametrize("value", [-1.5, 2.7])
def test_integer_masked_fill_truncates_its_number(value):
    # Fuzz seed 2790892: masked_fill of an int32 tensor with -1.5 emitted the float literal, so the kernel's value
    # was float; floor_divide of it failed in the interpreter ("unexpected type fp32"). Eager fills int(-1.5) = -1.
    x = torch.arange(-12, 13, dtype=torch.int32).reshape(5, 5)
    y = torch.randint(1, 6, (5, 5), dtype=torch.int32)
    compile_and_compare(lambda x, y: (torch.floor_divide(x.masked_fill(x < 0, value), y), x.masked_fill(x < 0, value)), (x, y))


@pytest.mark.parametrize("value", [-1.5, 0.0])
def test_bool_masked_fill_takes_the_truth_of_its_number(value):
    # Fuzz seed 2860034 (a run on an H200; the interpreter fails the same way): masked_fill of a bool tensor with -1.5 made the kernel's
    # value float, and logical_and of it with a bool failed to compile ("invalid operands of type float32").
    x = torch.tensor([[True, False, True, False, False]])
    y = torch.tensor([True, True, False, True, False])
    compile_and_compare(lambda x, y: (torch.logical_and(x.masked_fill(~y, value), y), x.masked_fill(y, value)), (x, y))
