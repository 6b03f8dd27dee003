"""Fuzz regression (gelu-special-values): mismatch: signed-zero (float32)

Found by `bench/fuzz.py` (seed 71100011), shrunk automatically.
output 0: a zero's sign differs from eager
"""

import torch

import mlirfuse
from ..gen import load
from ..harness import run_case_source

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
    # f32 gelu is fused in CUDA eager's form x * 0.5 * (1 + erf(x / sqrt 2)) (mlirfuse/ops/special_values.py):
    # -0.0 where erf rounds to -1, as in this case. Eager's CPU vectorized loop gives +0.0 there on AVX2
    # CPUs and -0.0 on AVX-512 ones: the harness reports ok or the accepted class, never a mismatch.
    Model, make_inputs = load(SOURCE)
    inputs = make_inputs()
    (actual,) = mlirfuse.compile(Model().eval(), inputs)(*inputs)
    (expected,) = Model()(*inputs)
    v = torch.addmm(inputs[2], inputs[0], inputs[1])
    specified = v * 0.5 * (1 + torch.erf(v * 0.7071067811865476))
    assert (specified == 0).any() and specified[specified == 0].signbit().all()  # the case still has its zeros
    assert torch.equal(actual, expected) and torch.equal(actual.signbit(), specified.signbit())
    result = run_case_source(SOURCE)
    assert result["sig"] in ("", "accepted: gelu-special-values"), result
