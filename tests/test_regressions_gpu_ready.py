"""Issue 21's classes found by inputs nobody here wrote, each against eager PyTorch.

Each test failed before its fix (the message says how).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from helpers import compile_and_compare


@pytest.mark.parametrize(
    "shapes",
    [((8, 16), (16, 32)), ((2, 8, 16), (2, 16, 32)), ((2, 8, 16), (16, 32))],
    ids=["mm", "bmm", "broadcast_b"],
)
def test_gemm_b_prologue_reads_a_0d_tensor(shapes):
    # k / sqrt(scale) as a GEMM's B prologue, scale 0-d (a transformer encoder's key scaling): the scalar
    # was loaded in A's [1, BLOCK_K] orientation beside B's [BLOCK_K, BLOCK_N] tile, "Cannot
    # make_shape_compatible: incompatible dimensions at index 1: 32 and 16" at run time.
    q, k = (torch.randn(s) for s in shapes)
    cm = compile_and_compare(lambda q, k, s: torch.matmul(q, k / torch.sqrt(s)), (q, k, torch.tensor(4.0)))
    assert cm.stats["launches"] == 1, cm.mlir


def test_linear_weight_prologue_reads_a_0d_tensor():
    # The transposed-B form (linear's [N, K] weight) with the same 0-d scalar.
    x, w = torch.randn(8, 16), torch.randn(32, 16)
    compile_and_compare(lambda x, w, s: F.linear(x, w * s), (x, w, torch.tensor(0.5)))


@pytest.mark.parametrize("grad_dtype", [torch.int64, torch.int32, torch.bool], ids=str)
def test_threshold_backward_promotes_like_eager(grad_dtype):
    # torch._decomp's where(x <= t, 0, grad) kept the gradient's dtype: int64 where eager gives float32.
    grad = torch.randint(-3, 3, (4, 5)).to(grad_dtype)
    x = torch.randn(4, 5)
    cm = compile_and_compare(lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.5), (grad, x))
    assert cm(grad, x).dtype == torch.float32
