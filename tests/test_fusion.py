"""Graph shapes the fuser must handle: joins, exported results, refused merges, mutation.

Each test compiles one small function, compares with eager, and checks the
number of launches the fusion rules promise.
"""

from __future__ import annotations

import pytest
import torch

import mlirfuse
from helpers import Lambda, compile_and_compare, unfused_ops


def test_consumer_also_reads_a_function_argument():
    # The chain's last op reads `x` directly as well as the chain.
    x = torch.randn(4, 16)
    cm = compile_and_compare(lambda x: x * torch.sigmoid(x), (x,))
    assert cm.stats["launches"] == 1


def test_two_chains_join():
    # Both operands of the joining op come from fused chains: after the first
    # merge, the consumer group reads a function argument directly.
    x, y = torch.randn(4, 16), torch.randn(4, 16)
    cm = compile_and_compare(lambda x, y: torch.logical_and(x > 0, y < 0), (x, y))
    assert cm.stats["launches"] == 1


def test_producer_used_outside_is_exported():
    def f(x):
        a = torch.relu(x)
        return a, torch.sigmoid(a) * 2

    cm = compile_and_compare(f, (torch.randn(4, 16),))
    assert cm.stats["launches"] == 1


def test_merge_refused_for_a_different_iteration_space():
    # `a` is [16] and also returned; the join runs over [4, 16]. One kernel
    # writes all its results over one space, so `a` stays its own kernel.
    def f(v, m):
        a = torch.relu(v)
        return a, a + torch.tanh(m)

    cm = compile_and_compare(f, (torch.randn(16), torch.randn(4, 16)))
    assert cm.stats["launches"] == 2


def test_merge_refused_when_it_would_make_a_cycle():
    # relu feeds the add both directly and through the matmul.
    def f(x, w):
        a = torch.relu(x)
        return torch.sigmoid(a + a @ w)

    # With ATen matmuls (matmul="aten"): the matmul between them stays an extern call.
    inputs = (torch.randn(8, 8), torch.randn(8, 8))
    cm = mlirfuse.compile(Lambda(f), inputs, matmul="aten")
    torch.testing.assert_close(cm(*inputs), f(*inputs))
    assert cm.stats["launches"] == 2
    assert [op.split(".")[2] for op in unfused_ops(cm)] in (["matmul"], ["mm"])
    # As a Triton GEMM, the add and sigmoid are its epilogue (relu is read elsewhere: no prologue).
    cm = compile_and_compare(f, inputs, rtol=1e-4, atol=1e-4)
    assert cm.stats["launches"] == 2


def test_chain_through_a_view_stays_correct():
    cm = compile_and_compare(lambda x: torch.relu(x.t()) + 1, (torch.randn(4, 16),), fused=False)
    assert cm.stats["launches"] == 1


@pytest.mark.parametrize("shape", [(37,), (2, 3, 4, 5), (3, 5000)], ids=["rank1", "rank4", "several_blocks"])
def test_shapes(shape):
    compile_and_compare(lambda x: torch.sigmoid(x) * 2 + 1, (torch.randn(shape),))


def test_both_operands_broadcast():
    a, b = torch.randn(4, 1, 8), torch.randn(1, 5, 1)
    cm = compile_and_compare(lambda a, b: torch.tanh(a * b) + 1, (a, b))
    assert cm(a, b).shape == (4, 5, 8)


def test_tensor_scalar_input():
    x, n = torch.randn(4, 16), torch.tensor(3)
    compile_and_compare(lambda x, n: torch.relu(x * n) + 1, (x, n))


def test_input_mutated_in_forward():
    def f(x):
        x.mul_(2)
        return x + 1

    example = torch.randn(4, 16)
    cm = mlirfuse.compile(Lambda(f), (example.clone(),))
    ours, theirs = example.clone(), example.clone()
    torch.testing.assert_close(cm(ours), f(theirs))
    torch.testing.assert_close(ours, theirs)
