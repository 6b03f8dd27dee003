"""Fuzz regression (cat-mixed-dtype): mismatch: value (float32)

Found by `bench/fuzz.py` (seed 100714), shrunk automatically.
output 0: Tensor-likes are not close!  Mismatched elements: 2 / 12 (16.7%) Greatest absolute difference: 2.5926952362060547 at index (1, 0) (up to 1e-05 allowed)
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1, x5, x6):
        v2 = x1.float()
        v7 = torch.cat([v2, x1, x5, x6], 1)
        return (v7,)


def make_inputs():
    g = torch.Generator().manual_seed(229997230)
    x1 = (torch.randn([2, 1], generator=g) * 2).to(torch.bfloat16)
    g = torch.Generator().manual_seed(622728540)
    x5 = (torch.randn([2, 3], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(549724017)
    x6 = (torch.randn([2, 1], generator=g) * 2).to(torch.float32)
    return (x1, x5, x6,)
'''


def test_1aadc27ab9():
    assert_matches_eager(SOURCE)
