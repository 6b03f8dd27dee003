"""Pads (`F.pad` constant / reflect / replicate, `constant_pad_nd`) and cats of inputs read by index arithmetic, against eager.

A pad of a kernel input is one load at shifted coordinates: masked with the
pad value (constant), or at mirrored (reflect) or clamped (replicate)
coordinates; a cat of kernel inputs loads each piece shifted to its offset
and picks the piece whose range holds the coordinate. Each case checks the
op ran in a Triton kernel with its neighbours (no ATen call) and matches eager.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from helpers import compile_and_compare, kernel_ops


def fused_with(cm, *ops):
    found = kernel_ops(cm)
    for op in ops:
        assert any(k == op or k.startswith(op + ".") for k in found), f"{op} not in kernels: {found}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32], ids=str)
def test_constant_pad_fused_with_consumer(dtype):
    x = (torch.randn(3, 5) * 4).to(dtype)
    y = (torch.randn(4, 9) * 4).to(dtype)
    # Pads on both sides of the last dim, one side of the first; a negative pad crops.
    cm = compile_and_compare(
        lambda x, y: (F.pad(x, (1, 3, 0, 1), value=-1.0) + y, F.pad(x, (-1, 2)) * 2),
        (x, y),
    )
    assert cm.stats["launches"] == 2  # two iteration spaces
    fused_with(cm, "torch.aten.pad", "torch.aten.add")


def test_constant_pad_nd_of_a_transposed_view():
    x = torch.randn(5, 3)
    cm = compile_and_compare(lambda x: torch.constant_pad_nd(x.t(), (2, 0, 1, 1), 0.25).exp(), (x,))
    assert cm.stats["launches"] == 1


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_reflect_and_replicate(mode):
    x = torch.randn(2, 3, 4, 5)
    cm = compile_and_compare(lambda x: (F.pad(x, (2, 3, 1, 2), mode=mode) * 3, F.pad(x[0], (3, 1), mode=mode) - 1), (x,))
    assert cm.stats["launches"] <= 2


def test_pad_of_a_computed_value_is_its_own_kernel():
    # Pads read kernel inputs only: exp(x) is stored, the pad kernel reads it.
    x = torch.randn(3, 5)
    cm = compile_and_compare(lambda x: F.pad(x.exp(), (1, 1)) + 1, (x,))
    assert cm.stats["launches"] == 2


def test_pad_feeding_a_reduction():
    x = torch.randn(3, 5)
    cm = compile_and_compare(lambda x: F.pad(x, (1, 2), value=1.0).sum(-1), (x,))
    assert cm.stats["launches"] == 2  # the pad and the sum stay in separate kernels


def test_cat_of_inputs_fused_with_consumer():
    # Pieces of different sizes and dtypes (promoted as eager does), one through a view.
    x, y, z = torch.randn(3, 5), torch.randn(2, 3).to(torch.float16), torch.randint(-5, 5, (3, 1), dtype=torch.int32)
    cm = compile_and_compare(lambda x, y, z: torch.cat([x, y.t(), z], 1).exp() * 2, (x, y, z))
    assert cm.stats["launches"] == 1
    fused_with(cm, "torch.aten.cat", "torch.aten.exp")


def test_cat_of_inputs_alone_and_along_dim0():
    x, y = torch.randint(-9, 9, (2, 4), dtype=torch.int64), torch.randint(-9, 9, (3, 4), dtype=torch.int64)
    cm = compile_and_compare(lambda x, y: torch.cat([y, x, y], 0), (x, y))
    assert cm.stats["launches"] == 1


def test_bool_pad_with_a_non_boolean_value_matches_eager():
    # Eager converts the value to bool first (-inf -> True); such pads stay ATen (fuzz seed 70404655).
    x = torch.rand(3, 4) > 0.5
    for value in (float("-inf"), 0.5, 2.0, 1.0):
        compile_and_compare(lambda x, value=value: F.pad(x, [1, 1], value=value), (x,), fused=value == 1.0)
