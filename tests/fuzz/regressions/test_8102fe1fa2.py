"""Fuzz regression (gemm-signed-zero, in attention): mismatch: signed-zero (float32)

Found by `bench/fuzz.py` (seed 71300020), shrunk automatically.
output 0: a zero's sign differs from eager
"""

import torch

import mlirfuse
from ..gen import load

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x10, x11, x12):
        v13 = F.scaled_dot_product_attention(x10, x11, x12, is_causal=True)
        return (v13,)


def make_inputs():
    g = torch.Generator().manual_seed(275909543)
    x10 = (torch.randn([2, 1], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(1587784)
    x11 = (torch.randn([1, 1], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(739821634)
    x12 = (torch.randn([1, 2], generator=g) * 2).to(torch.float32)
    x12.view(-1)[[0, 1]] = torch.tensor([float('inf'), -0.0], dtype=torch.float32)
    return (x10, x11, x12,)
'''


def test_8102fe1fa2():
    # Accepted (known.ACCEPTED["gemm-signed-zero"]): each row attends one key whose v is
    # [inf, -0.0]; eager's 1 * -0.0 is -0.0, the interpreter's tl.dot (numpy's matmul) sums
    # from +0.0. Values equal, the zero's sign is +0.0.
    Model, make_inputs = load(SOURCE)
    inputs = make_inputs()
    (actual,) = mlirfuse.compile(Model().eval(), inputs)(*inputs)
    (expected,) = Model()(*inputs)
    assert torch.equal(actual, expected) and expected[:, 1].signbit().all() and not actual[:, 1].signbit().any()
