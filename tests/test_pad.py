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

from helpers import compile_and_compare, kernel_ops, unfused_ops


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


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32], ids=str)
def test_pad_of_a_computed_value_fused(dtype):
    # The pad's operand is computed at the pad's coordinates (masked outside a
    # constant pad); `y` broadcasts into it; a negative pad crops. (bf16: eager
    # rounds x * y before adding 1, the kernel rounds once at the store.)
    x, y = (torch.randn(3, 5) * 3).to(dtype), (torch.randn(5) * 3).to(dtype)
    tolerances = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else {}
    cm = compile_and_compare(
        lambda x, y: (F.pad(x * y + 1, (1, 3, 0, 1), value=-1.0) * 2, F.pad((x - y).abs(), (-1, 2, 1, -2)) + 1),
        (x, y), **tolerances,
    )
    assert cm.stats["launches"] == 2  # two iteration spaces, no stored exp
    fused_with(cm, "torch.aten.pad", "torch.aten.mul")


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_reflect_replicate_circular_of_a_computed_value(mode):
    x, y = torch.randn(2, 4, 5), torch.randn(4, 1)
    # Circular: pads up to the whole size (wrapping once), as eager allows.
    cm = compile_and_compare(
        lambda x, y: (F.pad(torch.sin(x) * y, (2, 3, 1, 2), mode=mode) - 1, F.pad(x, (0, 4, 3, 0), mode=mode) * 2), (x, y)
    )
    assert cm.stats["launches"] == 2  # two iteration spaces


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")], ids=str)
def test_pad_value_nan_and_inf(value):
    x = torch.randn(3, 4)
    cm = compile_and_compare(lambda x: F.pad(torch.exp(x), (2, 1, 1, 0), value=value) * 2, (x,), equal_nan=True)
    assert cm.stats["launches"] == 1


def test_crop_of_a_value_broadcast_along_the_cropped_dim():
    # y is [4, 1]: along the cropped dim it is read at coordinate 0, whatever the shift.
    x, y = torch.randn(4, 6), torch.randn(4, 1)
    cm = compile_and_compare(lambda x, y: F.pad(x + y, (-2, -3)) * 2, (x, y))
    assert cm.stats["launches"] == 1
    # A pad cropped to one row broadcasts along that dim: every lane reads row 1.
    z = torch.randn(5, 6)
    cm = compile_and_compare(lambda x, z: (F.pad(x, (0, 0, -1, -2)) + z, F.pad(x.exp(), (1, 0, -3, 0), value=2.0) * z[:, :1]), (x, z))
    assert cm.stats["launches"] == 2


def test_producer_read_twice_is_recomputed_at_the_pad():
    # exp(x) feeds a pad ([3, 7]) and a mul ([3, 5]): each kernel computes it, none stores it.
    x = torch.randn(3, 5)
    cm = compile_and_compare(lambda x: (F.pad(x.exp(), (1, 1)) + 1, x.exp() * 3), (x,))
    assert cm.stats["launches"] == 2
    assert all("exp" in name for name in cm.kernels) if isinstance(cm.kernels, dict) else True


def test_pads_and_cats_compose():
    # A pad of a padded input plus one, and a cat whose piece is a pad of a computed value.
    x, y = torch.randn(3, 4), torch.randn(3, 2)
    cm = compile_and_compare(
        lambda x, y: (F.pad(F.pad(x, (1, 0)) + 1, (0, 2), value=3.0) * 2, torch.cat([F.pad(y.exp(), (1, 1), mode="replicate"), x], 1) - 1),
        (x, y),
    )
    assert cm.stats["launches"] == 2


def test_bool_pad_view_and_cat_inside_a_pad():
    # A bool pad of a comparison; a pad of exp of a transposed input; a reflect pad of a cat of a computed piece.
    x, y = torch.randn(4, 6), torch.randn(4, 8)
    cm = compile_and_compare(
        lambda x, y: (
            F.pad(x > 0, (1, 1), value=1.0) & (y > -5),
            F.pad(torch.exp(x.t()), (1, 0, 0, 2), value=-2.0) + 1,
            F.pad(torch.cat([torch.sin(x), y[:, :2]], 1) * 2, (2, 2), mode="reflect") - 1,
        ),
        (x, y),
    )
    assert cm.stats["launches"] == 3  # three iteration spaces


def test_pad_of_a_reduction_result_is_not_fused_into_it():
    x = torch.randn(3, 5)
    cm = compile_and_compare(lambda x: F.pad(x.sum(-1, keepdim=True), (1, 1), value=2.0) * 3, (x,))
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


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
def test_cat_of_computed_pieces_and_an_input(dtype):
    # Along a middle dim: two computed pieces and an input, then a consumer: one kernel.
    x, y, z = (torch.randn(2, 3, 4) * 4).to(dtype), (torch.randn(2, 2, 4) * 4).to(dtype), (torch.randn(2, 1, 4) * 4).to(dtype)
    cm = compile_and_compare(lambda x, y, z: torch.cat([x * 2, z, y - x[:, :2]], 1) + 1, (x, y, z))
    assert cm.stats["launches"] == 1
    fused_with(cm, "torch.aten.cat", "torch.aten.add")


def test_cat_of_computed_pieces_along_dim0():
    x, y = torch.randn(2, 5), torch.randn(3, 5)
    cm = compile_and_compare(lambda x, y: torch.cat([torch.sin(x), y, torch.cos(y)], 0) * 3, (x, y))
    assert cm.stats["launches"] == 1


def test_issue_module_one_kernel_per_iteration_space():
    def f(x, y):
        a = F.pad(torch.exp(x), (1, 2), value=0.5) * 2
        b = torch.cat([torch.sin(x), y], dim=1) + 1
        c = F.pad(x, (2, 1), mode="reflect")
        d = F.pad(torch.cos(x), (1, 1), mode="replicate")
        return a, b, c, d

    cm = compile_and_compare(f, (torch.randn(4, 6), torch.randn(4, 3)))
    assert cm.stats["launches"] == 2  # a, b, c share [4, 9]; d is [4, 8]


def test_cropped_piece_of_a_concat_kernel_reads_only_inside_its_input():
    # The concat kernel's space is the longer piece's: lanes past the cropped
    # piece (rows 3, 4) would read rows 5, 6 of x; the loads are masked there.
    x, y = torch.randn(5, 4), torch.randn(5, 4)
    cm = compile_and_compare(lambda x, y: torch.cat([F.pad(x.exp(), (0, 0, -2, 0)) * 2, y * 3], 0), (x, y))
    (kernel,) = cm.kernels.values() if isinstance(cm.kernels, dict) else cm.kernels
    loads = [line for line in kernel.source.splitlines() if "load %arg0" in line]
    assert loads and all("(x0 < 3)" in line for line in loads), loads


def test_cat_of_a_cat_result():
    # A concat kernel writes one cat, and the exp's group holds the inner one: the outer cat is the
    # result of a pointwise kernel over its shape (each lane evaluates its piece), no longer ATen's.
    x, y, z = torch.randn(2, 3), torch.randn(2, 1), torch.randn(3, 4)
    cm = compile_and_compare(lambda x, y, z: torch.cat([torch.cat([x, y], 1).exp(), z], 0), (x, y, z))
    assert cm.stats["launches"] == 1


@pytest.mark.parametrize("read", [True, False], ids=["read-pointwise", "exit"])
def test_computed_bf16_piece_of_an_f32_cat_is_rounded_as_eager(read):
    # Eager computes the exp in bf16 and widens its rounded values into the f32 cat; the kernel computes
    # the piece in f32 and widened it unrounded (found writing the pointwise cat exits).
    x, y, z = torch.randn(2, 3).to(torch.bfloat16), torch.randn(2, 1).to(torch.bfloat16), torch.randn(3, 4)

    def f(x, y, z):
        out = torch.cat([torch.cat([x, y], 1).exp(), z], 0)
        return out + 1 if read else out

    cm = compile_and_compare(f, (x, y, z))
    assert cm.stats["launches"] == 1


def _partial_rotary(x, cos, sin):
    """GPT-NeoX's and Phi's rotary embedding on the first 4 features, the rest passed through."""
    rotated, passed = x[..., :4], x[..., 4:]
    half = torch.cat([-rotated[..., 2:], rotated[..., :2]], -1)
    return torch.cat([rotated * cos + half * sin, passed], -1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_partial_rotary_cats_are_one_pointwise_kernel(dtype):
    """Issue 22: `cat(rotated, pass-through)` of q and k, read by attention, were two ATen cats.

    The rotating group holds a cat of its own (rotate-half), so no concat
    kernel writes them; one pointwise kernel over [2, 4, 8, 12] evaluated
    both cats, attention a second. Now both are the attention's prologues
    (each tile of q and k rotated as it is loaded): one launch.
    """
    q, k, v = (torch.randn(2, 4, 8, 12).to(dtype) for _ in range(3))
    cos, sin = torch.randn(8, 4).to(dtype), torch.randn(8, 4).to(dtype)

    def f(q, k, v, cos, sin):
        return F.scaled_dot_product_attention(_partial_rotary(q, cos, sin), _partial_rotary(k, cos, sin), v)

    tolerances = {} if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    cm = compile_and_compare(f, (q, k, v, cos, sin), fused=False, **tolerances)
    # (The pass-through slices are the kernel's strided operands: views, no call.)
    assert cm.stats["unfused_ops"] == cm.stats["unfused_views"], unfused_ops(cm)
    fused_with(cm, "torch.aten.cat", "torch.aten.scaled_dot_product_attention")
    assert cm.stats["launches"] == 1


def test_partial_rotary_cat_stays_aten_where_the_rotated_part_is_returned_too():
    # The kernel over the cat's shape would have no place to store the rotated part: the cat stays ATen's.
    q, cos, sin = torch.randn(2, 8, 12), torch.randn(8, 4), torch.randn(8, 4)

    def f(q, cos, sin):
        out = _partial_rotary(q, cos, sin)
        return out, out.exp()

    def g(q, cos, sin):
        rotated = q[..., :4]
        half = torch.cat([-rotated[..., 2:], rotated[..., :2]], -1)
        part = rotated * cos + half * sin
        return torch.cat([part, q[..., 4:]], -1), part

    compile_and_compare(f, (q, cos, sin))  # the cat's reader is pointwise: read by index arithmetic
    cm = compile_and_compare(g, (q, cos, sin), fused=False)
    assert [op for op in unfused_ops(cm) if op not in ("torch.aten.slice.Tensor",)] == ["torch.aten.cat"]


def test_bool_pad_with_a_non_boolean_value_matches_eager():
    # Eager converts the value to bool first (-inf -> True); such pads stay ATen (fuzz seed 70404655).
    x = torch.rand(3, 4) > 0.5
    for value in (float("-inf"), 0.5, 2.0, 1.0):
        compile_and_compare(lambda x, value=value: F.pad(x, [1, 1], value=value), (x,), fused=value == 1.0)


def test_reflection_and_replication_pad_ops():
    # The reflection_pad*d / replication_pad*d spellings (torch.compile's graphs give F.pad these;
    # torch.export gives aten.pad), each fused with its consumer; 3-d pads mirror / clamp three dims.
    A = torch.ops.aten
    a, b, c = torch.randn(2, 3, 5), torch.randn(1, 2, 4, 5), torch.randn(1, 2, 3, 4, 5)
    cm = compile_and_compare(
        lambda a, b, c: (
            A.reflection_pad1d(a, [2, 1]) * 2, A.replication_pad1d(a, [0, 3]) + 1,
            A.reflection_pad2d(b, [2, 1, 3, 1]) - 2, A.replication_pad2d(b, [1, 2, 0, 2]) * 2,
            A.reflection_pad3d(c, [1, 2, 2, 1, 1, 1]) - 1, A.replication_pad3d(c, [1, 0, 2, 1, 0, 3]) * 3,
            F.pad(c, (1, 1, 0, 2, 2, 1), mode="reflect"),
        ),
        (a, b, c),
    )
    fused_with(cm, *(f"torch.aten.{mode}_pad{n}d" for mode in ("reflection", "replication") for n in (1, 2, 3)))
