"""What keeps the pipeline cheap (issue 20 item 2) without changing what it computes.

The fusion ops' verifiers run once, after the last of our passes, unless
verify-each (or the checking mode, --verify-analyses) asks for every pass.
"""

from __future__ import annotations

import pytest

from mlirfuse.dialect import make_context
from mlirfuse.ir import ir
from mlirfuse.passes import pipeline as pipeline_module
from mlirfuse.passes.pipeline import build_pass_manager

CHAIN = """
func.func @chain(%arg0: !torch.vtensor<[4,16],f32>, %arg1: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32> {
  %0 = torch.aten.mul.Tensor %arg0, %arg1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  %2 = torch.aten.tanh %1 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  return %2 : !torch.vtensor<[4,16],f32>
}
"""
PASSES = "builtin.module(fusion-fuse-vertical, fusion-canonicalize, fusion-outline)"


def _verifications(monkeypatch, **flags) -> int:
    calls = []
    real = pipeline_module.verify_fusion_ops
    monkeypatch.setattr(pipeline_module, "verify_fusion_ops", lambda op: calls.append(op) or real(op))
    with make_context() as ctx:
        module = ir.Module.parse(CHAIN)
        build_pass_manager(PASSES, ctx, **flags).run(module.operation)
        assert '"fusion.launch"' in str(module)
    return len(calls)


@pytest.mark.parametrize(
    "flags, expected",
    [
        ({"verify_analyses": False, "verify_each": False}, 1),  # once, after the last pass
        ({"verify_analyses": False, "verify_each": True}, 3),
        ({"verify_analyses": True}, 3),  # the checking mode verifies after each pass
    ],
)
def test_fusion_verifiers_run_after_the_last_pass_or_each(monkeypatch, flags, expected):
    monkeypatch.delenv("MLIRFUSE_VERIFY_EACH", raising=False)
    assert _verifications(monkeypatch, **flags) == expected


def test_verify_each_from_the_environment(monkeypatch):
    monkeypatch.setenv("MLIRFUSE_VERIFY_EACH", "1")
    assert _verifications(monkeypatch, verify_analyses=False) == 3
