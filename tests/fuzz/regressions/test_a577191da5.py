"""Fuzz regression (int-to-bf16-nan): mismatch: value (an int64 -> bf16 cast feeding a where condition)

Found by `bench/fuzz.py` (seed 100249), shrunk automatically.
output 0: Tensor-likes are not equal!  Mismatched elements: 13 / 60 (21.7%) Greatest absolute difference: 7 at index (0, 2, 2)
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1, x3, x4):
        v2 = x1.to(torch.bfloat16)
        v5 = torch.where(v2 > 0, x3, x4)
        return (v5,)


def make_inputs():
    g = torch.Generator().manual_seed(1073621327)
    x1 = torch.randint(-5, 6, [1, 4, 5], generator=g, dtype=torch.int64)
    g = torch.Generator().manual_seed(297535224)
    x3 = (torch.randn([1, 1, 1], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(305427994)
    x4 = torch.randint(-5, 6, [3, 5, 4], generator=g, dtype=torch.int32)
    x4 = x4.transpose(-1, -2)
    return (x1, x3, x4,)
'''


def test_a577191da5():
    assert_matches_eager(SOURCE)
