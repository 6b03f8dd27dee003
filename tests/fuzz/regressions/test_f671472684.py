"""Fuzz regression (var-mean-inf): mismatch: nan (float32)

Found by `bench/fuzz.py` (seed 100551), shrunk automatically.
output 1: NaN positions differ, first at [0, 0, 0]: got -inf, eager nan
"""

import torch

import mlirfuse
from ..gen import load

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x2, x3, x4):
        v5 = F.batch_norm(x2, x3, x4, training=False)
        v6, v7, = torch.var_mean(v5, -3, keepdim=True)
        return (v7,)


def make_inputs():
    g = torch.Generator().manual_seed(962198682)
    x2 = (torch.randn([2, 5, 1], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(1051392537)
    x3 = (torch.randn([5], generator=g) * 2).to(torch.float32)
    x3.view(-1)[[0, 1, 3, 4]] = torch.tensor([float('inf'), float('nan'), float('-inf'), float('nan')], dtype=torch.float32)
    g = torch.Generator().manual_seed(961007582)
    x4 = (torch.rand([5], generator=g) * 2 + 0.1).to(torch.float32)
    return (x2, x3, x4,)
'''


def test_f671472684():
    # Accepted (known.ACCEPTED["var-mean-inf"]): eager's var_mean takes its mean from
    # Welford's update, which turns a row holding infinities into NaN or ±inf depending
    # on where they sit; the fused mean is sum / N, torch.mean's value. The variance is
    # NaN either way.
    Model, make_inputs = load(SOURCE)
    model = Model().eval()
    (actual,) = mlirfuse.compile(model, make_inputs())(*make_inputs())
    x2, x3, x4 = make_inputs()
    v5 = torch.nn.functional.batch_norm(x2, x3, x4, training=False)
    torch.testing.assert_close(actual, torch.mean(v5, -3, keepdim=True), equal_nan=True)
    (eager,) = model(*make_inputs())
    assert torch.isnan(eager).any() and not torch.isnan(actual).all()  # still the eager disagreement documented
