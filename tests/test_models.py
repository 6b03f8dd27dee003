"""Small whole models against eager PyTorch: fusion around unfused ops, state, outputs."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import mlirfuse
from helpers import unfused_ops

TOL = dict(rtol=1e-5, atol=1e-5)


def compile_checked(model: nn.Module, inputs: tuple):
    """Compile `model`, run it once, compare with eager; returns the compiled module."""
    expected = model(*inputs)
    cm = mlirfuse.compile(model, inputs)
    torch.testing.assert_close(cm(*inputs), expected, **TOL)
    return cm


class Chain(nn.Module):
    def forward(self, x, y):
        return torch.sigmoid(torch.tanh(torch.relu(x * y + 1)))


def test_elementwise_chain_is_one_kernel():
    x, y = torch.randn(64, 128), torch.randn(64, 128)
    cm = compile_checked(Chain(), (x, y))
    assert cm.stats["launches"] == 1
    assert cm.stats["unfused_ops"] == 0
    assert cm.stats["aten_ops"] == 5


# Ops a Linear layer may export as; everything else must have been fused.
LINEAR_LIKE = ("linear", "addmm", "mm", "matmul", "t", "transpose", "permute", "view", "reshape", "_unsafe_view", "expand")


def _aten_base(op: str) -> str:
    """'torch.aten.addmm' -> 'addmm'; 'torch.aten.add.Tensor' -> 'add'."""
    return op.removeprefix("torch.operator ").strip('"').split(".")[2]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x) * 0.5 + 1)
        return torch.sigmoid(self.fc2(h)) * 2 - 1


def test_mlp_fuses_around_matmuls():
    x = torch.randn(4, 16)
    # Each matmul is a Triton GEMM whose epilogue is the elementwise chain after it; the first one's result,
    # read only as the second's A, stays on chip: one matmul-chain kernel.
    cm = compile_checked(MLP(), (x,))
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, (cm.stats, unfused_ops(cm))
    # matmul="aten": two elementwise chains, one after each ATen matmul; they cannot merge across fc2.
    cm = mlirfuse.compile(MLP(), (x,), matmul="aten")
    torch.testing.assert_close(cm(x), cm.model(x), **TOL)
    assert cm.stats["launches"] >= 2, cm.stats
    leftover = unfused_ops(cm)
    assert leftover, "the matmuls run through ATen"
    assert all(_aten_base(op) in LINEAR_LIKE for op in leftover), leftover
    assert cm.stats["unfused_ops"] == len(leftover)


class NormBlock(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        return x + nn.functional.gelu(self.ln(x))


def test_layernorm_gelu_residual():
    x = torch.randn(4, 8, 32)
    cm = compile_checked(NormBlock(), (x,))
    assert cm.stats["launches"] == 1, cm.stats
    assert all("layer_norm" in op for op in unfused_ops(cm)), unfused_ops(cm)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.rand(16) + 0.5, persistent=False)

    def forward(self, x):
        return torch.relu(x * self.scale + 1)


def test_non_persistent_buffer():
    model = Scaled()
    assert "scale" not in model.state_dict()
    x = torch.randn(4, 16)
    cm = compile_checked(model, (x,))
    assert cm.stats["unfused_ops"] == 0
    # The buffer is bound at call time, not baked into the IR.
    model.scale.fill_(-1.0)
    torch.testing.assert_close(cm(x), model(x), **TOL)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return torch.tanh(self.fc(x)) + 1


def test_weight_updated_in_place_after_compile():
    model = Head()
    x = torch.randn(4, 16)
    cm = compile_checked(model, (x,))
    before = cm(x)
    with torch.no_grad():
        model.fc.weight.mul_(2)
    after = cm(x)
    torch.testing.assert_close(after, model(x), **TOL)
    assert not torch.allclose(before, after)


class ManyOutputs(nn.Module):
    def forward(self, x, y):
        return torch.relu(x), {"gate": torch.sigmoid(y) * 2, "both": (x * y, torch.tanh(y))}


def test_nested_outputs_keep_their_structure():
    x, y = torch.randn(4, 16), torch.randn(4, 16)
    cm = compile_checked(ManyOutputs(), (x, y))
    out = cm(x, y)
    assert isinstance(out, tuple) and isinstance(out[1], dict) and set(out[1]) == {"gate", "both"}
    assert cm.stats["unfused_ops"] == 0


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))
        self.register_buffer("total", torch.zeros(16))

    def forward(self, x):
        self.count.add_(1)
        self.total.add_(x.sum(0))
        return torch.relu(x) * 2


def test_buffer_mutated_in_forward():
    model = Counter()
    reference = copy.deepcopy(model)
    x = torch.randn(4, 16)
    cm = mlirfuse.compile(model, (x,))
    # Compiling must not run the mutation.
    assert model.count.item() == 0
    for _ in range(2):
        torch.testing.assert_close(cm(x), reference(x), **TOL)
    assert model.count.item() == reference.count.item() == 2
    torch.testing.assert_close(model.total, reference.total, **TOL)


def test_demo_block():
    models = pytest.importorskip("mlirfuse.models")
    torch.manual_seed(0)
    block = models.TinyBlock().eval()
    inputs = models.demo_inputs()
    cm = compile_checked(block, inputs)
    assert cm.stats["launches"] >= 1
    assert cm.stats["kernels"] <= cm.stats["launches"]
