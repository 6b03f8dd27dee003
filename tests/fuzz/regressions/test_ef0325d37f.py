"""Fuzz regression (rms-norm-default-eps): mismatch: value

Found by `bench/fuzz.py` (seed 100132), shrunk automatically.
output 1: Tensor-likes are not close!  Mismatched elements: 37 / 144 (25.7%) Greatest absolute difference: 0.0078125 at index (1, 2, 0, 2) (up to 1e-05 allowed)
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1):
        v3 = F.rms_norm(x1, (3,))
        return (v3,)


def make_inputs():
    g = torch.Generator().manual_seed(497267816)
    x1 = (torch.randn([1, 1, 3, 3], generator=g) * 2).to(torch.float16)
    return (x1,)
'''


def test_ef0325d37f():
    assert_matches_eager(SOURCE)
