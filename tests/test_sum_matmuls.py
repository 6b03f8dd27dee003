"""fusion-sum-matmuls end to end (issue 22): a sum of GEMMs is one GEMM over K-split cats; results match eager.

An unrolled LSTM's weight gradients are sums over the steps of `g_t.t() @ x_t`:
one GEMM each, no partial product stored. Numerics against eager PyTorch
(TRITON_INTERPRET=1): every gradient of a trained LSTM, and sums of products
in each GEMM dtype.
"""

from __future__ import annotations

import copy

import pytest
import torch

from mlirfuse.backend import backend
from helpers import LSTM, compile_and_compare


@pytest.fixture(autouse=True)
def _fresh_dynamo(fresh_dynamo):
    backend.clear()


def _sum_of_products(n: int):
    def fn(*args):
        total = None
        for g, x in zip(args[:n], args[n:]):
            total = g.t() @ x if total is None else total + g.t() @ x
        return total

    return fn


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_sum_of_products_is_one_gemm(dtype):
    torch.manual_seed(0)
    inputs = [torch.randn(3, 40, dtype=dtype) for _ in range(4)] + [torch.randn(3, 24, dtype=dtype) for _ in range(4)]
    tolerances = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-1)
    cm = compile_and_compare(_sum_of_products(4), tuple(inputs), **tolerances)
    assert cm.stats["launches"] == 1, cm.stats
    # The [40, 24] result written once; the 4 + 4 pieces read once, nothing else.
    itemsize = torch.finfo(dtype).bits // 8
    assert cm.stats["bytes"] == (40 * 24 + 4 * 3 * (40 + 24)) * itemsize, cm.stats


def test_more_products_than_max_terms_are_added_gemms():
    # 18 > max-terms (16): a GEMM over 16 steps and one over 2, summed by their grouped kernel's epilogue.
    torch.manual_seed(0)
    inputs = [torch.randn(2, 24) for _ in range(18)] + [torch.randn(2, 8) for _ in range(18)]
    cm = compile_and_compare(_sum_of_products(18), tuple(inputs), rtol=1e-4, atol=1e-4)
    assert cm.stats["launches"] == 1, cm.stats


def _weight_shaped_results(role: str, shapes) -> int:
    """How many values of the weights' shapes the `role` graph's launches produce."""
    types = [f"!torch.vtensor<[{','.join(map(str, s))}],f32>" for s in shapes]
    lines = [line for r in backend.graphs if r.role == role for line in r.graph.mlir.splitlines()
             if '"fusion.launch"' in line]
    return sum(line.split(" -> ", 1)[1].count(t) for line in lines for t in types)


@pytest.mark.parametrize("inputs", [16, 24], ids=["square", "wider-input"])
def test_lstm_gradients_match_eager_with_one_gemm_per_weight(inputs):
    torch.manual_seed(0)
    model = LSTM(hidden=16, steps=5, inputs=inputs)
    ours = copy.deepcopy(model)
    compiled = torch.compile(ours, backend="mlirfuse")
    xs, h, c = torch.randn(5, 2, inputs), torch.randn(2, 16), torch.randn(2, 16)
    grads = []
    for fn in (model, compiled):
        leaves = [t.clone().requires_grad_(True) for t in (xs, h, c)]
        out_h, out_c = fn(*leaves)
        (out_h.square().sum() + out_c.sum()).backward()
        grads.append([t.grad for t in leaves])
    for name, want, got in zip(("xs", "h", "c"), *grads):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5, msg=lambda m, n=name: f"grad {n}: {m}")
    for (name, p), q in zip(model.named_parameters(), ours.parameters()):
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-5, msg=lambda m, n=name: f"grad {n}: {m}")
    # Each weight gradient is written once, by one GEMM over the 5 steps: no per-step partial product.
    assert backend.stats["backward"]["eager_graphs"] == 0
    assert _weight_shaped_results("backward", {(64, inputs), (64, 16)}) == 2
