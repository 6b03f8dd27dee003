"""Fuzz regression (group-norm-inf-weight): mismatch: nan (float32)

Found by `bench/fuzz.py` (seed 59778194), shrunk automatically.
output 0: NaN positions differ, first at [2, 2]: got -inf, eager nan
"""

import torch
import torch.nn.functional as F

import mlirfuse
from ..gen import load
from helpers import Lambda

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
    # Accepted (known.ACCEPTED["group-norm-inf-weight"]): eager's kernels compute
    # x * (rstd * w) + (b - mean * rstd * w), inf - inf = NaN for an infinite weight; the
    # fused (x - mean) * rstd * w + b gives ±inf there and is exact where eager's form
    # cancels (a one-element group gives b exactly).
    Model, make_inputs = load(SOURCE)
    model = Model().eval()
    (actual,) = mlirfuse.compile(model, make_inputs())(*make_inputs())
    x2, x4, x5 = make_inputs()
    mean, var = x2.mean(1, keepdim=True), x2.var(1, unbiased=False, keepdim=True)
    expected = (x2 - mean) * torch.rsqrt(var + 1e-5) * x4 + x5
    torch.testing.assert_close(actual, expected, equal_nan=True)
    (eager,) = model(*make_inputs())
    assert torch.isnan(eager).any() and not torch.isnan(actual).any()  # still the eager disagreement documented


def test_group_norm_without_bias_adds_eager_zero_bias():
    # (x - mean) * rstd * w is -0.0 where x == mean and w < 0; eager adds a zero bias.
    x, w = torch.zeros(2, 4, 3), torch.tensor([-1.0, 2.0, -3.0, 1.0])
    model = Lambda(lambda x, w: F.group_norm(x, 2, w))
    actual, eager = mlirfuse.compile(model, (x, w))(x, w), model(x, w)
    assert torch.equal(torch.signbit(actual), torch.signbit(eager)) and torch.equal(actual, eager)
