"""Fuzz regression (tanh-formula): mismatch: signed-zero

Found by `bench/fuzz.py` (seed 100223), shrunk automatically.
output 0: a zero's sign differs from eager
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x2):
        v4 = torch.tanh(x2)
        return (v4,)


def make_inputs():
    g = torch.Generator().manual_seed(72600156)
    x2 = (torch.randn([1, 1, 3], generator=g) * 2).to(torch.float32)
    x2.view(-1)[[0, 1, 2]] = torch.tensor([-0.0, float('-inf'), float('-inf')], dtype=torch.float32)
    return (x2,)
'''


def test_2e5fc04df6():
    assert_matches_eager(SOURCE)
