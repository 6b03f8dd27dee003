"""Regressions from issue 9's fuser, decompose and extern classes: compiled equals eager, no crash.

Each test is the smallest model of its class that failed before its fix.
"""

import pytest
import torch

import mlirfuse
from helpers import Lambda


def _check(fn, *inputs):
    cm = mlirfuse.compile(Lambda(fn).eval(), inputs)
    torch.testing.assert_close(cm(*inputs), fn(*inputs), equal_nan=True)
    return cm


def test_extern_view_feeding_two_operands():
    """One view read twice by an unfused op was erased twice (use-after-free, segfault)."""

    def f(x):
        v = x.t()
        return torch.atan2(v, v) + torch.matmul(v, v)

    _check(f, torch.randn(4, 4))



@pytest.mark.parametrize("dtype", [torch.bool, torch.int32, torch.uint8])
@pytest.mark.parametrize("reduce", [torch.max, torch.min])
def test_max_dim_of_non_float(reduce, dtype):
    """max.dim on bool was decomposed into amax + argmax, and ATen has no argmax on bool."""

    def f(x):
        values, indices = reduce(x, dim=1)
        return values, indices, reduce(x, dim=0, keepdim=True)

    _check(f, torch.randint(0, 2, (4, 5)).to(dtype))
