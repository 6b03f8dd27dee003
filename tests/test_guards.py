"""Guards of `mlirfuse.compile`: new inputs compile a new specialization, cached and bounded; past the bound, eager."""

from __future__ import annotations

import logging

import pytest
import torch

import mlirfuse
from helpers import Lambda


def _model():
    return Lambda(lambda x, y: torch.relu(x * y) + 1)


def _inputs(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype), torch.randn(*shape).to(dtype)


def test_dtype_change_recompiles_once():
    model = _model()
    cm = mlirfuse.compile(model, _inputs(4, 16))
    x64 = _inputs(4, 16, dtype=torch.float64)
    for _ in range(2):
        out = cm(*x64)
        assert out.dtype == torch.float64
        torch.testing.assert_close(out, model(*x64))
    assert cm.guard_stats == {"compiles": 2, "hits": 1, "eager_calls": 0}
    assert cm.stats["launches"] == 1  # the f64 specialization is fused too


def test_each_shape_keeps_its_specialization():
    model = _model()
    small, big = _inputs(4, 16), _inputs(3, 8, 8)
    cm = mlirfuse.compile(model, small)
    for x in (big, small, big):
        torch.testing.assert_close(cm(*x), model(*x))
    assert cm.guard_stats == {"compiles": 2, "hits": 2, "eager_calls": 0}
    assert len(cm.specializations) == 2


def test_non_contiguous_input_reuses_the_kernels():
    # Launches read strides at run time: a transposed input of the same shape needs no recompile.
    model = _model()
    x, y = _inputs(8, 16)
    cm = mlirfuse.compile(model, (x, y))
    xt = torch.randn(16, 8).t()
    torch.testing.assert_close(cm(xt, y), model(xt, y))
    assert cm.guard_stats["compiles"] == 1


def test_past_the_bound_runs_eagerly_and_warns(caplog):
    model = _model()
    cm = mlirfuse.compile(model, _inputs(2, 4), max_specializations=2)
    second = _inputs(3, 4)
    torch.testing.assert_close(cm(*second), model(*second))
    third = _inputs(5, 4)
    with caplog.at_level(logging.WARNING, logger="mlirfuse"), pytest.warns(
        mlirfuse.RecompileLimitWarning, match=r"max_specializations=2"
    ):
        out = cm(*third)
    torch.testing.assert_close(out, model(*third))
    assert len([r for r in caplog.records if r.name == "mlirfuse"]) == 1
    assert cm.guard_stats["compiles"] == 2 and cm.guard_stats["eager_calls"] == 1
    # Known eager inputs do not warn again; compiled ones still hit.
    torch.testing.assert_close(cm(*third), model(*third))
    assert cm.guard_stats["eager_calls"] == 2
    cm(*_inputs(2, 4))
    assert cm.guard_stats["compiles"] == 2


def test_scalar_argument_is_guarded_by_value():
    model = Lambda(lambda x, s: torch.relu(x) * s)
    x = torch.randn(4, 8)
    cm = mlirfuse.compile(model, (x, 2.0))
    torch.testing.assert_close(cm(x, 3.0), model(x, 3.0))
    torch.testing.assert_close(cm(x, 2.0), model(x, 2.0))
    assert cm.guard_stats["compiles"] == 2


def test_uncompilable_new_inputs_run_eagerly():
    # A wrong number of inputs cannot be exported; eager gives its own (helpful) error.
    cm = mlirfuse.compile(_model(), _inputs(4, 16))
    with pytest.warns(mlirfuse.RecompileLimitWarning, match="failed"), pytest.raises(TypeError):
        cm(torch.randn(4, 16))


def test_strict_raises_on_mismatch():
    cm = mlirfuse.compile(_model(), _inputs(4, 16), strict=True)
    with pytest.raises(mlirfuse.InputMismatchError, match=r"input 0\b.*float64"):
        cm(*_inputs(4, 16, dtype=torch.float64))
    assert cm.guard_stats["compiles"] == 1


def test_bad_bound_is_rejected():
    with pytest.raises(ValueError, match="max_specializations"):
        mlirfuse.compile(_model(), _inputs(4, 16), max_specializations=0)
