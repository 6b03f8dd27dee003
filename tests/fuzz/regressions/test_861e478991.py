"""Fuzz regression (group-norm-inf-weight): mismatch: nan (float32)

Found by `bench/fuzz.py` (seed 59778194), shrunk automatically.
output 0: NaN positions differ, first at [2, 2]: got -inf, eager nan
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x2, x4, x5):
        v6 = F.group_norm(x2, 1, x4, x5)
        return (v6,)


def make_inputs():
    g = torch.Generator().manual_seed(573795175)
    x2 = (torch.randn([1, 5], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(794876939)
    x4 = (torch.randn([5], generator=g) * 2).to(torch.float32)
    x4.view(-1)[[2]] = torch.tensor([float('-inf')], dtype=torch.float32)
    g = torch.Generator().manual_seed(659214723)
    x5 = (torch.randn([5], generator=g) * 2).to(torch.float32)
    return (x2, x4, x5,)
'''


def test_861e478991():
    assert_matches_eager(SOURCE)
