"""Models that update state behave as in eager: train-mode BatchNorm, a step counter, a KV cache, aliased outputs.

Each model runs through `mlirfuse.compile` and `torch.compile(backend="mlirfuse")`.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.backend import backend
from helpers import discover_dynamo_backends


@pytest.fixture(scope="module", autouse=True)
def _entry_point(tmp_path_factory):
    discover_dynamo_backends(tmp_path_factory.mktemp("entry-points"))


@pytest.fixture(autouse=True)
def _fresh_dynamo(fresh_dynamo):
    """Every test here compiles through Dynamo: tests/conftest.py's `fresh_dynamo` around each."""


def _mlirfuse(model, example):
    return mlirfuse.compile(model, example)


def _dynamo(model, example):
    return torch.compile(model, backend="mlirfuse")


COMPILERS = pytest.mark.parametrize("compile_fn", [_mlirfuse, _dynamo], ids=["mlirfuse.compile", "torch.compile"])


def _run_side_by_side(model, compile_fn, inputs_per_step):
    """Call eager and compiled copies on the same inputs; outputs and every buffer must match after each step."""
    eager, ours = model, copy.deepcopy(model)
    compiled = compile_fn(ours, inputs_per_step[0])
    for step, inputs in enumerate(inputs_per_step):
        with torch.no_grad():
            expected = eager(*inputs)
            actual = compiled(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
        torch.testing.assert_close(actual, expected, msg=lambda m: f"step {step}: {m}")
        for (name, b), c in zip(eager.named_buffers(), ours.buffers()):
            torch.testing.assert_close(c, b, msg=lambda m, n=name: f"step {step} buffer {n}: {m}")
    # Under torch.compile every graph was compiled, none fell back to eager.
    assert [r.eager_reason for r in backend.graphs if r.graph is None] == []
    return eager, ours


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


@COMPILERS
def test_batch_norm_train_mode_running_stats(compile_fn):
    steps = [(torch.randn(2, 3, 5, 5) * (i + 1) + i,) for i in range(3)]
    _, ours = _run_side_by_side(ConvBN().train(), compile_fn, steps)
    assert ours.bn.num_batches_tracked.item() == 3
    assert not torch.equal(ours.bn.running_mean, torch.zeros(4))


class StepCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("step", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.step += 1
        return torch.sigmoid(x) * self.step


@COMPILERS
def test_step_counter_buffer(compile_fn):
    _, ours = _run_side_by_side(StepCounter(), compile_fn, [(torch.randn(4, 8),)] * 3)
    assert ours.step.item() == 3


class KVCache(nn.Module):
    """One decoding step: write the new key by index_copy_, the value by slice assignment, the query by copy_."""

    def __init__(self, length: int = 6, d: int = 4):
        super().__init__()
        self.register_buffer("k", torch.zeros(1, length, d))
        self.register_buffer("v", torch.zeros(1, length, d))
        self.register_buffer("last_q", torch.zeros(1, 1, d))

    def forward(self, q, k, v, pos):
        self.k.index_copy_(1, pos, k)
        self.v[:, 2:4] = v
        self.last_q.copy_(q)
        scores = torch.softmax(q @ self.k.transpose(1, 2), dim=-1)
        return scores @ self.v


@COMPILERS
def test_kv_cache_writes(compile_fn):
    steps = [
        (torch.randn(1, 1, 4), torch.randn(1, 2, 4), torch.randn(1, 2, 4), torch.tensor([2 * i, 2 * i + 1]))
        for i in range(3)
    ]
    _, ours = _run_side_by_side(KVCache(), compile_fn, steps)
    assert ours.k.abs().sum(-1).ne(0).all()


class AddInPlace(nn.Module):
    def forward(self, x, y):
        x.add_(y)
        return x, y.view(-1), torch.relu(y) * 2


@COMPILERS
def test_input_mutation_and_output_aliasing(compile_fn):
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    expected = AddInPlace()(x.clone(), y)
    compiled = compile_fn(AddInPlace(), (x.clone(), y))
    ours_x = x.clone()
    out = compiled(ours_x, y)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(ours_x, x + y)  # the input is mutated, as in eager
    if compile_fn is _mlirfuse:
        # As eager: the first output is the input itself, the second a view of `y`.
        assert out[0] is ours_x
        assert out[1].data_ptr() == y.data_ptr()
    else:
        assert out[0].data_ptr() == ours_x.data_ptr() and out[1].data_ptr() == y.data_ptr()
