"""Kernels shared modulo view indices (fusion-outline's hoist-views, issue 20 item 3).

Groups that differ only in which piece of an operand they read — the steps
of an unrolled RNN reading x[t], chunks x[:, 8i:8i+8] of a wider input —
share one kernel: the view moves to just before each launch and the kernel
reads the piece as its argument. Checked against eager, with pieces that are
rows (contiguous) and column blocks (strided, a storage offset), through a
GEMM template and a pointwise kernel, and with the option off.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import mlirfuse


class RowSteps(nn.Module):
    """h <- tanh(x[t] @ W + h @ U + b) for each t: one GEMM group per step, each selecting its own row."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.w, self.u = nn.Linear(d, d), nn.Linear(d, d, bias=False)

    def forward(self, x, h):
        outs = []
        for t in range(x.shape[0]):
            h = torch.tanh(self.w(x[t]) + self.u(h))
            outs.append(h)
        return torch.stack(outs)


class ColumnChunks(nn.Module):
    """A running state over column blocks of x (strided pieces), each step's sigmoid gate a kernel of its own."""

    def __init__(self, d: int = 8):
        super().__init__()
        self.u = nn.Linear(d, d, bias=False)

    def forward(self, x, h):
        for i in range(x.shape[1] // 8):
            h = torch.sigmoid(x[:, 8 * i : 8 * i + 8] * 2.0 - self.u(h)) * h
        return h


CASES = {
    "rows": (RowSteps, lambda: (torch.randn(5, 3, 16), torch.randn(3, 16))),
    "column blocks": (ColumnChunks, lambda: (torch.randn(4, 40), torch.randn(4, 8))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_pieces_of_one_operand_share_a_kernel(case):
    make, inputs = CASES[case]
    torch.manual_seed(0)
    model, args = make().eval(), inputs()
    shared = mlirfuse.compile(model, args)
    apart = mlirfuse.compile(model, args, options={"hoist-views": False})
    with torch.no_grad():
        expected = model(*args)
    for cm in (shared, apart):
        torch.testing.assert_close(cm(*args), expected, rtol=1e-5, atol=1e-5)
    assert shared.stats["launches"] == apart.stats["launches"]
    assert shared.stats["kernels"] < apart.stats["kernels"], (shared.stats, apart.stats)
    assert shared.stats["unfused_views"] > apart.stats["unfused_views"]  # each step's piece, taken before its launch
    assert shared.stats["unfused_ops"] - shared.stats["unfused_views"] == apart.stats["unfused_ops"] - apart.stats["unfused_views"]
    assert "torch.aten.select.int" in shared.mlir.split("func.func")[-1] or "torch.aten.slice.Tensor" in shared.mlir.split("func.func")[-1]


def test_a_new_input_is_read_through_new_views():
    """The views are taken of each call's input, not of the first's."""
    torch.manual_seed(0)
    model = RowSteps().eval()
    x, h = torch.randn(5, 3, 16), torch.randn(3, 16)
    cm = mlirfuse.compile(model, (x, h))
    for _ in range(2):
        x, h = torch.randn(5, 3, 16), torch.randn(3, 16)
        with torch.no_grad():
            torch.testing.assert_close(cm(x, h), model(x, h), rtol=1e-5, atol=1e-5)
