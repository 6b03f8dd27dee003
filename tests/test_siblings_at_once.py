"""Sibling GEMMs grouped in one build (fusion-fuse-matmul, issue 20 line 2).

GEMMs reading the same A (an LSTM step's gate slices of x_t and of h, q/k/v,
SwiGLU's gate and up) used to be wrapped one by one and merged pairwise;
`siblings_at_once` answers the same legality questions about the
unwrapped GEMMs and `FusionRewriter.wrap_siblings` builds each merged group
once. The pipeline's output must be the same text either way, including
where an op between two siblings reads the first (it moves after the
group), and where one sibling reads another (the pairwise path decides).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.dialect import make_context
from mlirfuse.frontend.importer import import_module
from mlirfuse.ir import ir
from mlirfuse.passes import fuse_matmul
from mlirfuse.passes.pipeline import build_pass_manager


class LSTMSteps(nn.Module):
    """An unrolled LSTM cell: per step 8 gate GEMMs after fusion-chunk-motion, 4 on x_t and 4 on h."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.ih, self.hh = nn.Linear(d, 4 * d), nn.Linear(d, 4 * d, bias=False)

    def forward(self, x):
        h = c = torch.zeros_like(x[0])
        for t in range(x.shape[0]):
            i, f, g, o = (self.ih(x[t]) + self.hh(h)).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
        return h


class QKV(nn.Module):
    """Three projections of one normalized input, then a softmax attention and a SwiGLU MLP (two siblings)."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.gate, self.up, self.down = nn.Linear(d, 32, bias=False), nn.Linear(d, 32, bias=False), nn.Linear(32, d)

    def forward(self, x):
        h = self.norm(x)
        q, k, v = self.q(h), self.k(h), self.v(h)
        a = torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
        return a + self.down(nn.functional.silu(self.gate(a)) * self.up(a))


class ReaderBetween(nn.Module):
    """An op the fuser leaves alone (a matrix-vector product) reads the first sibling before the second is computed."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.w1, self.w2 = nn.Parameter(torch.randn(d, d)), nn.Parameter(torch.randn(d, d))
        self.vec = nn.Parameter(torch.randn(d))

    def forward(self, x):
        y1 = x @ self.w1
        s = y1 @ self.vec
        y2 = x @ self.w2
        return torch.relu(y1 + y2) * s[:, None]


class SiblingsOfAGemm(nn.Module):
    """A GEMM chain whose last two GEMMs share the second's result as A: by the time those siblings are built,
    the GEMMs they read are groups (fuzz seed 71200059 crashed building them from values read before)."""

    def __init__(self):
        super().__init__()
        self.w2, self.w4 = nn.Parameter(torch.randn(5, 8)), nn.Parameter(torch.randn(5, 4))
        self.w6, self.w7 = nn.Parameter(torch.randn(4, 4)), nn.Parameter(torch.randn(4, 4))

    def forward(self, x):
        v5 = nn.functional.linear(x, self.w2) @ self.w4
        return nn.functional.silu(nn.functional.linear(v5, self.w6)) * nn.functional.linear(v5, self.w7)


class SiblingReadsSibling(nn.Module):
    """The second GEMM on x reads the first's result as its B: not siblings the fast path may build at once."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d))

    def forward(self, x):
        y1 = x @ self.w
        y2 = x @ y1
        return y1 + y2


CASES = {
    "lstm": (LSTMSteps, lambda: (torch.randn(3, 1, 16),)),
    "qkv and swiglu": (QKV, lambda: (torch.randn(2, 8, 16),)),
    "reader between": (ReaderBetween, lambda: (torch.randn(16, 16),)),
    "sibling reads sibling": (SiblingReadsSibling, lambda: (torch.randn(16, 16),)),
    "siblings of a gemm": (SiblingsOfAGemm, lambda: (torch.randn(1, 3, 8, 8),)),
}


def _pipeline_text(module_text: str) -> str:
    with make_context() as ctx:
        module = ir.Module.parse(module_text)
        build_pass_manager("builtin.module(mlirfuse-pipeline)", ctx).run(module.operation)
        return str(module)


def _fast_and_declined(case: tuple, planner: str, built, monkeypatch) -> tuple[str, str, list]:
    """The pipeline's text of `case`'s model with `fuse_matmul.<planner>` as it is and answering None (the old path
    decides), and what `built(answer)` said of each answer (None where it declined)."""
    make, inputs = case
    torch.manual_seed(0)
    model, args = make().eval(), inputs()
    text = str(import_module(model, args).module)
    calls = []
    plan = getattr(fuse_matmul, planner)

    def counted(*a, **k):
        answer = plan(*a, **k)
        calls.append(None if answer is None else built(answer))
        return answer

    monkeypatch.setattr(fuse_matmul, planner, counted)
    fast = _pipeline_text(text)
    monkeypatch.setattr(fuse_matmul, planner, lambda *a, **k: None)
    return fast, _pipeline_text(text), calls


@pytest.mark.parametrize("case", list(CASES))
def test_siblings_built_at_once_match_pairwise_merges(case, monkeypatch):
    fast, pairwise, calls = _fast_and_declined(
        CASES[case], "siblings_at_once", lambda plans: sum(len(p.members) > 1 for p in plans), monkeypatch)
    assert fast == pairwise
    if case == "sibling reads sibling":
        assert calls == [None]  # refused up front: the pairwise merges decide
    else:
        assert calls and calls[0], calls  # at least one set of siblings built at once
        assert '"fusion.group"' not in fast  # outlined: every group became a launch


@pytest.mark.parametrize("make, shape", [(ReaderBetween, (16, 16)), (SiblingsOfAGemm, (1, 3, 8, 8))])
def test_siblings_built_at_once_match_eager(make, shape):
    torch.manual_seed(0)
    model, x = make().eval(), torch.randn(*shape)
    cm = mlirfuse.compile(model, (x,))
    torch.testing.assert_close(cm(x), model(x), rtol=1e-4, atol=1e-4)


class SumsAndReaders(nn.Module):
    """GEMMs over one result space summed by one group (`x @ w1 + h @ w2`: a merge `pairs_at_once` makes certain), a
    GEMM read alone, and `shared`: one group reading three GEMM groups (more than one partner: the merges decide)."""

    def __init__(self, d: int = 16, shared: bool = False):
        super().__init__()
        self.w1, self.w2, self.w3 = (nn.Parameter(torch.randn(d, d)) for _ in range(3))
        self.shared = shared

    def forward(self, x, h):
        a = torch.relu(x @ self.w1 + h @ self.w2)
        if self.shared:
            return torch.tanh(a @ self.w1 + x @ self.w2 + h @ self.w3)
        return torch.tanh(a @ self.w3)


PAIR_CASES = {
    **CASES,
    "sum and a single": (SumsAndReaders, lambda: (torch.randn(16, 16), torch.randn(16, 16))),
    "three read by one": (lambda: SumsAndReaders(shared=True), lambda: (torch.randn(16, 16), torch.randn(16, 16))),
}


@pytest.mark.parametrize("case", list(PAIR_CASES))
def test_epilogues_built_at_once_match_merges(case, monkeypatch):
    """GEMM groups built with their epilogue at once (`epilogues_at_once`): the same text as built and merged."""
    fast, merged, calls = _fast_and_declined(
        PAIR_CASES[case], "epilogues_at_once", lambda entries: sum(e.consumer is not None for e in entries), monkeypatch)
    assert fast == merged
    # lstm: each step's cell; sum and a single: the single GEMM reads the sum's epilogue (its prologue, asked first)
    expected = {"lstm": [3], "sum and a single": [0]}
    if case in expected:
        assert calls == expected[case], calls


@pytest.mark.parametrize("case", list(PAIR_CASES))
def test_pairs_built_at_once_match_merges_for_epilogue(case, monkeypatch):
    """GEMM groups `merge_for_epilogue` would merge, built at once (`pairs_at_once`): the same text as built one by one
    and merged, and an LSTM's x- and h-GEMMs of each step built as one group."""
    fast, merged, calls = _fast_and_declined(
        PAIR_CASES[case], "pairs_at_once", lambda pairs: sum(len(p.plans) == 2 for p in pairs), monkeypatch)
    assert fast == merged
    expected = {"lstm": [3], "sum and a single": [1], "three read by one": [None]}  # lstm: one pair per step
    if case in expected:
        assert calls == expected[case], calls
