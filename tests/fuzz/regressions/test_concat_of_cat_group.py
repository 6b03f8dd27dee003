"""Fuzz regression (concat-of-cat-group): crash: CompilationError: the fusion pipeline failed

Found by `bench/fuzz.py --focus gemm` (seed 515123), shrunk by hand: the outer
cat's pieces came from a pointwise group that already read a cat of inputs, and
fusion-fuse-concat made one concat group holding both cats, which the verifier
rejects ('fusion.group' op of kind "concat" holds 2 'torch.aten.cat' ops).
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch


class Model(torch.nn.Module):
    def forward(self, x1, x2, x7):
        v3 = torch.cat([x1, x2], 1)
        v8 = torch.cat([v3 * 2, x7, v3], -1)
        return (v8,)


def make_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g), torch.randn(5, 6, generator=g)[..., ::2])
'''


def test_concat_of_cat_group():
    assert_matches_eager(SOURCE)
