"""Fuzz regression (low-precision-norm): mismatch: value (float16)

Found by `bench/fuzz.py` (seed 100262), shrunk automatically.
output 2: Tensor-likes are not close!  Mismatched elements: 1 / 3 (33.3%) Greatest absolute difference: 0.001953125 at index (1,) (up to 1e-05 allowed)
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x2, x4, x5):
        v3 = torch.logsumexp(x2, -2, keepdim=False)
        v6 = F.layer_norm(v3, (3,), x4, x5)
        return (v6,)


def make_inputs():
    g = torch.Generator().manual_seed(209058446)
    x2 = (torch.randn([1, 3], generator=g) * 2).to(torch.float16)
    g = torch.Generator().manual_seed(935066038)
    x4 = (torch.randn([3], generator=g) * 2).to(torch.float16)
    g = torch.Generator().manual_seed(635930782)
    x5 = (torch.randn([3], generator=g) * 2).to(torch.float16)
    return (x2, x4, x5,)
'''


def test_f302ff6f0e():
    assert_matches_eager(SOURCE)
