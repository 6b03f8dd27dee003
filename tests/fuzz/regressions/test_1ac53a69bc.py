"""Fuzz regression (maximum-signed-zero): mismatch: signed-zero (bfloat16)

Found by `bench/fuzz.py` (seed 100668), shrunk automatically.
output 1: a zero's sign differs from eager
"""

import torch

import mlirfuse
from ..gen import load

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1):
        v4 = torch.maximum(x1, torch.tensor(0))
        return (v4,)


def make_inputs():
    g = torch.Generator().manual_seed(407592817)
    x1 = (torch.randn([2], generator=g) * 2).to(torch.bfloat16)
    x1.view(-1)[[0, 1]] = torch.tensor([float('inf'), -0.0], dtype=torch.bfloat16)
    return (x1,)
'''


def test_1ac53a69bc():
    # Accepted (known.ACCEPTED["maximum-signed-zero"]): for equal zeros eager's CPU
    # maximum returns its first operand in its scalar loop (tensors shorter than a
    # vector) and its second in its vectorized loop. The fused kernel returns the
    # second, as eager does on any tensor a vector long.
    Model, make_inputs = load(SOURCE)
    (x1,) = make_inputs()
    (actual,) = mlirfuse.compile(Model().eval(), (x1,))(x1)
    assert actual.tolist() == [float("inf"), 0.0] and not actual[1].signbit()
    long = torch.tensor([-0.0] * 64, dtype=torch.bfloat16)
    assert not torch.maximum(long, torch.tensor(0)).signbit().any()  # eager's vectorized loop: +0.0
