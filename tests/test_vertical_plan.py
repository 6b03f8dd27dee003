"""fusion-fuse-vertical planned on the unwrapped ops and built once (passes/vertical_plan.py, issue 20 line 2).

The plan replays the greedy's sweeps on records of the would-be groups and
builds each final group once; the output must be the text the wraps and
merges make (up to the copies of a constant in one body: the plan clones
one per value, as fusion-canonicalize's CSE leaves them), on models (an LSTM's steps, a GPT-2 block, views absorbed
into their readers, one view twice in a body, a GEMM's residual epilogue, a cycle refused, tight
limits) and on every lit input, and a case it does not take (a scan) must
fall back to the rewrites.
"""

from __future__ import annotations

import glob
import os

import pytest
import torch
from test_siblings_at_once import LSTMSteps
from torch import nn

import mlirfuse
from mlirfuse.dialect import make_context
from mlirfuse.frontend.importer import import_module
from mlirfuse.ir import ir
from mlirfuse.passes import STAGES, fuse_vertical, vertical_plan
from mlirfuse.passes.pipeline import build_pass_manager

LIT = os.path.join(os.path.dirname(__file__), os.pardir, "test", "lit")
_NAMES = [s.name for s in STAGES if s.name != "fusion-explain-unfused"]
UP_TO_VERTICAL = "builtin.module(" + ",".join(_NAMES[: _NAMES.index("fusion-fuse-vertical") + 1]) + ")"


class Block(nn.Module):
    """A pre-norm transformer block: layer norms (reductions with prologue and epilogue), residuals, GELU."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        q, k, v = self.qkv(self.n1(x)).chunk(3, dim=-1)
        a = torch.softmax(q @ k.transpose(-1, -2) / 4.0, dim=-1) @ v
        h = x + self.o(a)
        return h + self.down(nn.functional.gelu(self.up(self.n2(h))))


class SlicedBias(nn.Module):
    """Slices of a parameter (views with constant arguments) read by pointwise chains: absorbed into each."""

    def __init__(self):
        super().__init__()
        self.b = nn.Parameter(torch.randn(32))

    def forward(self, x):
        return torch.tanh(x + self.b[:16]) * torch.sigmoid(x - self.b[16:]) + self.b[:16].exp()


class Cycle(nn.Module):
    """`y` feeds a GEMM whose result comes back into y's consumer: merging y's group into it would be a cycle."""

    def forward(self, x):
        y = torch.exp(x)
        return torch.relu(y * (y @ x))


class ViewedTwice(nn.Module):
    """One view read by a mean and by the sub after it: each group absorbs it, and they merge (a body holding it twice,
    the second read by the sub)."""

    def forward(self, x):
        v = x.view(2, 2, 18)
        return v - v.mean(-1, keepdim=True)


class Scan(nn.Module):
    """A cumulative sum: a scan group, which the plan leaves to the rewrites."""

    def forward(self, x):
        return torch.cumsum(torch.exp(x), dim=-1) * 2.0


CASES = {
    "lstm": (LSTMSteps, (3, 1, 16), True),
    "transformer block": (Block, (2, 8, 16), True),
    "sliced bias": (SlicedBias, (4, 16), True),
    "cycle": (Cycle, (8, 8), True),
    "view read twice": (ViewedTwice, (2, 4, 9), True),
    "scan": (Scan, (4, 16), False),
}


def _run(text: str, pipeline: str, planned: bool, monkeypatch) -> tuple[str, int]:
    """The module text after `pipeline`, planned or by the rewrites, and how many times a plan was taken."""
    taken = []
    plan = vertical_plan.plan

    def counted(*a):
        found = plan(*a)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(fuse_vertical, "plan", counted)
    monkeypatch.setattr(fuse_vertical, "PLANNED", [planned])
    with make_context() as ctx:
        module = ir.Module.parse(text)
        build_pass_manager(pipeline, ctx).run(module.operation)
        _merge_equal_constants(module.operation)
        return str(module), sum(taken)


def _merge_equal_constants(module) -> None:
    """In each group body, a constant (or list of constants) equal to an earlier one read as that one, and
    erased: the plan clones one per value into a body, the rewrites' merges keep a copy per op they joined
    (until fusion-canonicalize's CSE), which is all that tells the two texts apart."""

    def visit(op):
        if op.name != "fusion.group":
            return ir.WalkResult.ADVANCE
        first = {}
        for inner in list(op.regions[0].blocks[0].operations):
            name = inner.operation.name
            if name.startswith("torch.constant."):
                key = (name, str(inner.operation.attributes))
            elif name == "torch.prim.ListConstruct":
                key = (name, tuple(inner.operands), str(inner.results[0].type))
            else:
                continue
            if key in first:
                inner.results[0].replace_all_uses_with(first[key].results[0])
                inner.operation.erase()
            else:
                first[key] = inner
        return ir.WalkResult.SKIP

    module.walk(visit, ir.WalkOrder.PRE_ORDER)


@pytest.mark.parametrize("case", list(CASES))
def test_planned_groups_are_the_rewrites_groups(case, monkeypatch):
    make, shape, expect_plan = CASES[case]
    torch.manual_seed(0)
    text = str(import_module(make().eval(), (torch.randn(*shape),)).module)
    for pipeline in ("builtin.module(mlirfuse-pipeline)", UP_TO_VERTICAL):
        planned, taken = _run(text, pipeline, True, monkeypatch)
        rewritten, _ = _run(text, pipeline, False, monkeypatch)
        assert planned == rewritten
        assert taken == (1 if expect_plan else 0)
    if expect_plan:
        assert '"fusion.group"' in _run(text, UP_TO_VERTICAL, True, monkeypatch)[0]


@pytest.mark.parametrize("options", ["max-args=6", "max-group-size=3", "max-args=4 max-group-size=2"])
def test_planned_groups_respect_the_limits_as_the_rewrites_do(options, monkeypatch):
    torch.manual_seed(0)
    texts = [str(import_module(make().eval(), (torch.randn(*shape),)).module) for make, shape, _ in
             (CASES["lstm"], CASES["transformer block"])]
    pipeline = UP_TO_VERTICAL.replace("fusion-fuse-vertical", "fusion-fuse-vertical{" + options + "}")
    for text in texts:
        planned, taken = _run(text, pipeline, True, monkeypatch)
        assert taken == 1
        assert planned == _run(text, pipeline, False, monkeypatch)[0]


def test_planned_groups_on_every_lit_input(monkeypatch):
    """Each lit input (each split of a split-input-file test) through the pipeline up to fusion-fuse-vertical."""
    compared = taken = 0
    for path in sorted(glob.glob(os.path.join(LIT, "**", "*.mlir"), recursive=True)):
        text = open(path).read()
        for chunk in text.split("// -----") if "split-input-file" in text else [text]:
            try:
                rewritten, _ = _run(chunk, UP_TO_VERTICAL, False, monkeypatch)
            except Exception:  # an input of a diagnostics test, or one for other passes alone
                continue
            planned, plans = _run(chunk, UP_TO_VERTICAL, True, monkeypatch)
            assert planned == rewritten, path
            compared += 1
            taken += plans
    assert compared > 300 and taken > 200, (compared, taken)


@pytest.mark.parametrize("make, shape", [(SlicedBias, (4, 16)), (Cycle, (8, 8)), (Block, (2, 8, 16))])
def test_planned_groups_match_eager(make, shape):
    torch.manual_seed(0)
    model, x = make().eval(), torch.randn(*shape)
    cm = mlirfuse.compile(model, (x,))
    torch.testing.assert_close(cm(x), model(x), rtol=1e-4, atol=1e-4)
