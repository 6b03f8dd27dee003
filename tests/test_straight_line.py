"""The generated straight-line program (runtime/codegen.py) against `Program.run`, which interprets the same steps.

Each call of a compiled model runs `def call(args):`, one line per launch or
ATen call. It must return the same bits as `run` (numerics also against
eager), hold each value exactly as long as `run` holds it, and stay right when
a later call's inputs have other strides than the first's (the specialization
guards shapes, not strides).
"""

from __future__ import annotations

import ast
import sys

import pytest
import torch
from test_memory import Stack, allocation_peaks
from torch import nn
from torch.export import Dim

import mlirfuse
from mlirfuse.backend import Backend
from mlirfuse.runtime.kernels import DirectLauncher
from helpers import Lambda


def _takes(x, w):
    a = x.exp()  # dies at the matmul, whose result cannot be written over it
    b = (a @ w).sin()
    return (b @ w).cos() + 1.0  # the second GEMM's result takes a's buffer (liveness `take`)


def _gpt2():
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(n_layer=2, n_head=4, n_embd=32, n_positions=16, vocab_size=100, use_cache=False)
    torch.manual_seed(0)
    ids = torch.randint(2, 100, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[0, :3] = 0
    return transformers.GPT2Model(config).eval(), (ids,), {"attention_mask": mask}, {}


def _stack(dedup: bool):
    torch.manual_seed(1)
    return Stack(3).eval(), (torch.randn(2, 8, 32),), {}, {"dedup_layers": dedup}


def _reuse():
    torch.manual_seed(2)
    x, w = torch.randn(16, 32), torch.randn(32, 32) / 32
    return Lambda(_takes), (x, w), {}, {"pipeline": "mlirfuse-pipeline{max-group-size=1}"}


def _dynamic():
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 8), nn.Softmax(-1))
    return model.eval(), (torch.randn(2, 3, 16),), {}, {"dynamic_shapes": ({0: Dim("batch"), 1: Dim("seq")},)}


MODELS = {"gpt2": _gpt2, "stack": lambda: _stack(False), "layers": lambda: _stack(True), "reuse": _reuse,
          "dynamic": _dynamic}


def _call(cm, args, kwargs):
    out = cm(*args, **kwargs)
    return out.last_hidden_state if hasattr(out, "last_hidden_state") else out


@pytest.mark.parametrize("checked", ["0", "1"])
@pytest.mark.parametrize("name", list(MODELS))
def test_results_are_run_s_bit_for_bit(name, checked, monkeypatch):
    # checked=1 (the suite's default) launches through the Launcher's checked path; 0 through the precomputed one.
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", checked)
    model, args, kwargs, options = MODELS[name]()
    with torch.no_grad():
        expected = _call(model, args, kwargs)
    straight = mlirfuse.compile(model, args, kwargs, **options)
    interpreted = mlirfuse.compile(model, args, kwargs, straight_line=False, **options)
    assert straight.program.straight_line and not interpreted.program.straight_line
    calls = [(args, kwargs)]
    if name == "dynamic":
        calls.append(((torch.randn(3, 5, 16),), {}))  # another size, same kernels
    for a, k in calls:
        for _ in range(2):  # the first call prepares each launch, the second runs what it prepared
            ours, theirs = _call(straight, a, k), _call(interpreted, a, k)
            assert torch.equal(ours, theirs), (ours - theirs).abs().max()
    torch.testing.assert_close(_call(straight, args, kwargs), expected, rtol=1e-4, atol=1e-5)
    assert "_generated_call" in vars(straight.program) and "_generated_call" not in vars(interpreted.program)
    if name == "layers":
        assert straight.program.callees and all("_generated_call" in vars(c) for c in straight.program.callees.values())
    if name == "reuse":
        assert straight.program.plan.take and straight.program.plan.reuse
    prepared = [p for k in straight.kernels.values() for launcher in [straight.program._launchers.get(k.name)]
                if launcher is not None for p in launcher.direct._prepared.values() if p is not None]
    if checked == "0" and name != "dynamic":
        assert prepared, "no launch took the precomputed path"
    if checked == "1":
        assert not prepared, "a checked launch took the precomputed path"


def _source_calls(source: str) -> list[str]:
    """The names each statement of `call` calls, per statement after `s0, ... = args; args.clear()`."""
    function = ast.parse(source).body[0]
    assert not any(isinstance(n, (ast.For, ast.While, ast.If)) for n in ast.walk(function)), "not straight-line"
    return [[ast.unparse(c.func) for c in ast.walk(statement) if isinstance(c, ast.Call)] for statement in function.body[2:]]


def test_one_line_per_launch_or_aten_call():
    model, args, kwargs, _ = _gpt2()
    cm = mlirfuse.compile(model, args, kwargs, dedup_layers=False, matmul="aten")  # launches and ATen calls
    source = cm.program_source()
    print(source)
    program = cm.program
    statements = _source_calls(program.generated.source)
    assert all(len(calls) <= 1 for calls in statements)
    globals_ = program.generated.globals
    called = [calls[0] for calls in statements if calls]
    launches = [name for name in called if isinstance(globals_[name], DirectLauncher)]
    assert len(launches) == sum(step.kind == "launch" for step in program.steps) == cm.stats["launches"]
    aten = [name for name in called if name.startswith("aten_")]
    assert len(aten) == sum(step.kind == "aten" for step in program.steps) > 0
    assert len(called) == len(launches) + len(aten) + sum(step.kind == "call" for step in program.steps)
    # Each step's line is where generate says it is.
    lines = source.splitlines()
    for step, line in zip(program.steps, program.generated.step_lines):
        if step.kind == "launch":
            assert f"= {step.name}(" in lines[line - 1], (step.name, lines[line - 1])


def test_a_layer_compiled_once_is_a_function_of_its_own():
    model, args, _, options = _stack(True)
    cm = mlirfuse.compile(model, args, **options)
    (name, callee), = cm.program.callees.items()
    source = cm.program_source()
    assert f"# @{name}\n{callee.generated.source}" in source and source.count("def call(args):") == 2
    globals_ = cm.program.generated.globals
    called = [calls[0] for calls in _source_calls(cm.program.generated.source) if calls]
    assert sum(getattr(globals_[n], "__self__", None) is callee for n in called) == 3  # one line per layer
    torch.testing.assert_close(cm(*args), model(*args))


def _held(values: dict[int, object], skip: set[int], owned: set[int]) -> int:
    """Bytes of the distinct storages the slots in `values` hold, but for slots in `skip` and storages in `owned`."""
    seen = {}
    for slot, v in values.items():
        if isinstance(v, torch.Tensor) and slot not in skip:
            storage = v.untyped_storage()
            if storage.data_ptr() not in owned:
                seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def _held_per_step(cm, args) -> tuple[list[int], list[int]]:
    """Bytes of intermediates held after each step (before its releases): under `run`, and under the generated
    function (its locals, traced)."""
    program = cm.program
    constants = {s for step in program.steps if step.kind == "const" for s in step.outs}

    def arguments():
        arguments = cm.bind(cm._current.imported, list(args))
        return arguments, {a.untyped_storage().data_ptr() for a in arguments if isinstance(a, torch.Tensor)}

    ran = []
    arguments_, owned = arguments()
    program.run(arguments_, lambda i, env: ran.append(_held(dict(enumerate(env)), constants, owned)))
    code = program._generated_call.__code__
    step_of = {line: i for i, line in enumerate(program.generated.step_lines)}
    generated, previous = [], [None]

    def local(frame, event, arg):
        if previous[0] in step_of:  # the step's line has run; its releases have not
            slots = {int(k[1:]): v for k, v in frame.f_locals.items() if k[0] == "s" and k[1:].isdigit()}
            generated.append(_held(slots, constants, owned))
        previous[0] = frame.f_lineno
        return local

    arguments_, owned = arguments()
    sys.settrace(lambda frame, event, arg: local if frame.f_code is code else None)
    try:
        program.execute(arguments_)
    finally:
        sys.settrace(None)
    return ran, generated


@pytest.mark.parametrize("name", ["stack", "reuse", "layers"])
def test_values_are_released_where_run_releases_them(name, monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")
    model, args, kwargs, options = MODELS[name]()
    cm = mlirfuse.compile(model, args, kwargs, **options)
    ran, generated = _held_per_step(cm, args)
    assert len(ran) == len(cm.program.steps) and max(ran) > 0
    assert generated == ran


def test_the_allocator_peak_is_run_s(monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")  # checked launches put guard bytes around every output
    model, args, _, options = _stack(False)
    straight = mlirfuse.compile(model, args, **options)
    interpreted = mlirfuse.compile(model, args, straight_line=False, **options)
    for cm in (straight, interpreted):
        cm(*args)  # loads the kernels, prepares the launches
    ours, theirs = (allocation_peaks(lambda cm=cm: cm(*args)).peak for cm in (straight, interpreted))
    assert 0 < ours <= theirs, (ours, theirs)


def test_inputs_with_other_strides_than_the_first_call_s(monkeypatch):
    # The specialization's key holds shapes, not strides: a launch looks its inputs' strides up per call.
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")

    def f(x, y):
        return (x * 2 + y).exp(), x.sum(-1)

    x, y = torch.randn(8, 16), torch.randn(8, 16)
    cm = mlirfuse.compile(Lambda(f), (x, y))
    for a, b in [(x, y), (x.t().contiguous().t(), y), (x, y[:, :1].expand(8, 16)), (x, y)]:
        for ours, expected in zip(cm(a, b), f(a, b)):
            torch.testing.assert_close(ours, expected)


def test_straight_line_off(monkeypatch):
    x = torch.randn(4, 4)
    f = Lambda(lambda x: (x * 2).exp())
    assert not mlirfuse.compile(f, (x,), straight_line=False).program.straight_line
    monkeypatch.setenv("MLIRFUSE_STRAIGHT_LINE", "0")
    cm = mlirfuse.compile(f, (x,))
    assert not cm.program.straight_line
    torch.testing.assert_close(cm(x), (x * 2).exp())
    assert "_generated_call" not in vars(cm.program)
    assert cm.program_source().startswith("def call(args):")  # viewable either way


def test_the_backend_runs_the_generated_program(fresh_dynamo):
    x = torch.randn(4, 8)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
    for straight_line in (True, False):
        backend = Backend(straight_line=straight_line)
        torch.testing.assert_close(torch.compile(model, backend=backend)(x), model(x))
        program = backend.graphs[0].graph.program
        assert program.straight_line is straight_line
        assert ("_generated_call" in vars(program)) is straight_line


def test_a_failing_line_shows_in_the_traceback(monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")
    x = torch.randn(4, 4)
    cm = mlirfuse.compile(Lambda(lambda x: torch.mm(x, x).exp()), (x,), matmul="aten")
    program = cm.program
    name = next(n for n in program.generated.globals if n.startswith("aten_mm"))
    program._generated_call.__globals__[name] = lambda *a: 1 / 0
    with pytest.raises(ZeroDivisionError) as info:
        cm(x)
    assert any(f"= {name}(" in str(entry.statement) for entry in info.traceback), info.traceback
