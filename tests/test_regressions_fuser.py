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


def test_dead_reduction_next_to_live_code():
    """A dead layer_norm merged (horizontally) with live code on the same input left a reduction kernel without a reduction."""

    def f(x):
        _ = torch.nn.functional.layer_norm(x, (4,)).to(torch.float16)  # export keeps the layer_norm, drops the cast
        _ = x.sum(-1).to(torch.float16)
        return x + 1

    _check(f, torch.randn(4, 4))


def test_dead_softmax_next_to_live_pointwise():
    def f(x):
        _ = x.softmax(-1).to(torch.float16)
        return x.exp()

    _check(f, torch.randn(4, 4))


def test_dead_cat_next_to_live_code():
    """A dead cat merged with live code on the same input left a concat kernel without a cat."""

    def f(x):
        e = x.exp()
        _ = torch.cat([e, x + 1]).to(torch.float16)
        return e, x * 2

    _check(f, torch.randn(4, 4))


def test_dead_code_beside_live_code_of_other_shapes():
    """Only the dead softmax (cat) made one group of results of different shapes legal."""

    def f(x, y, a, b):
        _ = (x + y).softmax(-1).to(torch.float16)
        _ = torch.cat([a.exp(), b.exp()]).to(torch.float16)
        return y * 2, x.exp(), a * 2, b + 1

    _check(f, torch.randn(4, 4), torch.randn(4, 1), torch.randn(2, 4), torch.randn(3, 4))


def test_horizontal_fusion_after_a_merge_reordered_the_pair():
    """Merging softmax and exp (siblings on x) moved where(...) past u * 2; the (where, u * 2) pair, merged in its old order, broke dominance."""

    def f(x, c, u):
        d = torch.where(c, torch.softmax(x, dim=-2).unsqueeze(0), u)
        return d, u * 2, x.exp()

    _check(f, torch.randn(4, 4), torch.randn(2, 4, 4) > 0, torch.randn(2, 4, 4))


def test_horizontal_fusion_after_a_merge_reordered_the_pair_pointwise():
    def f(x, u):
        return x.sin().unsqueeze(0) + u, u * 2, x.exp()

    _check(f, torch.randn(4, 4), torch.randn(2, 4, 4))
