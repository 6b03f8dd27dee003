"""The frontend's composite ops decomposed one distinct call at a time (frontend/local_decompositions.py).

`run_decompositions({})` on a whole unrolled program re-traced every node;
`decompose_locally` puts one node per distinct composite call into a small
program and lets `run_decompositions({})` decompose that by torch's own
rules. The imported IR must be the same text either way; programs the
local path cannot take (mutation, dynamic shapes) go the whole way, as
before.
"""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn

import mlirfuse
import mlirfuse.frontend.importer as importer
from mlirfuse.frontend import local_decompositions


class Steps(nn.Module):
    """chunk, .T (numpy_T), matmul: composite calls repeated per step, rows of x differing only by offset."""

    def __init__(self, d: int = 8):
        super().__init__()
        self.w, self.u = nn.Parameter(torch.randn(4 * d, d)), nn.Parameter(torch.randn(4 * d, d))

    def forward(self, x):
        h = c = torch.zeros_like(x[0])
        for t in range(x.shape[0]):
            i, f, g, o = (x[t] @ self.w.T + h @ self.u.T).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
        return h


class Layouts(nn.Module):
    """contiguous of a transposed value, reshape, flatten, dropout in eval, a result that is a decomposed call."""

    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.lin = nn.Linear(12, 12)

    def forward(self, x):
        y = self.drop(self.lin(x)).transpose(0, 1).contiguous()
        z = y.reshape(3, -1).flatten() * 2.0
        return z.reshape(4, 9), y


class TrainingBatchNorm(nn.Module):
    """batch_norm in training writes its running stats, which its schema does not say: only functionalization finds it."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(3))
        self.register_buffer("var", torch.ones(3))

    def forward(self, x):
        return nn.functional.batch_norm(x, self.mean, self.var, training=True, momentum=0.3) * 2


class InPlace(nn.Module):
    def forward(self, x):
        y = x * 2.0
        y.add_(1.0)
        return y.T.contiguous()


def _imported(model, args, local: bool, monkeypatch, **kwargs) -> tuple[str, list]:
    taken = []

    def decompose(program):
        taken.append(local_decompositions.decompose_locally(program) if local else False)
        return taken[-1]

    monkeypatch.setattr(importer, "decompose_locally", decompose)
    text = str(importer.import_module(model, args, **kwargs).module)
    return re.sub(r"loc\(.*?\)", "", text), taken


CASES = {
    "steps": (Steps, lambda: (torch.randn(5, 1, 8),), True),
    "layouts": (Layouts, lambda: (torch.randn(3, 12),), True),
    "in-place": (InPlace, lambda: (torch.randn(3, 4),), False),
    "training batch_norm": (TrainingBatchNorm, lambda: (torch.randn(4, 3, 5),), False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_local_decompositions_import_the_same_ir(case, monkeypatch):
    make, inputs, local = CASES[case]
    torch.manual_seed(0)
    model, args = make().eval(), inputs()
    fast, taken = _imported(model, args, True, monkeypatch)
    whole, _ = _imported(model, args, False, monkeypatch)
    assert taken == [local]
    assert fast == whole
    assert "numpy_T" not in fast and "aten.chunk" not in fast and "aten.contiguous" not in fast
    assert "aten.batch_norm" not in fast


def test_dynamic_shapes_go_the_whole_way(monkeypatch):
    torch.manual_seed(0)
    model, args = Steps().eval(), (torch.randn(3, 2, 8),)
    dims = ({1: torch.export.Dim("batch", min=2, max=16)},)
    fast, taken = _imported(model, args, True, monkeypatch, dynamic_shapes=dims)
    whole, _ = _imported(model, args, False, monkeypatch, dynamic_shapes=dims)
    assert taken == [False]
    assert fast == whole


@pytest.mark.parametrize("make, shape", [(Steps, (4, 1, 8)), (Layouts, (3, 12))])
def test_locally_decomposed_models_match_eager(make, shape):
    torch.manual_seed(0)
    model, x = make().eval(), torch.randn(*shape)
    cm = mlirfuse.compile(model, (x,))
    torch.testing.assert_close(cm(x), model(x), rtol=1e-4, atol=1e-4)
