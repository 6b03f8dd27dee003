"""Memory: each value released after its last use (runtime/liveness.py), the planned peak against a measured one.

Eager frees an intermediate when its last reference goes; a compiled program
must not hold more. The references here are weak references to the values a
program computes (dead means freed) and the storages it holds during each step.
"""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.backend import Backend
from mlirfuse.models import TinyBlock
from mlirfuse.tools.main import fusion_report
from helpers import Lambda

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from allocator import allocation_peaks, backward_range  # noqa: E402


class Stack(nn.Module):
    """`depth` TinyBlocks: a deep model whose every layer computes values used only inside it."""

    def __init__(self, depth: int):
        super().__init__()
        self.blocks = nn.ModuleList(TinyBlock(d_model=32, n_heads=2, seq=8) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def compiled_stack(depth: int):
    torch.manual_seed(depth)
    model, x = Stack(depth).eval(), torch.randn(2, 8, 32)
    return model, x, mlirfuse.compile(model, (x,))


def live_bytes(program, arguments: list) -> tuple[list, int]:
    """Run `program` on `arguments`: its results and the most bytes of intermediates it held during a step.

    Storages are counted once (views share them); the inputs' and constants' storages are the caller's.
    """
    owned = {a.untyped_storage().data_ptr() for a in arguments if isinstance(a, torch.Tensor)}
    constants = {s for step in program.steps if step.kind == "const" for s in step.outs}
    peak = 0

    def on_step(i, env):
        nonlocal peak
        seen = {}
        for slot, v in enumerate(env):
            if isinstance(v, torch.Tensor) and slot not in constants:
                storage = v.untyped_storage()
                if storage.data_ptr() not in owned:
                    seen[storage.data_ptr()] = storage.nbytes()
        peak = max(peak, sum(seen.values()))

    return program.run(arguments, on_step), peak


def test_a_value_computed_early_is_freed_before_the_call_returns():
    # Before liveness every slot lived until the call returned: the first kernel's results outlived
    # the whole stack. The check wraps the steps themselves, so it needs nothing from the program.
    model, x, cm = compiled_stack(6)
    steps = cm.program.steps
    first = next(i for i, s in enumerate(steps) if s.kind == "launch")
    refs, alive_at_last_step = [], []
    launch, last = steps[first].fn, steps[-1].fn

    def recording(*args, **kwargs):
        results = launch(*args, **kwargs)
        refs.extend(weakref.ref(r) for r in results)
        return results

    def checking(*args, **kwargs):
        alive_at_last_step.extend(r() is not None for r in refs)
        return last(*args, **kwargs)

    steps[first].fn, steps[-1].fn = recording, checking
    try:
        actual = cm(x)
    finally:
        steps[first].fn, steps[-1].fn = launch, last
    assert refs and not any(alive_at_last_step), f"{sum(alive_at_last_step)} of {len(refs)} first results alive"
    torch.testing.assert_close(actual, model(x))


def test_planned_peak_is_flat_in_depth():
    peaks = {depth: compiled_stack(depth)[2].stats["planned_peak_bytes"] for depth in (2, 8)}
    assert 0 < peaks[8] <= 1.25 * peaks[2], peaks


@pytest.mark.parametrize("depth", [1, 4])
def test_planned_peak_matches_the_measured_one(depth, monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")  # checked launches put guard bytes around every output
    model, x, cm = compiled_stack(depth)
    results, measured = live_bytes(cm.program, _arguments(cm, x))
    torch.testing.assert_close(results[0], model(x))
    planned = cm.stats["planned_peak_bytes"]
    assert abs(measured - planned) <= 0.1 * planned, (measured, planned)


def _arguments(cm, x) -> list:
    """The program's arguments for input `x`, as the compiled model binds them."""
    return cm.bind(cm._current.imported, [x])


def test_outputs_views_and_mutated_buffers_survive():
    """Values that are (or alias) outputs, and a mutated buffer, are never released early."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(4))

        def forward(self, x):
            a = x.exp()
            view = a.view(2, 2)  # an output aliasing an intermediate
            b = (a * 2).sin()
            self.count.add_(b)  # a mutated buffer, written back after the call
            c = b.cos() + 1
            return view, c.t(), c[1:]

    x = torch.randn(4)
    eager = Model()
    expected = eager(x)
    model = Model()
    cm = mlirfuse.compile(model, (x,))
    model.count.zero_()
    for _ in range(2):  # a second call reuses nothing the first released
        actual = cm(x)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e)
    torch.testing.assert_close(model.count, 2 * eager.count)


def test_a_value_used_again_after_many_launches():
    # x1 is read by the first and the last kernel: its slot must live across everything between.
    def f(x):
        x1 = x.exp()
        y = x1
        for _ in range(6):
            y = torch.tanh(y @ y.t()) + 1
        return y + x1.sum()

    x = torch.randn(4, 4)
    cm = mlirfuse.compile(Lambda(f), (x,))
    torch.testing.assert_close(cm(x), f(x))
    torch.testing.assert_close(cm(x), f(x))  # and the program still runs a second time


def test_the_program_takes_its_arguments_list():
    # AOTAutograd's boxed convention: the list is emptied, so a saved activation's last reference can go.
    x = torch.randn(4, 4)
    cm = mlirfuse.compile(Lambda(lambda x: (x * 2).exp()), (x,))
    arguments = _arguments(cm, x)
    cm.program.run(arguments)
    assert arguments == []


def test_backward_frees_saved_activations_as_they_are_consumed(fresh_dynamo):
    torch.manual_seed(0)
    model = Stack(2)
    x = torch.randn(2, 8, 32, requires_grad=True)
    backend = Backend()
    compiled = torch.compile(model, backend=backend)
    compiled(x).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, e in zip(grads, [p.grad for p in model.parameters()]):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-4)
    assert backend.stats["backward"]["eager_graphs"] == 0
    assert backend.stats["backward"]["planned_peak_bytes"] > 0


def test_a_training_step_needs_no_more_memory_than_eager_during_the_backward(fresh_dynamo, monkeypatch):
    # The acceptance line of issue 25 at a test's size. A gradient read both as [B*T, 4d] (a matmul) and as
    # [B, T, 4d] (the bias's sum) was stored twice by its kernel (fusion-sink-exit-reshapes): 1.06x eager.
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")  # checked launches put guard bytes around every output
    torch.manual_seed(0)
    model = nn.Sequential(*[TinyBlock(d_model=64, n_heads=4, seq=32) for _ in range(2)])
    x = torch.randn(2, 32, 64)

    def step_peaks(fn):
        def step():
            loss = fn(x).pow(2).mean()
            with backward_range():
                loss.backward()

        for _ in range(2):  # the first step compiles
            model.zero_grad(set_to_none=True)
            peaks = allocation_peaks(step)
        return peaks.after_mark, [p.grad.clone() for p in model.parameters()]

    eager, expected = step_peaks(model)
    ours, grads = step_peaks(torch.compile(model, backend=Backend()))
    for g, e in zip(grads, expected):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)
    assert 0 < ours <= eager, f"backward peak {ours} bytes, eager's {eager}"


def test_the_fusion_report_names_the_peak_step():
    model, x, cm = compiled_stack(1)
    plan = cm.program.plan
    line = next(line for line in fusion_report(cm).splitlines() if "peak live memory" in line)
    kernel = cm.program.steps[plan.peak_step].name
    assert f"step {plan.peak_step + 1} of {len(cm.program.steps)} ({kernel})" in line, line
    assert f"{plan.planned_peak_bytes / 1024:.1f} KiB" in line, line


def test_nothing_outlives_the_call_but_its_results():
    # With the cyclic collector off, a result dropped by the caller dies at once: the program keeps no
    # reference to a call's values (a closure cycle once kept them all until gc ran).
    x = torch.randn(8, 8)
    cm = mlirfuse.compile(Lambda(lambda x: (x.exp() @ x).sin() + 1), (x,))
    cm(x)
    gc.collect()
    gc.disable()
    try:
        result = cm(x)
        ref = weakref.ref(result)
        del result
        assert ref() is None
    finally:
        gc.enable()
