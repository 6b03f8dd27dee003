"""Mutated buffers stored in place by the kernels computing them (issue 22): the write-back copies move nothing.

AOTAutograd's runtime (and `mlirfuse.compile`'s `call_program`) copies each
mutated buffer's new value into the buffer after the call. Where a launch
may store that value in the buffer itself (runtime/liveness.py's plan, the
kernel's `overwrites` pairs from lowering/reduction.py), the copy finds the
same data and ATen's `copy_` returns without moving it. Checked here: the
copies after each call move nothing (source and destination the same data),
the stats count no write-back, and — the point — forward output, every
gradient and the running stats match eager after several steps, including
where a buffer's old value is read elsewhere in the graph or feeds every row
(momentum=None batch norm's `num_batches_tracked`), which must refuse it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensor

import mlirfuse
from mlirfuse.backend import Backend
from mlirfuse.runtime.liveness import plan
from mlirfuse.runtime.program import Step
from helpers import train_side_by_side

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from launches import ResNetBlock  # noqa: E402  (torchvision's BasicBlock, BN statistics drawn)


@pytest.fixture(autouse=True)
def _fresh_dynamo(fresh_dynamo):
    """Every test here may compile through Dynamo: tests/conftest.py's `fresh_dynamo` around each."""


def _same_data(a: torch.Tensor, b: torch.Tensor) -> bool:
    """What ATen's `copy_` checks before it returns without copying (aten/src/ATen/native/Copy.cpp)."""
    return (a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and a.storage_offset() == b.storage_offset()
            and a.shape == b.shape and a.stride() == b.stride() and a.dtype == b.dtype)


@pytest.fixture
def copies(monkeypatch):
    """Every `Tensor.copy_` called from Python while the test runs: (destination shape, moved data?)."""
    calls = []
    original = torch.Tensor.copy_

    def copy_(self, src, *args, **kwargs):
        if not isinstance(self, FakeTensor) and not torch.compiler.is_compiling():  # not Dynamo's tracing
            calls.append((tuple(self.shape), not _same_data(self, src)))
        return original(self, src, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "copy_", copy_)
    return calls


def test_copy_of_the_same_data_moves_nothing():
    # The lever, in ATen itself: a copy from a view of the same data returns before reading it. A source that is
    # another tensor is read (the destination changes), so the check below could fail.
    buffer = torch.zeros(8)
    same = buffer.view(8)
    same.fill_(3.0)
    assert buffer.copy_(same) is buffer and _same_data(buffer, same)
    buffer.copy_(torch.ones(8))
    assert buffer.tolist() == [1.0] * 8


class BatchNorm(nn.Module):
    """Batch norm then ReLU; `momentum=None` averages cumulatively (its factor reads num_batches_tracked)."""

    def __init__(self, c: int = 8, momentum: float | None = 0.1):
        super().__init__()
        self.bn = nn.BatchNorm2d(c, momentum=momentum)
        with torch.no_grad():
            self.bn.running_mean.normal_(0, 0.2)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return torch.relu(self.bn(x))


class CumulativeMean(nn.Module):
    """Batch norm's momentum=None running mean with tensor ops (nn.BatchNorm2d reads the count as a Python float,
    which neither torch.export nor Dynamo traces): every channel's factor reads the step counter."""

    def __init__(self, c: int = 8, momentum=None, centre_on_running: bool = False):
        super().__init__()
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))
        self.register_buffer("running", torch.randn(c) * 0.2)
        self.w = nn.Parameter(torch.rand(c) + 0.5)
        self.centre_on_running = centre_on_running

    def forward(self, x):
        self.count.add_(1)
        factor = 1.0 / self.count
        mean = x.mean((0, 2, 3))
        self.running.mul_(1 - factor).add_(mean * factor)
        centre = self.running if self.centre_on_running else mean
        return (x - centre[None, :, None, None]) * self.w[None, :, None, None]


class ReadsOldStats(BatchNorm):
    """The running mean read before the batch norm updates it, added to the output after."""

    def forward(self, x):
        old = self.bn.running_mean * 2
        return torch.relu(self.bn(x)) + old[None, :, None, None]


class ReadsOldStatsLater(BatchNorm):
    """A copy of the running mean taken before the update, read by a kernel after it (a GEMM's operand)."""

    def forward(self, x):
        old = self.bn.running_mean.clone()
        h = torch.relu(self.bn(x)).mean((2, 3))
        return (h @ torch.outer(old, old))[:, :, None, None] + x


class ReadsNewStats(BatchNorm):
    """The running variance read after the batch norm updated it."""

    def forward(self, x):
        return torch.relu(self.bn(x)) * self.bn.running_var[None, :, None, None]


class TwoNorms(nn.Module):
    """Two batch norms over the same input, sharing nothing else."""

    def __init__(self, c: int = 8, momentum: float | None = 0.1):
        super().__init__()
        self.a, self.b = BatchNorm(c, momentum), BatchNorm(c, momentum)

    def forward(self, x):
        return self.a(x) + self.b(x * 2 + 1)


def _batches(c: int = 8, steps: int = 3, side: int = 5):
    torch.manual_seed(0)
    return [(torch.randn(2, c, side, side) * (i + 1) + i, torch.randn(2, c, side, side)) for i in range(steps)]


def _train(model, copies, **sizes):
    """Train compiled and eager side by side (loss, every gradient, every buffer checked); the backend's
    forward stats and the copies of the steps after the first (compiled by then)."""
    backend = Backend()
    calls = []

    def compile_fn(m):
        compiled = torch.compile(m, backend=backend)

        def step(x):
            first = len(copies)
            out = compiled(x)
            calls.append(copies[first:])
            return out

        return step

    _, ours = train_side_by_side(model, compile_fn, _batches(**sizes))
    assert backend.stats["forward"]["eager_graphs"] == 0, backend.stats
    return backend.stats["forward"], [c for step in calls[1:] for c in step], ours


@pytest.mark.parametrize("cin,cout,stride", [(8, 8, 1), (8, 16, 2)], ids=["basic", "downsample"])
def test_resnet_block_stores_its_running_stats_in_place(cin, cout, stride, copies):
    torch.manual_seed(0)
    backend = Backend()
    batches = [(torch.randn(2, cin, 6, 6) * (i + 1) + i, torch.randn(2, cout, 6 // stride, 6 // stride)) for i in range(3)]
    model = ResNetBlock(cin, cout, stride).train()
    norms = 3 if stride != 1 else 2
    first = []

    def compile_fn(m):
        compiled = torch.compile(m, backend=backend)

        def step(x):
            first.append(len(copies))
            return compiled(x)

        return step

    _, ours = train_side_by_side(model, compile_fn, batches)
    assert ours.bn1.num_batches_tracked.item() == 3
    forward = backend.stats["forward"]
    assert (forward["writebacks"], forward["writeback_bytes"]) == (0, 0), forward
    # AOTAutograd's copies after the second and third steps: running mean, variance and counter per batch norm,
    # each from the same data (the first step's run while compiling, under Dynamo).
    written = [moved for shape, moved in copies[first[1]:] if shape in ((), (cout,))]
    assert len(written) == 2 * 3 * norms and not any(written), copies


@pytest.mark.parametrize("centre_on_running", [False, True], ids=["centred_on_the_batch", "centred_on_running"])
def test_a_value_other_rows_or_results_read_stays_out_of_place(centre_on_running, copies):
    # Every channel's factor reads the counter: the kernel may not store the new count over it (a row run after
    # row 0 stored it would read the new count). The running mean, read by its own row only, goes in place,
    # unless the output reads it too (another thread of the row may load it after the store).
    # 16 channels of 2 x 32 x 32: two programs of 8 rows under the interpreter, the second run after the first
    # stored its rows (and the counter).
    model = CumulativeMean(16, centre_on_running=centre_on_running).train()
    forward, calls, ours = _train(model, copies, c=16, side=32)
    assert ours.count.item() == 3
    out_of_place = [()] + ([(16,)] if centre_on_running else [])
    assert forward["writebacks"] == len(out_of_place), forward
    moved = [shape for shape, moved in calls if moved]
    assert moved == out_of_place * 2, calls  # in each of the last two steps
    # One reduction kernel computes them all (so the refusal is the kernel's).
    torch._dynamo.reset()
    with torch.no_grad():
        cm = mlirfuse.compile(CumulativeMean(16, centre_on_running=centre_on_running), (torch.randn(2, 16, 32, 32),))
    (launcher,) = cm.program._launchers.values()
    running = next(j for j, t in enumerate(launcher.kernel.outputs) if t.shape == (16,))
    assert [j for j, _ in launcher.in_place] == ([] if centre_on_running else [running]), launcher.in_place


@pytest.mark.parametrize("model", [ReadsOldStats, ReadsOldStatsLater, ReadsNewStats, TwoNorms], ids=lambda m: m.__name__)
def test_buffers_read_elsewhere_in_the_forward_match_eager(model, copies):
    forward, calls, _ = _train(model(), copies)
    # Nothing read after its update is overwritten: whatever the plan chose, the numbers above matched eager.
    assert forward["writebacks"] == sum(moved for _, moved in calls) // 2, (forward, calls)


def test_eval_mode_writes_nothing_back(copies):
    forward, calls, _ = _train(BatchNorm().eval(), copies)
    assert forward["writebacks"] == 0 and calls == [], (forward, calls)


@pytest.mark.parametrize("model,momentum", [
    (BatchNorm, 0.1), (BatchNorm, 0.5), (CumulativeMean, None), (ReadsOldStats, 0.1), (ReadsOldStatsLater, 0.1),
    (ReadsNewStats, 0.1), (TwoNorms, 0.1),
], ids=lambda m: getattr(m, "__name__", str(m)))
def test_compile_api_stores_running_stats_in_place(model, momentum, copies):
    torch.manual_seed(0)
    eager, ours = model(momentum=momentum), model(momentum=momentum)
    ours.load_state_dict(eager.state_dict())
    eager.train(), ours.train()
    batches = [x for x, _ in _batches()]
    cm = mlirfuse.compile(ours, (batches[0],))
    del copies[:]
    for x in batches:
        with torch.no_grad():
            torch.testing.assert_close(cm(x), eager(x), rtol=1e-4, atol=1e-5)
    for (name, b), c in zip(eager.named_buffers(), ours.buffers()):
        torch.testing.assert_close(c, b, rtol=1e-4, atol=1e-5, msg=lambda m, n=name: f"buffer {n}: {m}")
    moved = sum(m for _, m in copies)
    assert cm.stats["writebacks"] * len(batches) == moved, (cm.stats, copies)
    if model in (BatchNorm, CumulativeMean):
        assert cm.stats["writebacks"] == (1 if model is CumulativeMean else 0), cm.stats


class Shifted(nn.Module):
    """A running sum updated from an input, which a caller may pass the buffer itself as."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(4, 8))

    def forward(self, x, y):
        self.total.add_(x.sum(-1))
        return y * 2


def test_compile_api_copies_a_buffer_an_input_shares():
    # `cm(x, model.total)`: y is the buffer itself. Eager reads y before the update's copy... as a functional
    # program does: the new total goes to a copy of the buffer, then is copied back, y read as it came in.
    torch.manual_seed(0)
    x = torch.randn(4, 8, 16)
    eager, ours = Shifted(), Shifted()
    cm = mlirfuse.compile(ours, (x, torch.randn(4, 8)))
    assert cm.program.arguments_written_in_place, cm.program.plan
    for _ in range(2):
        y_eager, y_ours = eager.total.clone(), ours.total.clone()
        expected = eager(x, y_eager)
        got = cm(x, ours.total)
        torch.testing.assert_close(got, y_ours * 2)
        torch.testing.assert_close(ours.total, eager.total)
        torch.testing.assert_close(expected, got)


@pytest.mark.parametrize("case", ["read_later", "returned", "result_twice", "result_viewed", "other_argument"])
def test_the_plan_refuses_a_written_back_argument(case):
    # Slot 0 is an argument the caller overwrites with result position 0 after the call; step 0 (a launch
    # allowing output 0 over operand 0) computes it. Each case keeps one reason to refuse.
    launch = Step(None, [("slot", 0), ("slot", 1)], {}, [2], "launch", "k0", reusable=((0, 0),))
    later = {
        "read_later": [Step(None, [("slot", 0)], {}, [3], "launch", "k1")],
        "result_viewed": [Step(None, [("slot", 2)], {}, [3], "aten", "torch.aten.t", view=True)],
    }.get(case, [])
    returns = [("slot", 2)] + {
        "read_later": [("slot", 3)], "returned": [("slot", 0)], "result_twice": [("slot", 2)],
        "result_viewed": [("slot", 3)],
    }.get(case, [])
    written_back = {0: 1 if case == "other_argument" else 0}  # (an argument the result is not copied into)
    bytes_ = {2: 64, 3: 64}
    refused = plan([launch, *later], returns, 2, 4, bytes_, written_back=written_back)
    assert refused.reuse == {} and refused.stored_in_place == frozenset()
    # ... and without the reason it is stored in place: the test can fail.
    fine = plan([launch], [("slot", 2)], 2, 4, bytes_, written_back={0: 0})
    assert fine.reuse == {0: {0: 0}} and fine.stored_in_place == {0}
