"""Fuzz regression (cat-mixed-dtype): process died: SIGABRT

Found by `bench/fuzz.py` (seed 300026), shrunk automatically.
the worker died (SIGABRT)
"""

from ..harness import assert_matches_eager_isolated

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1, x3):
        v2 = torch.exp(x1)
        v4 = torch.cat([v2, x1, x3], 0)
        return (v4,)


def make_inputs():
    g = torch.Generator().manual_seed(251451624)
    x1 = (torch.randn([4, 3], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(95770980)
    x3 = (torch.randn([1, 3], generator=g) * 2).to(torch.float16)
    return (x1, x3,)
'''


def test_5fd1e33f3d():
    assert_matches_eager_isolated(SOURCE)
