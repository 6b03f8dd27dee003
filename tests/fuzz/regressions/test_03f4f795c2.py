"""Fuzz regression (int-to-bf16-nan): mismatch: value (bfloat16)

Found by `bench/fuzz.py` (seed 100492), shrunk automatically.
output 1: Tensor-likes are not close!  Mismatched elements: 2 / 4 (50.0%) Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1):
        v6 = torch.sign(x1)
        return (v6,)


def make_inputs():
    g = torch.Generator().manual_seed(428650897)
    x1 = (torch.randn([1, 1, 1], generator=g) * 2).to(torch.bfloat16)
    return (x1,)
'''


def test_03f4f795c2():
    assert_matches_eager(SOURCE)
