"""Fuzz regression (process_died_sigsegv): process died: SIGSEGV

Found by `bench/fuzz.py` (seed 3350431), shrunk automatically.
the worker died (SIGSEGV): fusion-keepdim-rows computed `logical_xor(v, v)` of a
squeezed value in the keepdim shape, then erased the squeeze once per operand
reading it (twice: the second touched an erased op). Fixed: each view once.
Run in a child process, so a crash fails the test.
"""

from ..harness import assert_matches_eager_isolated

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x2):
        v4, v5, = torch.max(x2, -1, keepdim=False)
        v9 = torch.logical_xor(v4, v4)
        return (v9,)


def make_inputs():
    g = torch.Generator().manual_seed(244609384)
    x2 = (torch.randn([1, 1], generator=g) * 2).to(torch.float32)
    return (x2,)
'''


def test_7a27553601():
    assert_matches_eager_isolated(SOURCE)
