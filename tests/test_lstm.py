"""The LSTM cell matching eager: per time step one fused kernel plus the two matmuls (matmul="aten"), or one grouped GEMM kernel with the cell as its epilogue (Triton GEMMs)."""

from __future__ import annotations

import pytest
import torch

import mlirfuse
from helpers import LSTM, Lambda


def test_lstm_step_is_one_kernel_plus_two_matmuls():
    model = LSTM()
    inputs = (torch.randn(3, 2, 16), torch.randn(2, 16), torch.randn(2, 16))
    # matmul="aten": the chunk motion is what is checked; the gates read slices
    # of the matmul results, which a GEMM epilogue does not take (one GEMM
    # kernel per matmul plus this kernel with the default Triton GEMMs).
    cm = mlirfuse.compile(model, inputs, matmul="aten")
    expected = model(*inputs)
    for got, want in zip(cm(*inputs), expected):
        torch.testing.assert_close(got, want)
    assert cm.stats["launches"] == 3, cm.stats  # one per step
    computing = [s.name for s in cm.program.steps if s.kind == "aten" and not s.view]
    assert computing == ["torch.aten.matmul"] * 6, computing  # two per step
    # The chunks are read through slices inside the kernel, never copied.
    source = next(iter(cm.kernels.values())).source
    assert "load %arg1.slice(1, 0, 16, 1)" in source


def test_unbind_and_split_with_sizes_fuse_like_chunk():
    # unbind -> selects, split_with_sizes -> slices, moved above the bias add:
    # each is one kernel after the matmul (the uneven split via a concat exit).
    def unbound(a, w):
        gates = (a @ w + 1).unbind(1)
        return torch.sigmoid(gates[0]) * torch.tanh(gates[2])

    def uneven(a, w):
        i, g = (a @ w + 1).split([3, 5], 1)
        return torch.cat([torch.sigmoid(i), torch.tanh(g)], 1)

    for fn, w in ((unbound, torch.randn(8, 3)), (uneven, torch.randn(8, 8))):
        inputs = (torch.randn(4, 8), w)
        cm = mlirfuse.compile(Lambda(fn), inputs, matmul="aten")
        torch.testing.assert_close(cm(*inputs), fn(*inputs))
        assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 1, (fn.__name__, cm.stats)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_lstm_step_is_one_launch_with_triton_gemms(dtype):
    # Each gate's columns are a GEMM of their own over a slice of W_ih / W_hh (fusion-chunk-motion),
    # the eight GEMMs of a step one grouped kernel (a K loop per A: x_t and h) whose epilogue is the cell.
    model = LSTM(hidden=20, inputs=24).to(dtype)  # no block divides 20 or 24
    inputs = (torch.randn(3, 2, 24).to(dtype), torch.randn(2, 20).to(dtype), torch.randn(2, 20).to(dtype))
    cm = mlirfuse.compile(model, inputs)
    tol = {} if dtype == torch.float32 else dict(rtol=1.6e-2, atol=1e-2)
    with torch.no_grad():
        expected = model(*inputs)
    for got, want in zip(cm(*inputs), expected):
        torch.testing.assert_close(got, want, **tol)
    # One launch per step; the steps, differing only in which x_t they read, share one kernel, x_t taken as a
    # view before each launch (fusion-outline's hoist-views): nothing but those views left to ATen.
    assert cm.stats["launches"] == 3 and cm.stats["unfused_ops"] == cm.stats["unfused_views"], cm.stats
    assert cm.stats["kernels"] == 1 and cm.stats["unfused_views"] == 3, cm.stats
    assert [k.kind for k in cm.kernels.values()] == ["matmul"] * len(cm.kernels)
    assert "8 GEMMs over 2 A operands" in next(iter(cm.kernels.values())).source
