"""Fuzz regression (layer-norm-signed-zero): mismatch: signed-zero (float32)

Found by `bench/fuzz.py` (seed 65052308), shrunk by hand: layer_norm over a
size-1 dim is all zeros; ATen's CPU kernel adds a zero bias where there is
none, so eager's zeros are +0.0 where (x - mean) * rstd gave -0.0.
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x2):
        v3 = F.layer_norm(x2, (1,))
        return (v3,)


def make_inputs():
    x2 = torch.tensor([[-0.0], [float('-inf')], [1.5]], dtype=torch.float32)
    return (x2,)
'''


def test_abd7abd15d():
    assert_matches_eager(SOURCE)
