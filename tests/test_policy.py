"""Fusion policies (mlirfuse/passes/policy.py): a veto changes a fusion decision, numerics still match eager."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from mlirfuse.passes.policy import Candidate
from helpers import Lambda

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from examples.fusion_policy import frugal_prologues, no_reduction_merges  # noqa: E402


def _gelu_then_linear(x, w):
    return F.linear(F.gelu(x), w)  # the gelu is the GEMM's A prologue, recomputed per column block


def test_the_example_policy_vetoes_an_expensive_prologue():
    x, w = torch.randn(64, 32), torch.randn(48, 32)
    default = mlirfuse.compile(Lambda(_gelu_then_linear), (x, w), explain=True)
    assert default.stats["launches"] == 1, default.mlir
    seen: list[Candidate] = []

    def recorded(c: Candidate):
        seen.append(c)
        return frugal_prologues(c)

    frugal = mlirfuse.compile(Lambda(_gelu_then_linear), (x, w), explain=True, policy=recorded)
    assert frugal.stats["launches"] == 2, frugal.mlir
    torch.testing.assert_close(frugal(x, w), _gelu_then_linear(x, w))
    prologue = next(c for c in seen if c.recomputed_per_tile)
    assert prologue.kind == "prologue" and prologue.consumer_kind == "matmul"
    assert "torch.aten.gelu" in prologue.producer_ops
    assert prologue.bytes_saved == 2 * x.numel() * 4  # the gelu result, stored once and loaded once
    reasons = [r for rs in frugal.explain().values() for r in rs]
    assert any("policy frugal_prologues" in r for r in reasons), reasons


def test_a_policy_sees_horizontal_merges_with_the_shared_input():
    x = torch.randn(16, 8)
    seen = []
    cm = mlirfuse.compile(Lambda(lambda x: (x.exp(), x.sin())), (x,), policy=lambda c: seen.append(c))
    horizontal = [c for c in seen if c.kind == "horizontal"]
    assert horizontal and horizontal[0].bytes_saved == x.numel() * 4, seen
    assert cm.stats["launches"] == 1


def test_no_reduction_merges_keeps_a_softmax_apart():
    x = torch.randn(8, 32)
    cm = mlirfuse.compile(Lambda(lambda x: torch.softmax(x, -1)), (x,), policy=no_reduction_merges)
    assert cm.stats["launches"] > mlirfuse.compile(Lambda(lambda x: torch.softmax(x, -1)), (x,)).stats["launches"]
    torch.testing.assert_close(cm(x), torch.softmax(x, -1))


def test_a_policy_that_is_not_a_function_is_refused():
    with pytest.raises(TypeError, match="policy must be a function"):
        mlirfuse.compile(Lambda(lambda x: x.exp()), (torch.randn(4),), policy="frugal")


def test_an_epilogue_candidate_is_named_so():
    x, w = torch.randn(16, 32), torch.randn(24, 32)
    seen = []
    mlirfuse.compile(Lambda(lambda x, w: torch.relu(F.linear(x, w))), (x, w), policy=lambda c: seen.append(c))
    epilogue = [c for c in seen if c.kind == "epilogue"]
    assert epilogue and epilogue[0].producer_kind == "matmul" and not epilogue[0].recomputed_per_tile, seen
