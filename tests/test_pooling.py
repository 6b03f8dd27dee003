"""Pooling as windowed reductions in Triton kernels, against eager PyTorch.

Each case compiles a small module of pools (odd sizes, padding, stride !=
kernel, dilation, ceil_mode, count_include_pad, divisor_override, adaptive
windows) and checks every output against eager: values with NaN and inf in
the same places, indices exactly (first maximum wins, the last NaN of a
window wins, as eager's CPU kernels), and that each pool ran in a kernel
with its pointwise consumers.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

import mlirfuse
from helpers import Lambda, assert_fully_fused


def special(shape, dtype=torch.float32, seed=0):
    """Random values with ties, NaNs (two in some windows), +-inf and a row of -inf."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-3, 4, shape, generator=g).float() / 2  # many ties
    flat = x.view(-1)
    n = flat.numel()
    for k, v in ((n // 7, float("nan")), (n // 7 + 1, float("nan")), (n // 3, float("inf")), (n // 2, float("-inf")),
                 (2 * n // 3, float("nan")), (2 * n // 3 + 2, float("-inf"))):
        flat[k] = v
    x[..., :2, :] = float("-inf")  # windows holding only -inf: index of the first position inside
    return x.to(dtype)


def check(fn, inputs, launches, explain=False, **tol):
    model = Lambda(fn)
    expected = model(*inputs)
    cm = mlirfuse.compile(model, inputs, explain=explain)
    actual = cm(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, tuple) else (actual,)
    for k, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype and a.shape == e.shape, (k, a.dtype, e.dtype, a.shape, e.shape)
        if e.dtype == torch.int64:
            assert torch.equal(a, e), f"output {k}: indices differ at {(a != e).nonzero().tolist()[:5]}"
        else:
            torch.testing.assert_close(a, e, equal_nan=True, msg=lambda m, k=k: f"output {k}: {m}", **tol)
    assert_fully_fused(cm)
    assert cm.stats["launches"] == launches, cm.stats
    return cm


def test_max_pool2d_with_indices_nan_inf_ties_and_epilogue():
    x = special((2, 3, 9, 10))
    check(
        lambda x: (
            *F.max_pool2d(x, 3, 2, 1, return_indices=True),
            *F.max_pool2d(x, (3, 2), (1, 3), (1, 0), dilation=(2, 1), ceil_mode=True, return_indices=True),
            torch.relu(F.max_pool2d(x, 2, ceil_mode=True)) * 2 + 1,  # an epilogue in the same kernel
        ),
        (x,), launches=3,
    )


def test_max_pool1d_and_3d_with_indices_bf16():
    x1, x3 = special((3, 11), torch.bfloat16, 1), special((1, 2, 5, 6, 7), torch.bfloat16, 2)
    check(
        lambda a, b: (
            *F.max_pool1d(a, 4, 3, 2, ceil_mode=True, return_indices=True),
            F.max_pool1d(a, 3, dilation=3),
            *F.max_pool3d(b, (2, 3, 2), (1, 2, 3), (1, 1, 0), ceil_mode=True, return_indices=True),
            F.max_pool3d(b, 2, dilation=(1, 2, 1)),
        ),
        (x1, x3), launches=4,
    )


def test_avg_pool_padding_ceil_mode_divisor():
    x1, x2, x3 = torch.randn(2, 3, 11), torch.randn(2, 3, 9, 10), torch.randn(1, 2, 5, 6, 7)
    check(
        lambda a, b, c: (
            F.avg_pool1d(a, 4, 3, 2, ceil_mode=True),
            F.avg_pool1d(a, 3, 2, 1, ceil_mode=True, count_include_pad=False),
            F.avg_pool2d(b, 3, 2, 1, ceil_mode=True, count_include_pad=False),
            F.avg_pool2d(b, (3, 2), (2, 3), (1, 1), divisor_override=5),
            F.avg_pool2d(b, 4, 3, 2, ceil_mode=True) - 1,
            F.avg_pool3d(c, (2, 3, 2), (2, 1, 3), (1, 1, 0), ceil_mode=True, count_include_pad=False),
            F.avg_pool3d(c, 2, divisor_override=3),
        ),
        (x1, x2, x3), launches=7,
    )


def test_avg_pool_bf16_with_nan_and_inf():
    x = special((2, 3, 9, 10), torch.bfloat16, 3)
    check(lambda x: (F.avg_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 2, 3, 1, ceil_mode=True, count_include_pad=False)), (x,), launches=2)


def test_adaptive_pools_odd_sizes():
    x1, x2, x3 = special((2, 3, 11), seed=4), special((2, 3, 9, 10), seed=5), special((1, 2, 5, 6, 7), seed=6)
    check(
        lambda a, b, c: (
            F.adaptive_avg_pool1d(a, 4),
            *F.adaptive_max_pool1d(a, 5, return_indices=True),
            F.adaptive_avg_pool2d(b, (4, 3)) + 1,
            *F.adaptive_max_pool2d(b, (4, 7), return_indices=True),
            F.adaptive_avg_pool3d(c, (2, 4, 3)),
            F.adaptive_max_pool3d(c, (3, 4, 2)),
        ),
        (x1, x2, x3), launches=6,
    )


def test_adaptive_avg_pool_bf16_and_strided_input():
    x = torch.randn(2, 9, 10, 3).to(torch.bfloat16)
    # A channels-last layout seen as NCHW: the window loads go through the view's strides.
    check(lambda x: F.adaptive_avg_pool2d(x.permute(0, 3, 1, 2), (4, 3)) * 3, (x,), launches=1)


def reasons(cm) -> list[str]:
    return [r for rs in cm.explain().values() for r in rs]


def test_no_fuse_pool_of_a_pool():
    # A window prologue is elementwise: it is recomputed per position.
    x = special((2, 3, 9, 10), seed=8)
    cm = check(lambda x: F.max_pool2d(F.avg_pool2d(x, 2), 2) + 1, (x,), launches=2, explain=True)
    assert any("pools a computed value that is not elementwise (torch.aten.avg_pool2d" in r for r in reasons(cm)), reasons(cm)
    # A 1x1 window keeps the shape: exp is computed at the lanes for the add and again at the window positions.
    check(lambda x: (lambda e: F.max_pool2d(e, 1) + e)(torch.exp(x)), (x,), launches=1)


def test_window_prologue_nan_and_broadcast_bias():
    # relu(x * 2 + b) and log(x) (NaN for x < 0) are recomputed at each window position: one kernel per pool.
    x, b = special((2, 3, 9, 10), seed=7), torch.randn(3, 1, 1)
    check(
        lambda x, b: (
            *F.max_pool2d(torch.relu(x * 2 + b), 3, 2, 1, return_indices=True),
            F.avg_pool2d(torch.log(x), 3, 2, 1, ceil_mode=True, count_include_pad=False) + b,
            F.adaptive_max_pool2d(torch.sqrt(x), (4, 3)),
        ),
        (x, b), launches=3,
    )


def test_window_prologue_bf16_rounds_before_pooling():
    # Ties appear only after rounding the prologue's result to bf16: eager's first maximum wins.
    # 1 + k/128 (exact in bf16) + 3 rounds to 4.0 for k = 0, 1, 2: eager's index is the first of them.
    x = (1 + torch.tensor([0, 1, 2, 0, 1, 2, 1, 0, 0, 0]).repeat(1, 1, 2, 1) / 128).to(torch.bfloat16)
    check(lambda x: F.max_pool2d(x + 3, (1, 5), return_indices=True), (x,), launches=1)


def test_upsample_nearest_scales_sizes_and_prologue():
    # Source index min(floor(o * scale), size - 1) in f32, scale = 1 / factor or in / out: 2.2 is not "o >> 1".
    a, b = special((2, 3, 5), seed=9), special((1, 2, 3, 4), torch.bfloat16, 10)
    check(
        lambda a, b: (
            F.interpolate(a, scale_factor=2.2, mode="nearest"),
            F.interpolate(torch.relu(a), size=7, mode="nearest") * 2,  # prologue and epilogue
            F.interpolate(b, size=(5, 9), mode="nearest"),
            F.interpolate(b, scale_factor=(0.5, 1.6), mode="nearest") + 1,
        ),
        (a, b), launches=4,
    )


def test_underscore_adaptive_avg_pool_spellings():
    # torch.compile's graphs spell adaptive average pooling _adaptive_avg_pool2d/3d; same windows.
    b, c = special((2, 3, 9, 10), seed=11), special((1, 2, 5, 6, 7), seed=12)
    cm = check(lambda b, c: (torch.ops.aten._adaptive_avg_pool2d(b, [4, 3]) * 2, torch.ops.aten._adaptive_avg_pool3d(c, [2, 4, 3])),
               (b, c), launches=2)
    assert "_adaptive_avg_pool3d" in cm.mlir
