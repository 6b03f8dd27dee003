"""Fuzz regression (concat-of-cat): CompilationError: the fusion pipeline failed: Failure while executing pass pipeline:

Found by `bench/fuzz.py` (seed 71100085), shrunk automatically.
error: "<fuzz case>":9:0: 'fusion.group' op of kind "concat" holds 2 'torch.aten.cat' ops, expected exactly one
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x2, x3, x6):
        v4 = torch.cat([x2, x3], 0)
        v7 = torch.cat([torch.relu(v4), torch.abs(x6), v4], -1)
        return (v7,)


def make_inputs():
    g = torch.Generator().manual_seed(595765125)
    x2 = (torch.randn([1], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(1027139652)
    x3 = (torch.randn([1], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(965066296)
    x6 = (torch.randn([1], generator=g) * 2).to(torch.float32)
    return (x2, x3, x6,)
'''


def test_c936c2475d():
    # Fixed: fusion-fuse-concat refuses a cat whose piece's group holds a cat of its own.
    assert_matches_eager(SOURCE)
