"""fusion-chunk-motion builds a split's pieces again from a tape where it split the same structure before.

`slice_motion.pieces_through` records the first build of each structure and replays it for later splits
of that structure (an unrolled loop's steps). The IR must be the text the build itself makes: each model
below runs the pipeline up to the pass with the tapes and with every split built, and the texts must be
equal, with some pieces replayed (a test that could fail).
"""

from __future__ import annotations

import pytest
import torch
from test_siblings_at_once import LSTMSteps  # each step's gates: a bias add over two GEMMs, chunked in four
from torch import nn

from mlirfuse.dialect import make_context
from mlirfuse.frontend.importer import import_module
from mlirfuse.ir import ir
from mlirfuse.passes import STAGES, chunk_motion, slice_motion
from mlirfuse.passes.pipeline import build_pass_manager


class Alternating(nn.Module):
    """Steps of two structures (a product, a difference), split by sizes; one step adds a value to itself."""

    def __init__(self, d: int = 8):
        super().__init__()
        self.a, self.b = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, 3 * d, bias=False)
        self.d = d

    def forward(self, x):
        h = torch.zeros_like(x[0])
        for t in range(x.shape[0]):
            if t % 3 == 0:
                s = self.a(x[t]) * torch.sigmoid(self.b(h))
            elif t % 3 == 1:
                s = self.a(x[t]) - self.b(h)
            else:
                u = self.a(h)
                s = u + u
            p, q = torch.split(s, [self.d, 2 * self.d], dim=-1)
            h = torch.tanh(p) + q[..., : self.d] * q[..., self.d :]
        return h


class Unbinds(nn.Module):
    """Rows of an elementwise result taken one by one (unbind), step after step."""

    def forward(self, x):
        h = x[0]
        for t in range(x.shape[0]):
            r0, r1, r2, r3 = torch.unbind(torch.exp(x[t]) * h + 1.0, dim=0)
            h = torch.stack([r1, r0, r3, r2]) * 0.5
        return h


MODELS = [
    (LSTMSteps, (torch.randn(5, 2, 16),)),
    (Alternating, (torch.randn(7, 2, 8),)),
    (Unbinds, (torch.randn(4, 4, 8),)),
]


class _Untaped(slice_motion.Motion):
    """A run that builds every split (its tapes forget what they are given)."""

    def __init__(self, matmul_slices: bool):
        super().__init__(matmul_slices)
        self.tapes = _Forgetful()


class _Forgetful(dict):
    def __setitem__(self, key, value):
        pass


def _through_chunk_motion(model, inputs) -> str:
    torch.manual_seed(0)
    text = str(import_module(model().eval(), inputs).module)
    names = [s.name for s in STAGES if s.name != "fusion-explain-unfused"]
    with make_context() as ctx:
        module = ir.Module.parse(text)
        build_pass_manager("builtin.module(" + ",".join(names[: names.index("fusion-chunk-motion") + 1]) + ")", ctx).run(
            module.operation
        )
        return str(module)


@pytest.mark.parametrize("model, inputs", MODELS, ids=[m.__name__ for m, _ in MODELS])
def test_replayed_pieces_are_the_built_ones(model, inputs, monkeypatch):
    replays = []
    replay = slice_motion._Tape.replay

    def counted(self, *args):
        replays.append(self)
        return replay(self, *args)

    monkeypatch.setattr(slice_motion._Tape, "replay", counted)
    taped = _through_chunk_motion(model, inputs)
    assert replays, "no split was built from a tape"
    monkeypatch.setattr(chunk_motion, "Motion", _Untaped)
    replays.clear()
    built = _through_chunk_motion(model, inputs)
    assert not replays
    assert taped == built
    assert "torch.aten.split" not in built and "torch.aten.unbind" not in built
