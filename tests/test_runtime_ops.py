"""Ops the runtime must run as they come from torch-mlir (issues 9 and 13)."""

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from helpers import Lambda


@pytest.mark.parametrize("divisor", [3, -4])
def test_integer_trunc_division_by_a_python_int(divisor):
    """`div(x, 3, rounding_mode='trunc')` imports as div.Tensor_mode of a `prim.NumToTensor.Scalar`."""
    x = torch.randint(-20, 20, (4, 5))
    fn = lambda a: torch.div(a, divisor, rounding_mode="trunc") + a  # noqa: E731
    got = mlirfuse.compile(Lambda(fn), (x,))(x)
    assert got.dtype == torch.int64
    assert torch.equal(got, fn(x))


def test_extern_call_with_a_list_operand():
    """`x.t().repeat(2, i.numel())`: the extern group around aten.repeat takes its sizes as a list.

    (`x.t()[i]` was the case here; index.Tensor is a kernel now, tests/test_indexing.py.)
    """
    x, i = torch.randn(6, 5), torch.tensor([0, 2, 2, 4])
    fn = lambda a, b: a.t().repeat(2, b.numel()) + b.sum()  # noqa: E731
    cm = mlirfuse.compile(Lambda(fn), (x, i))
    assert cm.stats["operand_views"] == 1
    assert torch.equal(cm(x, i), fn(x, i))


SDPA_CASES = {
    "causal": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    "gqa": lambda q, k, v, m: F.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True),
    "bool_mask": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3),
    "float_mask": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m * -1e4),
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_stays_one_aten_call(case):
    """The frontend exports with no decomposition table: SDPA reaches the runtime as one ATen op."""
    fn = SDPA_CASES[case]
    q, k, v = torch.randn(2, 4, 8, 8), torch.randn(2, 4, 8, 8), torch.randn(2, 4, 8, 8)
    m = torch.rand(2, 1, 8, 8) > 0.3
    if case == "float_mask":
        m = m.float()
    cm = mlirfuse.compile(Lambda(fn), (q, k, v, m))
    assert cm.mlir.count("torch.aten.scaled_dot_product_attention") == 1
    torch.testing.assert_close(cm(q, k, v, m), fn(q, k, v, m))
