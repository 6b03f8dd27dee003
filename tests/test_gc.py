"""A compile leaves the objects alive before it out of the garbage collector's full scans (compiler.heap_frozen)."""

from __future__ import annotations

import gc

import torch

import mlirfuse
from mlirfuse import compiler
from helpers import Lambda


def doubled_tanh(x):
    return torch.tanh(x) * 2


def test_the_heap_is_frozen_during_a_compile_and_not_after(monkeypatch):
    seen = []
    graph = compiler.CompiledGraph
    monkeypatch.setattr(compiler, "CompiledGraph", lambda *a, **k: seen.append(gc.get_freeze_count()) or graph(*a, **k))
    x = torch.randn(4, 8)
    cm = mlirfuse.compile(Lambda(doubled_tanh), (x,))
    assert seen and seen[0] > 0
    assert gc.get_freeze_count() == 0
    torch.testing.assert_close(cm(x), doubled_tanh(x))


def test_a_process_that_froze_its_heap_keeps_it_frozen():
    gc.freeze()
    try:
        x = torch.randn(4, 8)
        cm = mlirfuse.compile(Lambda(doubled_tanh), (x,))
        assert gc.get_freeze_count() > 0  # still frozen (objects freed by their counts leave it, none else)
        torch.testing.assert_close(cm(x), doubled_tanh(x))
    finally:
        gc.unfreeze()
