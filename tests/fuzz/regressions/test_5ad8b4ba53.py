"""Fuzz regression (bool-to-bf16): InterpreterError: ValueError('cannot reshape array of size N into shape (N,)')

Found by `bench/fuzz.py` (seed 300053), shrunk automatically.
triton.runtime.errors.InterpreterError: ValueError('cannot reshape array of size 4 into shape (16,)')
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x3):
        v6 = x3 < x3
        v7 = v6.to(torch.bfloat16)
        return (v7,)


def make_inputs():
    g = torch.Generator().manual_seed(100468619)
    x3 = (torch.randn([1], generator=g) * 2).to(torch.float32)
    return (x3,)
'''


def test_5ad8b4ba53():
    assert_matches_eager(SOURCE)
