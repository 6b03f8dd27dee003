"""A cat along a GEMM operand's K dim read by K-split (issue 22): the cat is never stored, each piece is read by a K loop of its own.

Against eager in f32, f16 and bf16. Piece widths are not multiples of any
BLOCK_K (the interpreter's is up to 128, sm_80/sm_90's 32), and one piece
is wider than 128, so a piece takes several K steps and a step ends inside
a piece. The limits (a cat read elsewhere too, along rows, or computed on
by a value varying along K after the cat) stay two kernels, correct, with
the reason named.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from helpers import Lambda

TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2),
}
DTYPES = pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=["f32", "f16", "bf16"])


class LSTMStep(torch.nn.Module):
    """One LSTM step as models write it: one Linear over cat([x, h]), its gates by chunk."""

    def __init__(self, inputs: int = 16, hidden: int = 32):
        super().__init__()
        self.lin = torch.nn.Linear(inputs + hidden, 4 * hidden)

    def forward(self, x, h, c):
        i, f, g, o = self.lin(torch.cat([x, h], dim=-1)).chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


def _rand(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


def _compiled(fn, inputs, dtype=torch.float32, **options):
    """`fn` compiled, checked against eager; the compiled module."""
    model = fn if isinstance(fn, torch.nn.Module) else Lambda(fn)
    with torch.no_grad():
        expected = model(*inputs)
    cm = mlirfuse.compile(model, inputs, **options)
    torch.testing.assert_close(cm(*inputs), expected, **TOL[dtype])
    return cm


def _reasons(cm) -> list[str]:
    return [r for rs in cm.explain().values() for r in rs]


@DTYPES
def test_lstm_step_over_a_cat_is_one_launch(dtype):
    model = LSTMStep().to(dtype)
    inputs = (_rand(4, 16, dtype=dtype), _rand(4, 32, dtype=dtype), _rand(4, 32, dtype=dtype))
    cm = _compiled(model, inputs, dtype)
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, cm.stats
    source = next(iter(cm.kernels.values())).source
    assert "K-split: a cat operand is read piece by piece, one K loop each: [0, 16), [16, 48)." in source
    # Each piece is read once and the cat never written: the bytes are the lower bound's.
    assert cm.stats["bytes"] == cm.stats["bytes_lower_bound"], cm.stats


@pytest.mark.parametrize("steps", [3])
def test_unrolled_lstm_over_cats_is_one_launch_per_step(steps):
    step = LSTMStep(inputs=24, hidden=20)  # no block divides 20, 24 or 44

    def unrolled(xs, h, c):
        for t in range(steps):
            h, c = step(xs[t], h, c)
        return h, c

    inputs = (_rand(steps, 2, 24), _rand(2, 20), _rand(2, 20))
    cm = _compiled(unrolled, inputs)
    assert cm.stats["launches"] == steps and cm.stats["unfused_ops"] == 0, cm.stats


@DTYPES
def test_uneven_pieces_wider_than_a_block(dtype):
    # 3 + 130 + 61 = 194: the 130-wide piece takes two K steps of 128 in the interpreter.
    inputs = (_rand(6, 3, dtype=dtype), _rand(6, 130, dtype=dtype), _rand(6, 61, dtype=dtype), _rand(20, 194, dtype=dtype) * 0.1)
    cm = _compiled(lambda x, h, z, w: F.linear(torch.cat([x, h, z], -1), w), inputs, dtype)
    assert cm.stats["launches"] == 1, cm.stats
    assert "[0, 3), [3, 133), [133, 194)" in next(iter(cm.kernels.values())).source


@DTYPES
def test_computed_pieces_and_a_batched_input(dtype):
    # Three pieces, two computed (tanh, scale) on the pieces' tiles; x is 3-d (rows 2 x 3).
    def f(x, h, w, b):
        return torch.relu(F.linear(torch.cat([x, torch.tanh(h), h * 2], -1), w, b))

    inputs = (_rand(2, 3, 7, dtype=dtype), _rand(2, 3, 9, dtype=dtype), _rand(11, 25, dtype=dtype), _rand(11, dtype=dtype))
    cm = _compiled(f, inputs, dtype)
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, cm.stats


def test_mm_bmm_and_a_broadcast_piece():
    cases = [
        (lambda a, b, w: torch.cat([a, b], 1) @ w, (_rand(5, 7), _rand(5, 9), _rand(16, 13))),
        (lambda a, b, c: torch.bmm(torch.cat([a, b], -1), c), (_rand(3, 5, 7), _rand(3, 5, 9), _rand(3, 16, 6))),
        (lambda x, b, w: F.linear(torch.cat([x, b.expand(5, 9)], -1), w), (_rand(5, 7), _rand(1, 9), _rand(11, 16))),
        (lambda h, w: F.linear(torch.cat([h, h], -1), w), (_rand(5, 9), _rand(11, 18))),
        # A piece of a narrower dtype: the cat promotes it (f16 -> f32).
        (lambda x, h, w: F.linear(torch.cat([x, h], -1), w), (_rand(5, 7, dtype=torch.float16), _rand(5, 9), _rand(11, 16))),
    ]
    for fn, inputs in cases:
        cm = _compiled(fn, inputs)
        assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, cm.stats


def test_cats_of_b_along_k_and_of_both_operands():
    # B's K dim: linear's weight [N, K] along its last dim, mm's [K, N] along its first. With both
    # operands cut (at 7 and at 3, 11), the K loop is cut at every boundary: [0, 3), [3, 7), [7, 11), [11, 16).
    cm = _compiled(lambda x, w1, w2: F.linear(x, torch.cat([w1, w2], 1)), (_rand(5, 16), _rand(11, 6), _rand(11, 10)))
    assert cm.stats["launches"] == 1, cm.stats
    both = (_rand(5, 7), _rand(5, 9), _rand(3, 6), _rand(8, 6), _rand(5, 6))
    cm = _compiled(lambda a1, a2, b1, b2, b3: torch.cat([a1, a2], 1) @ torch.cat([b1, b2, b3], 0), both)
    assert cm.stats["launches"] == 1, cm.stats
    assert "[0, 3), [3, 7), [7, 11), [11, 16)" in next(iter(cm.kernels.values())).source


def test_a_cat_beside_another_gemm_in_one_grouped_kernel():
    # Summed GEMMs over different A operands (one loop each), one of them a cat: one kernel.
    def f(x, h, z, w1, w2):
        return F.linear(torch.cat([x, h], -1), w1) + F.linear(z, w2)

    cm = _compiled(f, (_rand(5, 7), _rand(5, 9), _rand(5, 4), _rand(11, 16), _rand(11, 4)))
    assert cm.stats["launches"] == 1, cm.stats


@DTYPES
def test_elementwise_ops_on_the_cat_are_evaluated_per_piece(dtype):
    # relu(cat) * s with s the same along K, and a cast after the cat (autocast's shape of an LSTM step).
    def f(x, h, s, w):
        return F.linear(torch.relu(torch.cat([x, torch.tanh(h)], -1)) * s, w)

    inputs = (_rand(5, 7, dtype=dtype), _rand(5, 9, dtype=dtype), _rand(5, 1, dtype=dtype), _rand(11, 16, dtype=dtype))
    assert _compiled(f, inputs, dtype).stats["launches"] == 1
    inputs = (_rand(5, 7), _rand(5, 9), _rand(11, 16, dtype=dtype))
    cm = _compiled(lambda x, h, w: F.linear(torch.cat([x, h], -1).to(dtype), w), inputs, dtype)
    assert cm.stats["launches"] == 1
    # An integer piece: the cat promotes it, the cast and scale after the cat see the promoted value.
    inputs = (_rand(4, 16), torch.randint(-3, 3, (4, 5)), _rand(11, 21))
    assert _compiled(lambda x, i, w: F.linear(torch.cat([x, i], -1).float() * 0.5, w), inputs).stats["launches"] == 1


def test_a_cat_read_by_several_gemms_is_read_by_each():
    # One cat, three GEMMs over different result shapes (not one grouped kernel): each reads the pieces.
    def f(x, h, w1, w2, w3):
        c = torch.cat([x, h], -1)
        return F.linear(c, w1), c @ w2.t(), torch.relu(F.linear(c, w3))

    cm = _compiled(f, (_rand(4, 7), _rand(4, 9), _rand(11, 16), _rand(5, 16), _rand(3, 16)))
    assert cm.stats["launches"] == 3 and cm.stats["unfused_ops"] == 0, cm.stats

    # Along rows no GEMM reads it piece by piece: one cat kernel both GEMMs read, not a copy each.
    def rows(x, h, w1, w2):
        c = torch.cat([x, h], 0)
        return F.linear(c, w1), F.linear(c, w2)

    cm = _compiled(rows, (_rand(4, 16), _rand(3, 16), _rand(11, 16), _rand(5, 16)))
    assert cm.stats["launches"] == 3, cm.stats


def test_limits_stay_two_kernels_with_the_reason():
    # The cat also returned: stored once by its own kernel, which the GEMM reads.
    both = _compiled(lambda x, h, w: (F.linear(torch.cat([x, h], -1), w), torch.cat([x, h], -1)),
                     (_rand(5, 7), _rand(5, 9), _rand(11, 16)), explain=True)
    assert both.stats["launches"] == 2, both.stats
    # Along rows, not K.
    rows = _compiled(lambda x, h, w: F.linear(torch.cat([x, h], 0), w), (_rand(5, 16), _rand(3, 16), _rand(11, 16)), explain=True)
    assert rows.stats["launches"] == 2, rows.stats
    assert any("cat along dim 0, not the GEMM operand's K dim" in r for r in _reasons(rows)), _reasons(rows)
    # An op on the cat reading a value that varies along K (a piece would need another's coordinates).
    inputs = (_rand(5, 7), _rand(5, 9), _rand(5, 16), _rand(11, 16))
    after = _compiled(lambda x, h, y, w: F.linear(torch.cat([x, h], -1) * y, w), inputs, explain=True)
    assert after.stats["launches"] == 2, after.stats
    assert any("an op on the cat reads a value that varies along K" in r for r in _reasons(after)), _reasons(after)


def test_a_policy_sees_the_ksplit_and_may_veto_it():
    seen = []

    def no_ksplit(c):
        seen.append(c)
        return "policy: no K-split" if c.kind == "ksplit" else None

    inputs = (_rand(4, 16), _rand(4, 32), _rand(4, 32))
    cm = _compiled(LSTMStep(), inputs, policy=no_ksplit, explain=True)
    assert cm.stats["launches"] == 2, cm.stats
    ksplit = [c for c in seen if c.kind == "ksplit"]
    assert ksplit and "torch.aten.cat" in ksplit[0].producer_ops and ksplit[0].consumer_kind == "matmul", seen
    assert ksplit[0].bytes_saved == 2 * 4 * 48 * 4  # the cat, stored once and loaded once
    assert any("policy: no K-split" in r for r in _reasons(cm)), _reasons(cm)
