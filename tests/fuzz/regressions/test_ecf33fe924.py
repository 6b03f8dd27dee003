"""Fuzz regression (cat-mixed-dtype): process died: SIGABRT

Found by `bench/fuzz.py` (seed 7), shrunk automatically.
the worker died (SIGABRT)
"""

from ..harness import assert_matches_eager_isolated

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1, x4):
        v2 = x1.to(torch.int32)
        v5 = torch.cat([v2, x1, x4, x4], 0)
        return (v5,)


def make_inputs():
    g = torch.Generator().manual_seed(785310972)
    x1 = (torch.randn([2, 4], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(252956896)
    x4 = (torch.randn([1, 4], generator=g) * 2).to(torch.float32)
    return (x1, x4,)
'''


def test_ecf33fe924():
    assert_matches_eager_isolated(SOURCE)
