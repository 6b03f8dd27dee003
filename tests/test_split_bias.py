"""fusion-split-bias end to end: the bias add runs in the kernel after the matmul, results match eager."""

from __future__ import annotations

import torch
from torch import nn

import mlirfuse
from helpers import kernel_ops, split_mlir, unfused_ops


def compile_checked(model: nn.Module, inputs: tuple):
    """Compile `model` with ATen matmuls, run it once, compare with eager at default f32 tolerances.

    matmul="aten": what is checked is the split next to an ATen matmul (with
    the default Triton GEMMs the bias add is the GEMM's epilogue; tests/test_matmul.py).
    """
    model = model.eval()
    expected = model(*inputs)
    cm = mlirfuse.compile(model, inputs, matmul="aten")
    torch.testing.assert_close(cm(*inputs), expected)
    return cm


def kernels_with(cm, *ops: str) -> list[str]:
    """Names of the fusion.kernels whose bodies contain every op in `ops`."""
    kernels, _ = split_mlir(cm.mlir)
    found = []
    # Each kernel prints as `"fusion.kernel"() ({ body }) {..., sym_name = "name"}`.
    for chunk in kernels.split('"fusion.kernel"()')[1:]:
        if all(f"{op} " in chunk for op in ops):
            found.append(chunk.partition('sym_name = "')[2].partition('"')[0])
    return found


def linear_calls(cm) -> list[str]:
    """The linear/mm/addmm calls left in `forward`, as text lines."""
    _, forward = split_mlir(cm.mlir)
    return [line.strip() for line in forward.splitlines() if any(f"torch.aten.{m} " in line for m in ("linear", "mm", "addmm"))]


class LinearGelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32)

    def forward(self, x):
        return nn.functional.gelu(self.fc(x))


def test_linear_gelu_is_matmul_plus_one_kernel():
    cm = compile_checked(LinearGelu(), (torch.randn(4, 16),))
    assert cm.stats["launches"] == 1, cm.stats
    assert kernels_with(cm, "torch.aten.add.Tensor", "torch.aten.gelu"), cm.mlir
    # The bias left the matmul: only a bias-free linear runs through ATen.
    assert unfused_ops(cm) == ["torch.aten.linear"], unfused_ops(cm)
    assert all("!torch.none" in line for line in linear_calls(cm)), linear_calls(cm)


class LinearReluLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_linear_relu_linear():
    cm = compile_checked(LinearReluLinear(), (torch.randn(2, 4, 16),))
    # fc1's bias + relu in one kernel; fc2 feeds nothing fusible and keeps
    # its bias (a lone bias-add kernel would be one launch more).
    assert cm.stats["launches"] == 1, cm.stats
    assert kernels_with(cm, "torch.aten.add.Tensor", "torch.aten.relu"), cm.mlir
    assert sorted(unfused_ops(cm)) == ["torch.aten.linear", "torch.aten.linear"], unfused_ops(cm)
    assert ["!torch.none" in line for line in linear_calls(cm)] == [True, False], linear_calls(cm)


class ScaledThenLinear(nn.Module):
    """A model whose last op is a Linear: its bias add has nothing after it to fuse with, so it is not split."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(torch.tanh(x) * 2)


def test_bias_only_linear_at_the_end():
    cm = compile_checked(ScaledThenLinear(), (torch.randn(4, 16),))
    # The prologue kernel (tanh, mul); the linear keeps its bias.
    assert cm.stats["launches"] == 1, cm.stats
    assert not kernels_with(cm, "torch.aten.add.Tensor"), kernel_ops(cm)
    assert unfused_ops(cm) == ["torch.aten.linear"], unfused_ops(cm)
    assert "!torch.none" not in linear_calls(cm)[0], linear_calls(cm)


class AddmmSilu(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 32))
        self.b = nn.Parameter(torch.randn(32))

    def forward(self, x):
        return nn.functional.silu(torch.addmm(self.b, x, self.w))


def test_addmm_becomes_mm_plus_fused_bias():
    cm = compile_checked(AddmmSilu(), (torch.randn(4, 16),))
    assert cm.stats["launches"] == 1, cm.stats
    assert kernels_with(cm, "torch.aten.add.Tensor", "torch.aten.silu"), cm.mlir
    assert unfused_ops(cm) == ["torch.aten.mm"], unfused_ops(cm)


class ConvBnRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        with torch.no_grad():
            self.bn.running_mean.normal_()
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def test_conv_bias_batch_norm_relu_is_conv_plus_one_kernel():
    cm = compile_checked(ConvBnRelu().eval(), (torch.randn(2, 3, 8, 8),))
    assert cm.stats["launches"] == 1, cm.stats
    assert unfused_ops(cm) == ["torch.aten.conv2d"], unfused_ops(cm)
