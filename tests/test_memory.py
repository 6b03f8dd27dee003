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
from mlirfuse.runtime.liveness import plan, slot_uses
from mlirfuse.runtime.program import Step
from mlirfuse.tools.main import fusion_report
from helpers import Lambda, compile_and_compare

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


def compiled_stack(depth: int, dedup_layers: bool = False):
    """The stack compiled as one function (these tests follow values through one program's steps), or with
    each block one function called per layer."""
    torch.manual_seed(depth)
    model, x = Stack(depth).eval(), torch.randn(2, 8, 32)
    return model, x, mlirfuse.compile(model, (x,), dedup_layers=dedup_layers)


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
    cm.program.straight_line = False  # run()'s releases; the generated program's: test_straight_line.py
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
    for dedup_layers in (False, True):
        peaks = {depth: compiled_stack(depth, dedup_layers)[2].stats["planned_peak_bytes"] for depth in (2, 8)}
        assert 0 < peaks[8] <= 1.25 * peaks[2], (dedup_layers, peaks)


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


# In place (runtime/liveness.py `reuse`): a plain pointwise kernel writes an output over an input that dies
# at it. One op per group, so that each op is a launch reading the launch before it.
ONE_OP_GROUPS = "mlirfuse-pipeline{max-group-size=1}"


def _compile_one_op_groups(fn, *args):
    cm = mlirfuse.compile(Lambda(fn) if not isinstance(fn, nn.Module) else fn, args, pipeline=ONE_OP_GROUPS)
    program = cm.program
    returned = {s for a in program.returns for s in slot_uses(a)}
    for i, taken in program.plan.reuse.items():  # what any choice must satisfy
        for j, position in taken.items():
            s = program.steps[i].args[position][1]
            # (or a mutated buffer the result is copied into after the call: stored there in place)
            fresh = s >= program.num_args and s not in returned
            assert fresh or s in program.arguments_written_in_place, (program.steps[i].name, s)
    return cm


def _reused(cm) -> dict[str, dict[int, int]]:
    return {cm.program.steps[i].name: taken for i, taken in cm.program.plan.reuse.items()}


def test_a_pointwise_chain_runs_in_one_buffer(monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")  # measured bytes without guard regions
    x = torch.randn(16, 32)

    def f(x):
        return x.exp().sin().cos()

    cm = _compile_one_op_groups(f, x)
    assert _reused(cm) == {"fused_sin_1": {0: 0}, "fused_cos_2": {0: 0}}
    assert cm.stats["allocated_bytes"] == cm.stats["planned_peak_bytes"] == x.numel() * 4
    results, measured = live_bytes(cm.program, _arguments(cm, x))
    assert measured == cm.stats["planned_peak_bytes"]
    torch.testing.assert_close(results[0], f(x))
    torch.testing.assert_close(cm(x), f(x))

    monkeypatch.setenv("MLIRFUSE_NO_REUSE", "1")  # the switch for bisecting: read when a program is built
    off = _compile_one_op_groups(f, x)
    assert off.program.plan.reuse == {} and off.stats["allocated_bytes"] == 3 * x.numel() * 4
    torch.testing.assert_close(off(x), f(x))


def test_no_reuse_of_a_value_read_again_later():
    x, w = torch.randn(16, 32), torch.randn(16, 8)

    def f(x, w):
        a = x.exp()
        b = a * 2  # a is read again by the matmul after it
        return b.sin(), a.t() @ w

    cm = _compile_one_op_groups(f, x, w)
    assert "fused_mul_1" not in _reused(cm) and "fused_sin_2" in _reused(cm)
    for actual, expected in zip(cm(x, w), f(x, w)):
        torch.testing.assert_close(actual, expected)


def test_no_reuse_of_a_value_an_output_aliases():
    x = torch.randn(16, 32)

    def f(x):
        a = x.exp()
        return a.sin(), a.view(32, 16)  # a view of a is returned: a's buffer outlives the call

    cm = _compile_one_op_groups(f, x)
    assert _reused(cm) == {}
    for _ in range(2):
        for actual, expected in zip(cm(x), f(x)):
            torch.testing.assert_close(actual, expected)


def test_no_reuse_over_a_broadcast_or_transposed_input():
    x, y = torch.randn(16, 32), torch.randn(1, 32)

    def f(x, y):
        a, r = x.exp(), y.exp()  # both die at the add; r is broadcast along dim 0
        return (r + a).t().sin()  # the sin reads the add's result transposed

    cm = _compile_one_op_groups(f, x, y)
    steps = cm.program.steps
    a = next(s.outs[0] for s in steps if s.args == [("slot", 0)])  # x.exp()
    add = next(i for i, s in enumerate(steps) if s.name.startswith("fused_add"))
    assert cm.program.plan.reuse.get(add) == {0: steps[add].args.index(("slot", a))}
    assert not any(name.startswith("fused_t_sin") or name.startswith("fused_sin") for name in _reused(cm))
    torch.testing.assert_close(cm(x, y), f(x, y))


def test_a_mutated_buffer_is_overwritten_only_by_its_new_value():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("total", torch.zeros(16, 32))

        def forward(self, x):
            self.total.add_(x.exp())  # the new total is a launch's result, written back after the call
            return (self.total * 2).sin()

    x = torch.randn(16, 32)
    eager, model = Model(), Model()
    expected = eager(x)
    cm = _compile_one_op_groups(model, x)
    model.total.zero_()
    torch.testing.assert_close(cm(x), expected)
    torch.testing.assert_close(model.total, eager.total)
    steps, reused = cm.program.steps, cm.program.plan.reuse
    add = next(i for i, s in enumerate(steps) if s.name.startswith("fused_add"))
    # The new total is stored in the buffer itself (the copy back after the call then moves nothing) or in
    # x.exp()'s buffer (it dies at the add); the next launch reads the new total, which is returned: not its
    # to overwrite.
    total = cm.imported.bindings.index(("buffer", "total"))
    assert all(steps[add].args[p][1] in (total, *range(cm.program.num_args, len(cm.program.slots)))
               for p in reused.get(add, {}).values())
    assert cm.program.arguments_written_in_place == (total,)
    assert not any(s.name.startswith("fused_mul") for s in (steps[i] for i in reused))


@pytest.mark.parametrize("case", ["view", "in_place_op", "argument", "read_twice", "returned"])
def test_the_plan_refuses_a_shared_or_living_input(case):
    # The value-level rules on steps alone: slot 1 is computed by a launch (step 0); step 2 may write its
    # output over slot 1 (the kernel allows it) unless something else holds slot 1's buffer or value.
    launch = Step(None, [("slot", 0)], {}, [1], "launch", "k0")
    extra = {
        "view": [Step(None, [("slot", 1)], {}, [2], "aten", "torch.aten.t", view=True)],
        "in_place_op": [Step(None, [("slot", 1), ("slot", 0)], {}, [2], "aten", "torch.aten.add_.Tensor", in_place=True)],
        "argument": [], "read_twice": [], "returned": [],
    }[case]
    reading = [("slot", 0 if case == "argument" else 1), ("slot", 1 if case == "read_twice" else 0)]
    last = Step(None, reading, {}, [3], "launch", "k1", reusable=((0, 0),))
    steps = [launch, *extra, last]
    returns = [("slot", 3)] + ([("slot", 1)] if case == "returned" else []) + ([("slot", 2)] if extra else [])
    bytes_ = {1: 64, 2: 64, 3: 64}
    assert plan(steps, returns, 1, 4, bytes_).reuse == {}
    # ... and the same steps without the reason do reuse: the test can fail.
    fine = [launch, Step(None, [("slot", 1), ("slot", 0)], {}, [3], "launch", "k1", reusable=((0, 0),))]
    assert plan(fine, [("slot", 3)], 1, 4, bytes_).reuse == {1: {0: 0}}


def test_gradients_of_an_in_place_backward_match_eager(fresh_dynamo):
    # A backward pointwise kernel writes its result over the incoming gradient, a launch's output dying there.
    # Since AOTAutograd's linear is one matmul again (fusion-split-bias), the GELU's backward is a GEMM
    # epilogue; a fusion policy keeping reductions and prologues apart gives the plain pointwise kernel back.
    from mlirfuse.passes.policy import using

    def apart(c):
        kinds = {c.producer_kind, c.consumer_kind}
        return "kept apart" if kinds & {"reduction", "persistent-reduction"} or c.recomputed_per_tile else None

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 128), nn.GELU(approximate="tanh"), nn.LayerNorm(128), nn.Linear(128, 32))
    x = torch.randn(4, 8, 32)
    backend = Backend()
    with using(apart):
        torch.compile(model, backend=backend)(x).pow(2).mean().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).pow(2).mean().backward()
    for g, e in zip(grads, [p.grad for p in model.parameters()]):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)
    backward = next(g for g in backend.graphs if g.role == "backward").graph.program
    assert backward.plan.reuse, "no backward launch writes in place"


def test_a_dropped_value_frees_its_storage_without_the_cyclic_collector(monkeypatch):
    # Triton's interpreter kept every launch's argument storages in a reference cycle until gc ran: the
    # tensors died, their memory did not (GPT2Model measured 4.2 MB against 3.2 planned). Without buffer
    # reuse: a later value living to the last step may rightly hold a storage the first launch wrote.
    from torch.multiprocessing.reductions import StorageWeakRef

    monkeypatch.setenv("MLIRFUSE_NO_REUSE", "1")
    model, x, cm = compiled_stack(2)
    steps = cm.program.steps
    first = next(i for i, s in enumerate(steps) if s.kind == "launch")
    storages, alive = [], []

    def on_step(i, env):
        if i == first:
            storages.extend(StorageWeakRef(env[s].untyped_storage()) for s in steps[i].outs)
        if i == len(steps) - 1:
            alive.extend(not ref.expired() for ref in storages)

    gc.collect()
    gc.disable()
    try:
        results = cm.program.run(_arguments(cm, x), on_step)
    finally:
        gc.enable()
    assert storages and not any(alive), f"{sum(alive)} of {len(storages)} storages alive at the last step"
    torch.testing.assert_close(results[0], model(x))


# Buffer taking (runtime/liveness.py `take`): a launch's output with no input to write over takes the buffer
# of a value that died earlier, same bytes and dtype, unless keeping that buffer aside would raise the peak.
def _launch(reads, out, name, reusable=()):
    return Step(None, [("slot", s) for s in reads], {}, [out], "launch", name, reusable=reusable)


@pytest.mark.parametrize("case", ["same", "other_dtype", "other_size", "raises_peak", "off"])
def test_the_plan_takes_a_dead_buffer_of_the_same_bytes_and_dtype(case):
    # slot 0 the argument; slot 1 dies at step 1, which computes slot 2; step 2 computes slot 3 from 2 and 0
    # (no in-place pair allowed); slot 3 may take slot 1's buffer.
    big = 1000 if case == "raises_peak" else 64
    steps = [_launch([0], 1, "k0"), _launch([1], 2, "k1"), _launch([2, 0], 3, "k2"), _launch([3], 4, "k3")]
    if case == "raises_peak":  # between slot 1's death and slot 3's birth two big values (2, 5) peak
        steps = [_launch([0], 1, "k0"), _launch([1], 2, "k1"), _launch([2], 5, "k5"), _launch([5], 6, "k6"),
                 _launch([6, 0], 3, "k2"), _launch([3], 4, "k3")]
    sizes = {1: 64, 2: big, 3: 64 if case != "other_size" else 128, 4: 64, 5: big, 6: 64}
    dtypes = {s: "float32" for s in sizes} | ({3: "int32"} if case == "other_dtype" else {})
    result = plan(steps, [("slot", 4)], 1, 7, sizes, reuse=case != "off", slot_dtypes=dtypes)
    taker = next(i for i, st in enumerate(steps) if st.name == "k2")
    if case == "same":
        # slot 3 takes slot 1's buffer, and the returned slot 4 slot 2's (dead at step 2)
        assert result.take == {taker: {0: 1}, taker + 1: {0: 2}} and result.kept == {1, 2}
        assert result.allocated_bytes == 64 + 64 and result.planned_peak_bytes == 128
    else:
        assert 1 not in result.kept and taker not in result.take, result.take


def test_a_taken_buffer_gives_eager_results_and_allocates_less(monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")  # measured bytes without guard regions
    x, w = torch.randn(16, 32), torch.randn(32, 32) / 32

    def f(x, w):
        a = x.exp()  # dies at the matmul, whose result cannot be written over it (a GEMM never writes in place)
        b = (a @ w).sin()
        return (b @ w).cos() + 1.0  # the second GEMM's result may take a's buffer

    cm = _compile_one_op_groups(f, x, w)
    taken = cm.program.plan.take
    assert taken, "no launch takes a dead buffer"
    for _ in range(2):
        torch.testing.assert_close(cm(x, w), f(x, w))
    results, measured = live_bytes(cm.program, cm.bind(cm._current.imported, [x, w]))
    assert measured == cm.stats["planned_peak_bytes"]
    torch.testing.assert_close(results[0], f(x, w))
    monkeypatch.setenv("MLIRFUSE_NO_REUSE", "1")
    off = _compile_one_op_groups(f, x, w)
    assert off.program.plan.take == {} and off.stats["allocated_bytes"] > cm.stats["allocated_bytes"]
    assert off.stats["planned_peak_bytes"] >= cm.stats["planned_peak_bytes"]
    torch.testing.assert_close(off(x, w), f(x, w))


def test_a_returned_unsafe_view_keeps_its_buffer_from_in_place_reuse():
    # Fuzz seed 2800217: flatten of an expanded input is a copy kernel then `_unsafe_view`, whose schema declares a
    # fresh result although the program returns a view of the copy; the softmax after it wrote its exp in place
    # over that copy, so the returned flatten held exp values.
    x = torch.randn(1, 2).expand(3, 2)

    def fn(x):
        v = x.flatten()
        return v, (torch.softmax(v, -1) + 2e-3).amax(0)

    compile_and_compare(fn, (x,), fused=False)  # the _unsafe_view runs as an ATen view


def test_a_reduction_stores_a_row_result_over_a_dying_row_input():
    # The GEMM's column dies at the softmax kernel, which reads its element x only on row x and only for the
    # row result it stores there (lowering/reduction.py's overwrites): that result takes its buffer.
    x, w, y = torch.randn(1024, 16), torch.randn(16, 1), torch.randn(1024, 32)  # two programs of rows interpreted

    def f(x, w, y):
        a = (x @ w).squeeze(-1)
        return y.softmax(-1) * 2, y.sum(-1) * 0.5 + a

    cm = mlirfuse.compile(Lambda(f), (x, w, y))
    gemm = next(s.outs[0] for s in cm.program.steps if s.name.startswith("fused_matmul"))
    rows = next(i for i, s in enumerate(cm.program.steps) if s.name.startswith("fused_amax"))
    assert cm.program.plan.reuse == {rows: {0: cm.program.steps[rows].args.index(("slot", gemm))}}
    for actual, expected in zip(cm(x, w, y), f(x, w, y)):
        torch.testing.assert_close(actual, expected)
