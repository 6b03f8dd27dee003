"""Fuzz regression (f32 GEMM chain cancellation): was mismatch: value (float32)

Found by `bench/fuzz.py` (seed 71200059), shrunk automatically.
output 0: Tensor-likes are not close!  Mismatched elements: 17 / 480 (3.5%) Greatest absolute difference: 0.021484375 at index (1, 1, 3, 3) (up to 1e-05 allowed)

Not a wrong answer: three chained GEMMs cancel one element (9.83) from terms
near 1e3; eager is 6.5e-4 from the float64 reference, the kernels 2.4e-3, and
moving the inputs by half an f32 ulp moves the reference by up to 1.7e-3
there. The harness now judges such an element by that noise
(`harness.reference_noise`); the other elements still match eager.
"""

from ..harness import assert_matches_eager

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x1, x2, x4, x6, x7):
        v3 = F.linear(x1, x2)
        v5 = v3 @ x4
        v8 = F.silu(F.linear(v5, x6)) * F.linear(v5, x7)
        return (v8,)


def make_inputs():
    g = torch.Generator().manual_seed(69348582)
    x1 = (torch.randn([1, 3, 8, 8], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(836483869)
    x2 = (torch.randn([5, 8], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(145904332)
    x4 = (torch.randn([5, 4], generator=g) * 2).to(torch.float32)
    g = torch.Generator().manual_seed(901325263)
    x6 = (torch.randn([4, 4], generator=g) * 2).to(torch.float32)
    x6.view(-1)[[11]] = torch.tensor([float('inf')], dtype=torch.float32)
    g = torch.Generator().manual_seed(786640943)
    x7 = (torch.randn([4, 4], generator=g) * 2).to(torch.float32)
    return (x1, x2, x4, x6, x7,)
'''


def test_d50d21f927():
    assert_matches_eager(SOURCE)
