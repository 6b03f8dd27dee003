"""Fuzz regression (bool-add): mismatch: value (bool)

Found by `bench/fuzz.py` (seed 100728), shrunk automatically.
output 0: Tensor-likes are not equal!  Mismatched elements: 28 / 60 (46.7%) Greatest absolute difference: 1 at index (0, 0, 0)
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1):
        v2 = x1 + x1
        return (v2,)


def make_inputs():
    g = torch.Generator().manual_seed(546675240)
    x1 = torch.rand([1, 1, 1], generator=g) > 0.5
    return (x1,)
'''


def test_dc237a715b():
    assert_matches_eager(SOURCE)
