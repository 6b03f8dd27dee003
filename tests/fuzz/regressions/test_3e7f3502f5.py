"""Fuzz regression (pow-half-special): mismatch: nan (float16)

Found by `bench/fuzz.py` (seed 100713), shrunk automatically.
output 2: NaN positions differ, first at [0, 0]: got nan, eager 0.0
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x2, x4):
        v5 = x2 @ x4
        v6 = v5.to(torch.float16)
        v7 = torch.pow(v6, -0.5)
        return (v7,)


def make_inputs():
    g = torch.Generator().manual_seed(443061608)
    x2 = (torch.randn([1, 5], generator=g) * 2).to(torch.float16)
    x2.view(-1)[[1]] = torch.tensor([float('inf')], dtype=torch.float16)
    g = torch.Generator().manual_seed(697450867)
    x4 = (torch.randn([5, 1], generator=g) * 2).to(torch.float16)
    return (x2, x4,)
'''


def test_3e7f3502f5():
    assert_matches_eager(SOURCE)
