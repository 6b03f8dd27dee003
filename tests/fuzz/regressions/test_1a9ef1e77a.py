"""Fuzz regression (div-trunc-negative-zero): mismatch: signed-zero

Found by `bench/fuzz.py` (seed 100055), shrunk automatically.
output 2: a zero's sign differs from eager
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1):
        v4 = torch.exp2(x1)
        v6 = torch.div(v4, x1, rounding_mode='trunc')
        v7 = torch.tanh(v6)
        return (v7,)


def make_inputs():
    g = torch.Generator().manual_seed(471430460)
    x1 = (torch.randn([1, 2], generator=g) * 2).to(torch.bfloat16)
    return (x1,)
'''


def test_1a9ef1e77a():
    assert_matches_eager(SOURCE)
