"""Regressions from issue 9 in the Triton lowering, each against eager PyTorch.

Every case here once gave a wrong answer, a crash, or an out-of-bounds store
(silent in the interpreter, a wild write on a GPU); the out-of-bounds ones are
caught by writing the kernel's outputs into buffers with guard regions.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from helpers import compile_and_compare
from mlirfuse.runtime.kernels import Launcher

# --- concat kernels: pieces one wide along the cat dim ------------------------------------------


def cat_with_transposed(a, b):
    c = a.exp()
    return torch.cat([c, b.t()], dim=0), c


def cat_of_split(a, b):
    return torch.cat(torch.split(a - b, [3, 1], dim=1), dim=1)


@pytest.mark.parametrize(
    "fn, shapes",
    [
        # b.t() is [1,4]: a piece one row wide in a [3,4] iteration space.
        pytest.param(cat_with_transposed, [(3, 4), (4, 1)], id="cat_transposed_one_row"),
        # c is [1,4] and also returned: its own store must stay inside its [1,4] buffer.
        pytest.param(cat_with_transposed, [(1, 4), (4, 3)], id="cat_returned_one_row"),
        pytest.param(cat_with_transposed, [(3, 4), (4, 3)], id="cat_transposed_same_shape"),
        pytest.param(cat_of_split, [(2, 4), (4,)], id="split_cat_broadcast_row"),
        pytest.param(cat_of_split, [(2, 4), (2, 1)], id="split_cat_broadcast_column"),
        pytest.param(cat_of_split, [(2, 4), (2, 4)], id="split_cat_same_shape"),
    ],
)
def test_concat_piece_one_wide(fn, shapes, monkeypatch):
    # The transpose of an input stays outside the kernel (the launch reads it strided).
    cm = compile_and_compare(fn, tuple(torch.randn(s) for s in shapes), fused=False)
    assert any(k.kind == "concat" for k in cm.kernels.values()), cm.mlir
    assert_stores_in_bounds(cm, monkeypatch)


def test_concat_exports_a_lower_rank_value(monkeypatch):
    # e = exp(y) is [4], broadcast into a [3,4] piece and returned: stored once, at its own indices.
    def f(x, y):
        e = y.exp()
        return torch.cat([x + e, x], dim=0), e

    cm = compile_and_compare(f, (torch.randn(3, 4), torch.randn(4)))
    assert_stores_in_bounds(cm, monkeypatch)


GUARD = 64
SENTINEL = 12345


def assert_stores_in_bounds(cm, monkeypatch) -> None:
    """Run every kernel with its outputs in the middle of larger buffers; the margins must stay untouched."""
    margins = []

    def guarded_empty(shape, dtype=None, device=None):
        n = math.prod(shape)
        buffer = torch.full((n + 2 * GUARD,), SENTINEL, dtype=dtype, device=device)
        margins.append((buffer[:GUARD], buffer[GUARD + n :]))
        return buffer[GUARD : GUARD + n].view(shape)

    for kernel in cm.kernels.values():
        inputs = [torch.randn(t.shape).to(getattr(torch, t.dtype)) for t in kernel.inputs]
        launcher = Launcher(kernel)
        with monkeypatch.context() as m:
            m.setattr(torch, "empty", guarded_empty)  # how the launcher allocates outputs
            launcher(*inputs)
    assert margins
    for before, after in margins:
        assert (before == SENTINEL).all() and (after == SENTINEL).all(), "a kernel stored out of bounds"
