"""Fuzz regression (int-to-bf16-nan): mismatch: nan

Found by `bench/fuzz.py` (seed 2), shrunk automatically.
output 0: NaN positions differ, first at [0, 0, 1]: got nan, eager -3.0
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1):
        v5 = x1.to(torch.bfloat16)
        return (v5,)


def make_inputs():
    g = torch.Generator().manual_seed(661718012)
    x1 = torch.randint(-5, 6, [1, 1, 1, 3], generator=g, dtype=torch.int32)
    return (x1,)
'''


def test_4ae998aa65():
    assert_matches_eager(SOURCE)
