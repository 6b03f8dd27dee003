"""Fuzz regression (gelu-signed-zero): mismatch: signed-zero (float32)

Found by `bench/fuzz.py` (seed 71100011), shrunk automatically.
output 0: a zero's sign differs from eager
"""

import torch
import torch.nn.functional as F

import mlirfuse
from ..gen import load

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x3, x4, x5):
        v6 = torch.addmm(x5, x3, x4)
        v7 = F.gelu(v6)
        return (v7,)


def make_inputs():
    g = torch.Generator().manual_seed(544233877)
    x3 = (torch.randn([1, 16], generator=g) * 2).to(torch.float32)
    x3 = x3.expand([3, 16])
    g = torch.Generator().manual_seed(592386124)
    x4 = (torch.randn([16, 1], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(972873358)
    x5 = (torch.randn([1, 1], generator=g) * 2).to(torch.float32)
    return (x3, x4, x5,)
'''


def test_21419b8536():
    # f32 gelu is fused as 0.5 * x + 0.5 * x * erf(x / sqrt 2), +0.0 where eager's f32 vectorized
    # loop gives +0.0 (this case); still accepted (known.ACCEPTED["gelu-signed-zero"]): eager's
    # scalar loop (one element, a broadcast input) gives -0.0 there.
    Model, make_inputs = load(SOURCE)
    inputs = make_inputs()
    (actual,) = mlirfuse.compile(Model().eval(), inputs)(*inputs)
    (expected,) = Model()(*inputs)
    assert torch.equal(actual, expected) and not actual.signbit().any() and not expected.signbit().any()
    x = torch.tensor([-14.5, -0.0])
    assert F.gelu(x[:1]).signbit().all() and F.gelu(x[1:]).signbit().all()  # scalar loop: -0.0
    assert not F.gelu(x).signbit().any()  # vectorized loop (2 elements): +0.0
    assert F.gelu(x.to(torch.bfloat16)).signbit().all() and F.gelu(x.expand(3, 2)).signbit().all()
