"""Kernels shared modulo constants (fusion-outline's lift-constants, issue 20 item 3).

Groups that differ only in float constants the lowering prints as plain
operands (two layer norms' eps, scaled branches) share one kernel; each
launch passes its own values. Numerics are eager's, and bit for bit what
the unshared kernels computed, in every dtype and precision mode.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.tools.main import fusion_report
from helpers import Lambda


class TwoNorms(nn.Module):
    """Two layer norms differing in eps, each scaled, shifted and thresholded by its own constants."""

    def __init__(self):
        super().__init__()
        self.a = nn.LayerNorm(32, eps=1e-5)
        self.b = nn.LayerNorm(32, eps=1e-2)

    def forward(self, x, y):
        return (
            self.a(x) * 0.5 + 0.1, (x > 0.3), x.clamp(-0.5, 0.5) - 0.2,
            self.b(y) * 0.3 + 0.7, (y > 0.15), y.clamp(-0.3, 0.7) - 0.1,
        )


def _inputs(dtype):
    torch.manual_seed(0)
    x = (torch.randn(8, 32) * 0.2 + 0.3).to(dtype)
    y = (torch.randn(8, 32) * 0.2 + 0.15).to(dtype)
    # The thresholds themselves: 0.3 and 0.15 round up in f16 and bf16, so eager's x > 0.3 (the scalar
    # rounded to x's dtype) is False there where comparing with 0.3 itself would say True.
    x[0, 0], y[0, 0] = 0.3, 0.15
    return x, y


def test_layer_norms_of_different_eps_share_one_kernel():
    model = TwoNorms().eval()
    with torch.no_grad():
        model.a.weight.uniform_(0.5, 1.5)
        model.b.bias.uniform_(-1, 1)
    x, y = _inputs(torch.float32)
    cm = mlirfuse.compile(model, (x, y))
    assert cm.stats["kernels"] == 1 and cm.stats["launches"] == 2 and cm.stats["constant_merges"] == 1
    assert "fusion.scalar = 0" in cm.mlir and "scalars = array<f64:" in cm.mlir
    assert "distinct kernels   : 1 (1 fewer by taking constants as arguments)" in fusion_report(cm)
    for got, want in zip(cm(x, y), model(x, y)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("precision", ["fast", "eager"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_shared_kernel_computes_what_the_unshared_ones_did(dtype, precision):
    # A lifted constant is passed rounded as its literal was: to f16/bf16 for a comparison, and for add,
    # sub and rsub under precision="eager".
    model = TwoNorms().eval().to(dtype)
    x, y = _inputs(dtype)
    shared = mlirfuse.compile(model, (x, y), options={"precision": precision})
    apart = mlirfuse.compile(model, (x, y), options={"precision": precision, "lift-constants": False})
    assert (shared.stats["kernels"], apart.stats["kernels"]) == (1, 2)
    assert apart.stats["constant_merges"] == 0 and "fusion.scalar" not in apart.mlir
    for got, want, reference in zip(shared(x, y), apart(x, y), model(x, y)):
        assert torch.equal(got, want)
        if got.dtype == torch.bool:
            assert torch.equal(got, reference)


def test_scaled_branches_keep_their_own_values():
    # The same chain on three inputs with other constants: one kernel, three launches, three results.
    def branches(*xs):
        return tuple(torch.sigmoid(x * s) - b for x, (s, b) in zip(xs, ((0.5, 0.25), (2.0, 0.125), (-3.0, 1.5))))

    xs = tuple(torch.randn(64) for _ in range(3))
    cm = mlirfuse.compile(Lambda(branches), xs)
    assert (cm.stats["kernels"], cm.stats["launches"], cm.stats["constant_merges"]) == (1, 3, 2)
    for got, want in zip(cm(*xs), branches(*xs)):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


def test_formula_constants_are_not_shared():
    # pow's exponent picks x * x or x * x * x: two kernels however the multipliers compare.
    def powers(x, y):
        return torch.pow(x, 2) * 0.5, torch.pow(y, 3) * 0.25

    x, y = torch.randn(64), torch.randn(64)
    cm = mlirfuse.compile(Lambda(powers), (x, y))
    assert cm.stats["kernels"] == 2 and cm.stats["constant_merges"] == 0
    for got, want in zip(cm(x, y), powers(x, y)):
        torch.testing.assert_close(got, want)



@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_eager_precision_rounds_each_launchs_scalar_as_eager_does(dtype):
    # ATen converts add's Python number to an f16/bf16 result's dtype first (bf16 + 0.1 adds 0.10009765625):
    # under precision="eager" each launch's value is rounded so, and the shared kernel equals eager bit for bit.
    def shifted(x, y):
        return x + 0.1, y + 0.3

    torch.manual_seed(0)
    x, y = torch.randn(256).to(dtype), torch.randn(256).to(dtype)
    cm = mlirfuse.compile(Lambda(shifted), (x, y), options={"precision": "eager"})
    assert cm.stats["kernels"] == 1 and cm.stats["constant_merges"] == 1
    for got, want in zip(cm(x, y), shifted(x, y)):
        assert torch.equal(got, want)
