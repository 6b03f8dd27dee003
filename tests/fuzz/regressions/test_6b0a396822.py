"""Fuzz regression (tanh-formula): mismatch: value (float32)

Found by `bench/fuzz.py` (seed 100422), shrunk automatically.
output 1: Tensor-likes are not close!  Mismatched elements: 2 / 5 (40.0%) Greatest absolute difference: 5.6862831115722656e-05 at index (0, 2) (up to 1e-05 allowed)
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1):
        v2 = torch.where(x1 > 0, 1e-3, x1)
        v6 = torch.tanh(v2)
        v7 = v6 / v2
        return (v7,)


def make_inputs():
    g = torch.Generator().manual_seed(987469796)
    x1 = (torch.randn([1, 2], generator=g) * 2).to(torch.float32)
    return (x1,)
'''


def test_6b0a396822():
    assert_matches_eager(SOURCE)
