"""What keeps the pipeline cheap (issue 20 item 2) without changing what it computes.

The fusion ops' verifiers, and MLIR's own where the pipeline is ours
alone, run once, after the last of our passes, unless verify-each (or the
checking mode, --verify-analyses) asks for every pass.
Group body facts are kept per group and combined on merge, and the checking
mode compares every kept entry with its body. The cyclic garbage collector
is paused from the first of our passes to the last, not collecting between
them, and runs again after the last, or after a pass that fails.
"""

from __future__ import annotations

import gc

import pytest

from mlirfuse.analysis import bodies
from mlirfuse.dialect import make_context
from mlirfuse.ir import ir
from mlirfuse.passes import fuse_vertical
from mlirfuse.passes import pipeline as pipeline_module
from mlirfuse.passes.canonicalize import Canonicalize
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



@pytest.mark.parametrize("verify_each", [False, True])
def test_invalid_ir_is_reported_with_verification_once_or_after_each_pass(verify_each):
    # An op missing its operand (made by hand: the parser verifies) survives fusion-canonicalize untouched; MLIR's
    # verifier, after the last pass or after each, reports it either way.
    with make_context() as ctx, ir.Location.unknown():
        module = ir.Module.parse(CHAIN)
        ret = module.body.operations[0].regions[0].blocks[0].operations[3]
        ir.Operation.create("torch.aten.relu", results=[ret.operands[0].type], operands=[], ip=ir.InsertionPoint(ret))
        with pytest.raises(ir.MLIRError, match="'torch.aten.relu' op requires a single operand"):
            build_pass_manager("builtin.module(fusion-canonicalize)", ctx, verify_each=verify_each).run(module.operation)


# exp, neg and a sum: two merges. The kept facts of each merged group are the two combined, not re-walked.
THREE = """
func.func @f(%a: !torch.vtensor<[4,4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.exp %a : !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  %int1 = torch.constant.int 1
  %list = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %2 = torch.aten.sum.dim_IntList %1, %list, %false, %none : !torch.vtensor<[4,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4],f32>
  return %2 : !torch.vtensor<[4],f32>
}
"""


def _fuse_three(verify: bool) -> str:
    with make_context() as ctx:
        module = ir.Module.parse(THREE)
        build_pass_manager("builtin.module(fusion-fuse-vertical)", ctx, verify_analyses=verify).run(module.operation)
        return str(module)


def test_merged_groups_take_combined_body_facts(monkeypatch):
    monkeypatch.setattr(fuse_vertical, "PLANNED", [False])  # the wraps and merges (a plan keeps no group's facts)
    walked = []
    real = bodies.body_facts
    monkeypatch.setattr(bodies, "body_facts", lambda group: walked.append(real(group)) or walked[-1])
    out = _fuse_three(verify=False)
    assert out.count('"fusion.group"') == 1 and "torch.aten.sum.dim_IntList" in out
    # Each one-op group is walked once, when legality first asks; the two merged groups never.
    assert [facts.computing for facts in walked] == [1, 1, 1]


def test_the_checking_mode_compares_kept_body_facts_with_the_bodies(monkeypatch):
    monkeypatch.setattr(fuse_vertical, "PLANNED", [False])  # the wraps and merges (a plan keeps no group's facts)
    real = bodies.combined
    monkeypatch.setattr(bodies, "combined", lambda a, b: real(a, b)._replace(computing=0))  # a miscounting merge
    with pytest.raises(ir.MLIRError) as failure:
        _fuse_three(verify=True)
    assert "group-bodies: group #0: kept 0 computing ops" in str(failure.value)


def _collector_states(pipeline: str) -> list[bool]:
    """Whether the collector ran as each of our passes started (the progress callback), then after the run."""
    states = []
    with make_context() as ctx:
        module = ir.Module.parse(CHAIN)
        pm = build_pass_manager(pipeline, ctx, progress=lambda index, total, name: states.append(gc.isenabled()))
        try:
            pm.run(module.operation)
        finally:
            states.append(gc.isenabled())
    return states


def test_the_collector_is_paused_from_the_first_of_our_passes_to_the_last():
    assert gc.isenabled()
    assert _collector_states(PASSES) == [True, False, False, True]


def test_a_pipeline_with_upstream_passes_pauses_the_collector_per_pass():
    # An upstream pass that failed between two of ours would leave a shared pause on.
    mixed = "builtin.module(fusion-fuse-vertical, cse, fusion-canonicalize, fusion-outline)"
    assert _collector_states(mixed) == [True, True, True, True]


def test_a_failing_pass_ends_the_pause(monkeypatch):
    def fail(self, module, am=None):
        raise RuntimeError("boom")

    monkeypatch.setattr(Canonicalize, "apply", fail)  # the second of three: the PassManager stops there
    with pytest.raises(ir.MLIRError, match="internal error in pass 'fusion-canonicalize'"):
        _collector_states(PASSES)
    assert gc.isenabled()


def test_a_caller_pausing_the_collector_keeps_it_paused():
    gc.disable()
    try:
        assert _collector_states(PASSES) == [False, False, False, False]
    finally:
        gc.enable()
