"""Matmuls as Triton GEMMs (fusion-fuse-matmul, lowering/matmul.py) against eager.

Sizes are not multiples of any block (17 x 33 @ 33 x 9), so every mask is
exercised; f32 multiplies in IEEE f32 (no TF32), f16/bf16 accumulate in
f32 and round once, as eager does.
"""

from __future__ import annotations

import pytest
import torch

import mlirfuse
from helpers import Lambda, unfused_ops

TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2),
}


def _compare(fn, inputs, dtype=torch.float32, **kwargs):
    model = Lambda(fn)
    expected = model(*inputs)
    cm = mlirfuse.compile(model, inputs, **kwargs)
    torch.testing.assert_close(cm(*inputs), expected, **TOL[dtype])
    return cm


def _rand(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=["f32", "f16", "bf16"])
def test_mm_odd_sizes_with_epilogue(dtype):
    a, b, bias = _rand(17, 33, dtype=dtype), _rand(33, 9, dtype=dtype), _rand(9, dtype=dtype)
    cm = _compare(lambda a, b, c: torch.relu(a @ b + c), (a, b, bias), dtype)
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, cm.stats
    assert [k.kind for k in cm.kernels.values()] == ["matmul"]


def test_batched_and_broadcast_matmuls():
    a3, b3, a2 = _rand(3, 5, 7), _rand(3, 7, 6), _rand(5, 7)
    cm = _compare(lambda a3, b3, a2: (torch.bmm(a3, b3), a2 @ b3, a3 @ b3[0], torch.matmul(a3.unsqueeze(0), b3)), (a3, b3, a2))
    assert cm.stats["launches"] == 4 and cm.stats["unfused_ops"] == 0, cm.stats


def test_addmm_baddbmm_alpha_beta_and_transposed_operands():
    b, m1, m2 = _rand(9), _rand(17, 8), _rand(9, 8)
    bb, x, y = _rand(3, 5, 1), _rand(3, 5, 7), _rand(3, 6, 7)
    cm = _compare(
        lambda b, m1, m2, bb, x, y: (
            torch.addmm(b, m1, m2.t(), beta=0.5, alpha=2.0),
            torch.baddbmm(bb, x, y.transpose(1, 2), beta=2.0, alpha=0.5),
        ),
        (b, m1, m2, bb, x, y),
    )
    assert cm.stats["launches"] == 2 and cm.stats["unfused_ops"] == 0, cm.stats


def test_linear_3d_with_bias_kept_and_prologue_cast():
    x, w, b = _rand(2, 5, 8), _rand(12, 8, dtype=torch.float16), _rand(12, dtype=torch.float16)
    # The cast of x is recomputed on each A tile; the linear keeps its bias (a view reads the result).
    cm = _compare(lambda x, w, b: torch.nn.functional.linear(x.half(), w, b).view(10, 12), (x, w, b), torch.float16)
    assert cm.stats["launches"] == 1, cm.stats  # the cast is no launch of its own


def test_epilogue_with_two_outputs_and_a_residual():
    def f(x, w, r):
        pre = x @ w * 0.5
        return pre, torch.nn.functional.gelu(pre) + r

    cm = _compare(f, (_rand(17, 33), _rand(33, 9), _rand(17, 9)))
    assert cm.stats["launches"] == 1, cm.stats


class MLP(torch.nn.Module):
    def __init__(self, dim=16, hidden=24):
        super().__init__()
        self.fc1 = torch.nn.Linear(dim, hidden)
        self.fc2 = torch.nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def test_mlp_is_one_launch():
    """Its hidden (24) fits on chip: one matmul-chain kernel (tests/test_matmul_chain.py)."""
    model, x = MLP().eval(), _rand(2, 5, 16)
    cm = mlirfuse.compile(model, (x,))
    torch.testing.assert_close(cm(x), model(x), **TOL[torch.float32])
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, (cm.stats, unfused_ops(cm))
    # A weight updated in place is seen by the next call (weights are bound, not copied).
    with torch.no_grad():
        model.fc2.weight.mul_(2)
    torch.testing.assert_close(cm(x), model(x), **TOL[torch.float32])


def test_matmul_aten_keeps_extern_calls():
    model, x = MLP().eval(), _rand(2, 5, 16)
    cm = mlirfuse.compile(model, (x,), matmul="aten")
    torch.testing.assert_close(cm(x), model(x))
    assert cm.stats["launches"] == 2 and cm.stats["unfused_ops"] == 2, cm.stats
    with pytest.raises(ValueError, match="matmul must be one of 'triton', 'aten'"):
        mlirfuse.compile(model, (x,), matmul="cublas")


def test_explain_names_why_a_matmul_stayed_alone():
    cm = mlirfuse.compile(Lambda(lambda a, b: torch.softmax(a @ b, -1)), (_rand(4, 8), _rand(8, 16)), explain=True)
    reasons = [r for rs in cm.explain().values() for r in rs]
    assert any("consumer is a persistent-reduction group" in r or "consumer is a reduction group" in r for r in reasons), reasons


def test_grouped_gemms_share_their_input():
    F = torch.nn.functional

    def swiglu(x, wg, wu, wd):
        return F.linear(F.silu(F.linear(x, wg)) * F.linear(x, wu), wd)

    # gate and up: one grouped GEMM with silu(g) * u as its epilogue; down: a second GEMM.
    inputs = (_rand(2, 5, 16), _rand(24, 16), _rand(24, 16), _rand(16, 24))
    cm = _compare(swiglu, inputs)
    assert cm.stats["launches"] == 2 and cm.stats["unfused_ops"] == 0, cm.stats

    def qkv(x, wq, wk, wv, b):
        return F.linear(x, wq, b), F.linear(x, wk) * 0.5, F.linear(x, wv)

    cm = _compare(qkv, (_rand(3, 16), _rand(8, 16), _rand(8, 16), _rand(8, 16), _rand(8)))
    assert cm.stats["launches"] == 1, cm.stats
    assert "3 GEMMs share each A tile" in next(iter(cm.kernels.values())).source


@pytest.mark.parametrize("prologue", [torch.log, torch.reciprocal], ids=["log", "reciprocal"])
def test_prologue_that_maps_zero_to_inf_leaves_padded_k_alone(prologue):
    # K = 5 is padded to the block: the masked lanes load 0, log(0) = -inf and -inf * 0 = NaN
    # unless the tile is masked after the prologue (a wrong answer found in review).
    a, b = torch.rand(4, 5) + 0.5, torch.randn(5, 3)
    cm = _compare(lambda a, b: prologue(a) @ b, (a, b))
    assert cm.stats["launches"] == 1 and [k.kind for k in cm.kernels.values()] == ["matmul"], cm.stats


def test_epilogue_with_a_created_mask_stays_a_kernel_of_its_own():
    # masked_fill(scores, ones(...).triu(1), -inf): the mask is created in the kernel (an indexing-family
    # op the GEMM template does not emit); the epilogue stays out instead of failing to lower (fuzz seed 70404949).
    q, k = torch.randn(2, 1, 2), torch.randn(2, 5, 2)
    model = Lambda(lambda q, k: (q @ k.transpose(-2, -1) * 0.5).masked_fill(torch.ones(1, 5, dtype=torch.bool).triu(1), float("-inf")))
    cm = mlirfuse.compile(model, (q, k))
    torch.testing.assert_close(cm(q, k), model(q, k))
    assert "matmul" in [kernel.kind for kernel in cm.kernels.values()]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=["f32", "f16", "bf16"])
def test_summed_gemms_over_different_inputs_are_one_launch(dtype):
    # x @ w1 + h @ w2.t(): K = 33 and 20, one K loop each, two accumulators, the add and tanh as epilogue.
    x, w1, h, w2 = _rand(17, 33, dtype=dtype), _rand(33, 9, dtype=dtype), _rand(17, 20, dtype=dtype), _rand(9, 20, dtype=dtype)
    cm = _compare(lambda x, w1, h, w2: torch.tanh(x @ w1 + h @ w2.t()), (x, w1, h, w2), dtype)
    assert cm.stats["launches"] == 1 and [k.kind for k in cm.kernels.values()] == ["matmul"], cm.stats
    assert "2 GEMMs over 2 A operands (one K loop each: K = 33, K1 = 20)" in next(iter(cm.kernels.values())).source


def test_column_slices_of_a_gemm_are_its_epilogue():
    # Column slices (one with a step) of a linear become GEMMs over slices of the weight and bias,
    # grouped into one kernel whose epilogue is the math on the pieces.
    F = torch.nn.functional

    def f(x, w, b):
        y = F.linear(x, w, b)
        return torch.sigmoid(y[:, :5]) * y[:, 5:10] + y[:, 11:21:2]

    cm = _compare(f, (_rand(17, 33), _rand(21, 33), _rand(21)))
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, cm.stats
    # Also used whole: the product stays one GEMM and the slices are read from its result.
    cm = _compare(lambda x, w: (x @ w, torch.relu((x @ w)[:, 2:7])), (_rand(17, 33), _rand(33, 9)))
    assert cm.stats["unfused_ops"] == 0, cm.stats
