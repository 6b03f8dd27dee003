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
from mlirfuse.analysis.alias import AliasAnalysis
from mlirfuse.analysis.bodies import GroupBodies
from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.dialect import make_context
from mlirfuse.ir import ir
from mlirfuse.passes import fuse_vertical
from mlirfuse.passes.pipeline import build_pass_manager


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
    assert {"alias", "shapes", "dependence", "group-bodies"} <= checks["analyses"], checks["analyses"]
    assert checks["problems"] == []


# Fusion wraps exp and neg, then merges them: the mm between them reads exp,
# so it moves after the merged group; the transpose (storage of neg's result)
# now views the group's result. Values are replaced and ops inserted, moved
# and erased.
CHAIN = """
func.func @f(%a: !torch.vtensor<[4,4],f32>) -> (!torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32>) {
  %0 = torch.aten.exp %a : !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  %1 = torch.aten.mm %0, %a : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  %2 = torch.aten.neg %0 : !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %3 = torch.aten.transpose.int %2, %int0, %int1 : !torch.vtensor<[4,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,4],f32>
  return %1, %3 : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32>
}
"""


@pytest.mark.parametrize(
    "analysis, notification, reported",
    [
        (DependenceAnalysis, "op_moved", "dependence: block 0: position"),
        (AliasAnalysis, "value_replaced", "alias: 'torch.aten.transpose.int' #"),
        (GroupBodies, "op_erased", "group-bodies: 2 entries for groups no longer in the IR"),
    ],
)
def test_verify_analyses_catches_an_analysis_that_ignores_the_rewriter(monkeypatch, analysis, notification, reported):
    """Passes change IR only through FusionRewriter; an analysis deaf to one of its notifications goes stale, and --verify-analyses says how."""
    # The wraps and merges, one by one (a planned fuse-vertical builds each group once: no group's facts to forget).
    monkeypatch.setattr(fuse_vertical, "PLANNED", [False])
    ctx = make_context()
    module = ir.Module.parse(CHAIN, ctx)
    build_pass_manager("builtin.module(fusion-fuse-vertical)", ctx, verify_analyses=True).run(module.operation)

    monkeypatch.setattr(analysis, notification, lambda self, *args: None)
    module = ir.Module.parse(CHAIN, ctx)
    with pytest.raises(ir.MLIRError) as failure:
        build_pass_manager("builtin.module(fusion-fuse-vertical)", ctx, verify_analyses=True).run(module.operation)
    message = str(failure.value)
    assert "--verify-analyses: after 'fusion-fuse-vertical' the maintained analyses differ" in message
    assert reported in message


_DIAMOND = """
func.func @f(%a: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %0 = torch.aten.relu %a : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %1 = torch.aten.tanh %a : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %2 = torch.aten.sigmoid %0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %int1 = torch.constant.int 1
  %3 = torch.aten.add.Tensor %2, %1, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %4 = torch.aten.neg %1 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %5 = torch.aten.mul.Tensor %3, %4 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %5, %2 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}
"""


def test_reaches_early_answers_as_reaches():
    """The search that stops at the first path gives `reaches`' answer for every pair, direct, through ops and none."""
    with make_context():
        module = ir.Module.parse(_DIAMOND)
        dep = DependenceAnalysis.compute(module.operation)
        ops = [op.operation for op in module.body.operations[0].regions[0].blocks[0].operations]
        relu, tanh, sigmoid, _, add, neg, mul, _ = ops
        answers = {(a.name, b.name): dep.reaches_early(a, b) for a in ops for b in ops}
        assert answers == {(a.name, b.name): dep.reaches(a, b) for a in ops for b in ops}
        assert dep.reaches_early(relu, sigmoid) and dep.reaches_early(relu, mul) and dep.reaches_early(tanh, mul)
        assert not dep.reaches_early(tanh, sigmoid) and not dep.reaches_early(relu, neg) and not dep.reaches_early(mul, relu)
