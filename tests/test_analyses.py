"""The maintained analyses agree with recomputed ones on real models (what --verify-analyses checks).

Each model goes through `mlirfuse.compile` (the default pipeline) with the
checking mode on; `AnalysisManager.check` is watched to see which analyses
were compared after the passes that maintain them, and that none differed.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.analysis import AnalysisManager


class Chain(nn.Module):
    def forward(self, x, y):
        return torch.sigmoid(torch.tanh(torch.relu(x * y + 1)))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 8)

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x) * 0.5 + 1))) * 2 - 1


class NormBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(16)

    def forward(self, x):
        return x + nn.functional.gelu(self.ln(x)).softmax(-1)


class InPlace(nn.Module):
    """In-place ops, through a view too, and a buffer updated in place."""

    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros(4, 16))

    def forward(self, x):
        y = x.clone()
        y.mul_(2)
        y.view(-1).add_(1)
        self.steps.add_(y)
        return y.relu_() * x.size(0)


MODELS = {
    "chain": (Chain, lambda: (torch.randn(4, 16), torch.randn(4, 16))),
    "mlp": (MLP, lambda: (torch.randn(4, 16),)),
    "norm": (NormBlock, lambda: (torch.randn(2, 4, 16),)),
    "in_place": (InPlace, lambda: (torch.randn(4, 16),)),
}


@pytest.fixture
def checks(monkeypatch):
    """Records, for every `AnalysisManager.check`, the analyses compared and the differences found."""
    monkeypatch.setenv("MLIRFUSE_VERIFY_ANALYSES", "1")
    seen = {"analyses": set(), "problems": []}
    check = AnalysisManager.check

    def watched(self):
        seen["analyses"].update(cls.name for (cls, _), _ in self.cached())
        problems = check(self)
        seen["problems"] += problems
        return problems

    monkeypatch.setattr(AnalysisManager, "check", watched)
    return seen


@pytest.mark.parametrize("name", list(MODELS))
def test_maintained_analyses_agree_with_recomputed(name, checks):
    model_cls, make_inputs = MODELS[name]
    inputs = make_inputs()
    eager, compiled = model_cls().eval(), model_cls().eval()
    compiled.load_state_dict(eager.state_dict())
    expected = eager(*inputs)
    cm = mlirfuse.compile(compiled, inputs)
    torch.testing.assert_close(cm(*inputs), expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dict(compiled.named_buffers()), dict(eager.named_buffers()))
    assert {"alias", "shapes", "dependence"} <= checks["analyses"], checks["analyses"]
    assert checks["problems"] == []
