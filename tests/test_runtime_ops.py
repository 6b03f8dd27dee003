"""Ops the runtime must run as they come from torch-mlir (issues 9 and 13)."""

import pytest
import torch

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
    """`x.t()[i]`: the extern group around aten.index.Tensor takes its indices as a list."""
    x, i = torch.randn(6, 5), torch.tensor([0, 2, 2, 4])
    fn = lambda a, b: a.t()[b]  # noqa: E731
    cm = mlirfuse.compile(Lambda(fn), (x, i))
    assert cm.stats["operand_views"] == 1
    assert torch.equal(cm(x, i), fn(x, i))
