"""Fuzz regression (rms-norm-default-eps): mismatch: value (float16)

Found by `bench/fuzz.py` (seed 100689), shrunk automatically.
output 2: Tensor-likes are not close!  Mismatched elements: 1 / 5 (20.0%) Greatest absolute difference: 0.00341796875 at index (4, 0) (up to 1e-05 allowed)
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x2):
        v7 = F.rms_norm(x2, (1,))
        return (v7,)


def make_inputs():
    g = torch.Generator().manual_seed(66277532)
    x2 = (torch.randn([1, 1], generator=g) * 2).to(torch.float16)
    return (x2,)
'''


def test_10f897c432():
    assert_matches_eager(SOURCE)
