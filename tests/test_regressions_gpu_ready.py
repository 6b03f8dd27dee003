"""Issue 21's classes found by inputs nobody here wrote, each against eager PyTorch.

Each test failed before its fix (the message says how).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from helpers import Lambda, compile_and_compare


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


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda x, y: torch.cat([x[:, 5:5].exp(), y * 2], 1), [(3, 7), (3, 4)]),
        (lambda x, y: torch.cat([x[:, :, 8:], y + 1], 2), [(2, 3, 7), (2, 3, 4)]),
        (lambda x, y: torch.cat([x, y.sin()], 0), [(0, 4), (3, 4)]),
        (lambda x, y: torch.cat([y.sin(), x * 3], 1), [(3, 0), (3, 4)]),
    ],
    ids=["empty_slice", "slice_past_end", "empty_input", "empty_computed_last"],
)
def test_cat_with_an_empty_piece(fn, shapes):
    # The concat kernel's masked-in lanes loaded from the empty piece: under MLIRFUSE_CHECK_BOUNDS=1
    # (tests/conftest.py) "12 masked-in lanes load from outside in0 ... 0 bytes", SIGSEGV without it.
    compile_and_compare(fn, tuple(torch.randn(s) for s in shapes), fused=False)


# --- precision="eager" (item 8) -------------------------------------------------------------------

CHAINS = {
    "arith": lambda x, y: (x * y + x) / (y - 3.0) * 1.7,
    "gelu_is_x": lambda x, y: (F.gelu(x) == x).to(x.dtype) + x,  # the rounding points
    "near_tie_where": lambda x, y: torch.where(x * 1.1 < y * 0.9, x + y, x - y),
    "transcendental": lambda x, y: torch.tanh(x.exp() * y).sigmoid() + F.silu(y),
}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("chain", list(CHAINS))
def test_precision_eager_pointwise_chains_equal_eager(chain, dtype):
    # One kernel either way; in the fast mode (default) f16/bf16 intermediates stay in f32, so the
    # chains differ from eager at rounding points; precision="eager" rounds each op's result.
    torch.manual_seed(0)
    x, y = torch.randn(64, 65).to(dtype), torch.randn(64, 65).to(dtype)
    fn = CHAINS[chain]
    cm = mlirfuse.compile(Lambda(fn), (x, y), options={"precision": "eager"})
    assert cm.stats["launches"] == 1 and 'precision = "eager"' in cm.mlir
    assert torch.equal(cm(x, y), fn(x, y))


def test_precision_fast_is_the_default_and_differs():
    # The test above could pass by accident if the modes were the same: the default differs somewhere.
    torch.manual_seed(0)
    x, y = torch.randn(64, 65).to(torch.bfloat16), torch.randn(64, 65).to(torch.bfloat16)
    cm = mlirfuse.compile(Lambda(CHAINS["arith"]), (x, y))
    assert "precision" not in cm.mlir and not torch.equal(cm(x, y), CHAINS["arith"](x, y))


def test_precision_rejects_an_unknown_mode():
    x = torch.randn(4).to(torch.bfloat16)
    with pytest.raises(mlirfuse.PipelineError, match="precision.*fast, eager.*'exact'"):
        mlirfuse.compile(Lambda(torch.exp), (x,), options={"precision": "exact"})


def test_pad_by_nothing_of_a_computed_value():
    # Fuzz seed 2610451: F.pad(sgn(x), [0, 0]) read sgn only through a pad that pads by nothing; the
    # value was looked up where it had not been emitted: "LoweringError: ... 'torch.aten.pad' of a constant".
    compile_and_compare(lambda x: F.pad(torch.sgn(x), [0, 0], value=0.0), (torch.randn(2),))
    compile_and_compare(lambda x: F.pad(x.exp() * 2, [0, 0, 1, 0]), (torch.randn(3, 4),))
