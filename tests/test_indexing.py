"""Gathers and creation ops as Triton kernels, against eager PyTorch.

Each case compiles a small module, compares with eager and checks that the
indexing or creation op ran inside a fusion.kernel, fused with its
neighbours (one launch, no ATen fallback). Out-of-range indices raise the
exception eager raises; negative indices wrap where eager wraps them.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from helpers import Lambda, compile_and_compare, kernel_ops


def ids(high: int, shape, dtype=torch.int64):
    return torch.randint(0, high, shape, dtype=dtype)


def one_kernel(fn, inputs, op, **tol):
    cm = compile_and_compare(fn, inputs, op=op, **tol)
    assert cm.stats["launches"] == 1, cm.stats
    return cm


# --- gathers -------------------------------------------------------------------------------


def test_embedding_fused_with_its_consumer():
    w, x = torch.randn(10, 4), torch.randn(2, 3, 4)
    cm = one_kernel(lambda i, w, x: torch.relu(F.embedding(i, w) * 2 + x), (ids(10, (2, 3)), w, x), "torch.aten.embedding")
    assert "_t0 + (" in next(iter(cm.kernels.values())).source  # a load from the table at computed offsets


def test_embedding_bf16_table_and_int32_ids():
    w = torch.randn(7, 5).to(torch.bfloat16)
    one_kernel(lambda i, w: F.embedding(i, w) * 3, (ids(7, (4,), torch.int32), w), "torch.aten.embedding")


def test_embedding_transposed_table_and_sum():
    # The table is a view (read through its own strides); the gather is a reduction's prologue.
    w = torch.randn(4, 9)
    one_kernel(lambda i, w: F.embedding(i, w.t()).sum(-1), (ids(9, (2, 5)), w), "torch.aten.embedding")


def test_embedding_out_of_range_raises_like_eager():
    model = Lambda(lambda i, w: F.embedding(i, w) + 1)
    w = torch.randn(5, 3)
    cm = mlirfuse.compile(model, (ids(5, (4,)), w))
    for bad in (torch.tensor([0, 5, 1, 2]), torch.tensor([0, -1, 1, 2])):
        with pytest.raises(IndexError):
            model(bad, w)
        with pytest.raises(IndexError):
            cm(bad, w)


def test_index_select_with_duplicates():
    x, index = torch.randn(5, 6), torch.tensor([4, 0, 4, 2])
    fn = lambda x, i: tuple(torch.index_select(x, dim, i) - 1 for dim in (0, 1, -1))  # noqa: E731
    compile_and_compare(fn, (x, index), op="torch.aten.index_select")


def test_index_select_int64_values():
    x = torch.randint(-100, 100, (6, 3))
    one_kernel(lambda x, i: torch.index_select(x, 0, i) * 2, (x, torch.tensor([5, 1, 1])), "torch.aten.index_select")


def test_index_select_negative_index_raises_like_eager():
    model = Lambda(lambda x, i: torch.index_select(x, 0, i) + 1)
    x = torch.randn(4, 2)
    cm = mlirfuse.compile(model, (x, torch.tensor([0, 1])))
    with pytest.raises(IndexError):
        model(x, torch.tensor([0, -1]))
    with pytest.raises(IndexError):
        cm(x, torch.tensor([0, -1]))


def test_gather_with_a_computed_index():
    # The index is computed in the kernel: it has the result's shape, so it needs no reshaping.
    x, index = torch.randn(3, 5), ids(5, (3, 4))
    one_kernel(lambda x, i: torch.gather(x, 1, 4 - i) * 2, (x, index), "torch.aten.gather")


def test_gather_from_an_elementwise_table():
    """Issue 22: a table computed by elementwise ops of inputs is evaluated at the gathered coordinates, in one kernel."""
    x, j = torch.randn(4, 5), torch.tensor([3, 0, 3, 1])
    cm = one_kernel(lambda x, j: torch.index_select(torch.exp(x) * 2, 0, j) + 1, (x, j), "torch.aten.index_select")
    assert "of a computed table" in next(iter(cm.kernels.values())).source


def test_padding_mask_gathered_from_a_bool_cast():
    """A decoder's padding mask: the mask cast to bool, gathered at aranges over batch and keys, and-ed with causality."""

    def mask(m):
        b, k = torch.arange(2).view(2, 1, 1, 1), torch.arange(8).view(1, 1, 1, 8)
        causal = torch.arange(8).view(1, 1, 1, 8) <= torch.arange(8).view(1, 1, 8, 1)
        return causal & m.bool()[b, k]

    m = torch.ones(2, 8, dtype=torch.long)
    m[0, :3] = 0
    one_kernel(mask, (m,), "torch.aten.index.Tensor")


def test_gather_from_a_computed_table_of_higher_rank_stores_it():
    # Both dims indexed: the [4,5] table's input cannot be addressed in the [3] space; the cast is a kernel of its own.
    x, i, j = torch.randn(4, 5), torch.tensor([0, 3, 1]), torch.tensor([4, 0, 2])
    cm = compile_and_compare(lambda x, i, j: (x * 2)[i, j] + 1, (x, i, j), fused=False)
    assert cm.stats["launches"] == 2, cm.stats


def test_embedding_of_position_ids_from_an_arange():
    """Issue 22: ids computed from coordinates alone, read at [1,t,1] of the embedding's result, are evaluated there."""
    w, x = torch.randn(10, 4), torch.randn(2, 8, 4)
    one_kernel(lambda w, x: F.embedding((torch.arange(8) + 1).unsqueeze(0), w) + x, (w, x), "torch.aten.embedding")


def test_gather_dim0_f16():
    x, index = torch.randn(4, 3).half(), ids(4, (6, 3))
    one_kernel(lambda x, i: torch.gather(x, 0, i) + 1, (x, index), "torch.aten.gather")


def test_gather_out_of_range_raises_like_eager():
    model = Lambda(lambda x, i: torch.gather(x, 1, i) + 1)
    x = torch.randn(2, 3)
    cm = mlirfuse.compile(model, (x, ids(3, (2, 2))))
    bad = torch.tensor([[0, 3], [1, 1]])
    with pytest.raises(RuntimeError):
        model(x, bad)
    with pytest.raises(RuntimeError):
        cm(x, bad)


def test_advanced_indexing_with_negative_indices():
    # x[i], x[:, i], x[i, j] broadcast, x[i, :, j] apart; negatives count from the end, as eager's.
    def fn(x, i, j):
        return x[i] + 1, x[:, i] * 2, x[i.unsqueeze(1), j] - 1, torch.exp(x[i, :, j])

    compile_and_compare(fn, (torch.randn(6, 6, 6), torch.tensor([0, -1, 3, -6]), torch.tensor([2, -3, 5, 0])),
                        op="torch.aten.index.Tensor")


def test_advanced_indexing_out_of_range_raises_like_eager():
    model = Lambda(lambda x, i: x[i] * 2)
    x = torch.randn(4, 2)
    cm = mlirfuse.compile(model, (x, torch.tensor([0, 1])))
    for bad in (torch.tensor([0, 4]), torch.tensor([-5, 0])):
        with pytest.raises(IndexError):
            model(x, bad)
        with pytest.raises(IndexError):
            cm(x, bad)


def test_index_by_a_constant_in_the_code_is_a_view():
    """Issue 22: Falcon's `qkv[..., [-2]]`. The index tensor torch.export lifts (and clones) is inlined, and
    the gather a slice: x's slices are read by the consumer kernel through strides, with no clone or gather kernel."""

    def fn(x):
        k, v = x[:, :, [-2]], x[:, :, [-1]]
        return torch.relu(k.expand(2, 3, 2, 5) * 2) + v

    x = torch.randn(2, 3, 4, 5)
    cm = compile_and_compare(fn, (x,))
    assert cm.stats["launches"] == 1, cm.mlir
    assert not [op for op in kernel_ops(cm) if op in ("torch.aten.index.Tensor", "torch.aten.clone")], kernel_ops(cm)
    assert [what.tolist() for kind, what in cm.imported.bindings if kind == "constant"] == [[-2], [-1]]
    other = torch.randn(2, 3, 4, 5)
    torch.testing.assert_close(cm(other), fn(other))


def test_index_by_a_module_tensor_attribute_stays_bound():
    """A plain tensor attribute may change between calls: it is not inlined, and the gather reads the new value."""

    class Pick(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.at = torch.tensor([1])

        def forward(self, x):
            return x[:, self.at] * 2

    model, x = Pick(), torch.randn(3, 4)
    cm = mlirfuse.compile(model, (x,))
    torch.testing.assert_close(cm(x), model(x))
    model.at.fill_(3)
    torch.testing.assert_close(cm(x), model(x))


def test_boolean_mask_index_stays_aten():
    x = torch.randn(5)
    cm = compile_and_compare(lambda x, m: x[m], (x, x > 0), fused=False)
    assert cm.stats["launches"] == 0


# --- creation ------------------------------------------------------------------------------


CREATION_OPS = {
    "arange": lambda x: x + torch.arange(6),
    "arange.start_step": lambda x: (x[:, :3] * torch.arange(0.5, 2.0, 0.5), x + torch.arange(-0.3, 0.3, 0.1)),
    "arange.start": lambda x: x * torch.arange(1, 7),
    "full": lambda x: x - torch.full((4, 6), 2.5),
    "zeros": lambda x: torch.maximum(x, torch.zeros(6)),
    "ones": lambda x: x / torch.ones(4, 1),
    "zeros_like": lambda x: torch.zeros_like(x) + x * 2,
    "ones_like": lambda x: torch.ones_like(x) - x,
    "full_like": lambda x: torch.full_like(x, 7.0) * x,
    "new_ones": lambda x: x.new_ones(4, 6) + x,
    "eye": lambda x: (x[:, :4] + torch.eye(4), x * torch.eye(4, 6)),
    "tril": lambda x: (torch.tril(x * 2), x * torch.ones(4, 6).tril(-1)),
    "triu": lambda x: torch.triu(x + 1, 1),
}


def test_creation_fused():
    # Each op in a kernel (the iteration space's coordinates give its values), none through ATen.
    cm = compile_and_compare(lambda x: tuple(f(x) for f in CREATION_OPS.values()), (torch.randn(4, 6),))
    found = {op.split(".")[2] for op in kernel_ops(cm)}
    assert {op.split(".")[0] for op in CREATION_OPS} <= found, found


def test_int64_arange_and_bool_tril():
    fn = lambda i: (i + torch.arange(9).view(3, 3), torch.ones(3, 3, dtype=torch.bool).tril() & (i[:, :1] > 0))  # noqa: E731
    compile_and_compare(fn, (torch.randint(-4, 4, (3, 3)),), op="torch.aten.tril")


def test_fill_of_a_clone():
    def fn(x):
        y = x.clone()
        y.fill_(3.0)
        return y * x

    compile_and_compare(fn, (torch.randn(3, 4),), op="torch.aten.fill")


def test_fill_with_a_tensor_value():
    # fill_(0-d tensor) is imported as an expand of the value and a clone: a broadcast load in the kernel.
    def fn(x, v):
        y = x * 2
        y.fill_(v)
        return y + x

    compile_and_compare(fn, (torch.randn(3, 4), torch.tensor(1.5)))


def test_f16_full_rounds_like_eager():
    x = torch.randn(4, 6).half()
    one_kernel(lambda x: x + torch.full((4, 6), 0.1, dtype=torch.float16), (x,), "torch.aten.full")


def test_kernel_without_inputs():
    cm = compile_and_compare(lambda x: (torch.ones(3, 3).triu(1) * 5, x + 1), (torch.randn(2),))
    assert cm.stats["launches"] == 2, cm.stats


def test_causal_mask_softmax_is_one_kernel():
    # The mask is computed from coordinates inside the softmax kernel: nothing is loaded for it.
    def fn(scores):
        t = scores.shape[-1]
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        return scores.masked_fill(mask, float("-inf")).softmax(-1)

    one_kernel(fn, (torch.randn(2, 3, 5, 5),), "torch.aten.triu")


# --- scatters ------------------------------------------------------------------------------


def test_scatter_add_duplicates_with_fused_source():
    # Duplicate indices: the kernel adds atomically; the source's relu runs in the same kernel.
    x, src = torch.randn(3, 5), torch.randn(3, 4)
    index = torch.tensor([[0, 0, 4, 0], [1, 1, 1, 1], [2, 3, 2, 3]])
    one_kernel(lambda x, i, s: x.scatter_add(1, i, torch.relu(s)), (x, index, src), "torch.aten.scatter_add")


def test_scatter_add_int64():
    x, src = torch.randint(-9, 9, (4, 3)), torch.randint(-9, 9, (6, 3))
    index = torch.tensor([[0, 1, 2], [0, 1, 2], [3, 3, 3], [0, 0, 0], [1, 2, 3], [3, 2, 1]])
    one_kernel(lambda x, i, s: x.scatter_add(0, i, s), (x, index, src), "torch.aten.scatter_add")


def test_scatter_src_and_value():
    x, src = torch.randn(4, 6), torch.randn(4, 6)
    index = torch.stack([torch.randperm(6)[:3] for _ in range(4)])  # distinct per row: no write races
    compile_and_compare(lambda x, i, s: x.scatter(1, i, s * 2), (x, index, src), op="torch.aten.scatter")
    compile_and_compare(lambda x, i: x.scatter(1, i, 2.5), (x, index), op="torch.aten.scatter")


def test_index_put_accumulate_duplicates_and_negatives():
    def fn(x, i, v):
        return torch.index_put(x, (i,), v * 3, accumulate=True)

    x, v = torch.randn(5, 3), torch.randn(4, 3)
    one_kernel(fn, (x, torch.tensor([0, -1, 4, 0]), v), "torch.aten.index_put")


def test_index_put_setitem_bf16():
    def fn(x, i, v):
        y = x.clone()
        y[i] = v
        return y

    x, v = torch.randn(6, 4).to(torch.bfloat16), torch.randn(4).to(torch.bfloat16)
    compile_and_compare(fn, (x, torch.tensor([5, -6, 2]), v), op="torch.aten.index_put")


def test_scatter_out_of_range_raises_like_eager():
    model = Lambda(lambda x, i: torch.index_put(x, (i,), torch.ones(2), accumulate=True))
    x = torch.zeros(4)
    cm = mlirfuse.compile(model, (x, torch.tensor([0, 1])))
    with pytest.raises(IndexError):
        model(x, torch.tensor([0, 4]))
    with pytest.raises(IndexError):
        cm(x, torch.tensor([0, 4]))


def test_slice_and_select_scatter():
    # The input everywhere but in the slice (select), where src is read at its own coordinates.
    x, y, z = torch.randn(4, 7), torch.randn(4, 3), torch.randn(7)
    fn = lambda x, y, z: torch.select_scatter(torch.slice_scatter(x * 2, y, 1, 1, 7, 2), z, 0, -1) + 1  # noqa: E731
    one_kernel(fn, (x, y, z), "torch.aten.slice_scatter")


def test_take_along_dim_wraps_indices_like_eager():
    # A gather of the indices taken modulo the dim's size (eager wraps -1, size + 1, 100 alike), one kernel.
    x = torch.randn(4, 5)
    i = torch.tensor([[0, -1, 7], [4, 2, -6], [100, 3, 1], [0, 0, -5]])
    cm = one_kernel(lambda x, i: torch.take_along_dim(x, i, 1) * 2, (x, i), "torch.aten.gather")
    assert "remainder" in cm.mlir


def test_take_along_dim_broadcast_and_flattened():
    # A broadcast index is expanded (a view); without a dim both are flattened and an index out of range raises, as eager.
    x, i, j = torch.randn(5, 5).to(torch.bfloat16), torch.tensor([[0, -1]]), torch.tensor([[3, 24, 2], [7, 0, 10]])
    one_kernel(lambda x, i: torch.take_along_dim(x, i, 1) + 1, (x, i), "torch.aten.gather")
    fn = lambda x, j: torch.take_along_dim(x, j) * 2  # noqa: E731
    model, cm = Lambda(fn), one_kernel(fn, (x, j), "torch.aten.gather")
    for bad in (torch.tensor([[3, 25, 2], [7, 0, 10]]), torch.tensor([[3, -1, 2], [7, 0, 10]])):
        with pytest.raises(RuntimeError):
            model(x, bad)
        with pytest.raises(RuntimeError):
            cm(x, bad)


def test_scatter_reduce_sum_with_and_without_self():
    # sum is scatter_add; without include_self the scattered-to places start from 0 (a scatter of 0 first).
    x, i, src = torch.randn(3, 4), torch.tensor([[0, 1], [2, 3], [1, 1]]), torch.randn(3, 2)
    cm = compile_and_compare(
        lambda x, i, src: (x.scatter_reduce(1, i, src, "sum", include_self=False) * 2, x.scatter_reduce(0, i % 3, src, "sum")),
        (x, i, src), op="torch.aten.scatter_add",
    )
    assert cm.stats["launches"] == 4, cm.stats  # scatter of 0, then add (its epilogue: a kernel of its own); and i % 3 + add


class _ComputedGather(torch.nn.Module):
    def forward(self, x, i):
        return torch.gather(x, 1, i + 2) * 2


def test_computed_index_out_of_range_raises_like_eager_under_bounds_checking(monkeypatch):
    # The index is computed in the kernel (i + 2), so no host check sees it: the kernel asserts its range on
    # the device, live in checked launches (MLIRFUSE_CHECK_BOUNDS), and the launcher raises eager's exception.
    x, i = torch.randn(3, 5), torch.randint(0, 3, (3, 4))
    cm = mlirfuse.compile(_ComputedGather(), (x, i))
    (kernel,) = cm.kernels.values()
    assert "tl.device_assert(" in kernel.source
    bad = i.clone()
    bad[1, 2] = 4  # 6 in a dim of 5
    with pytest.raises(RuntimeError):
        _ComputedGather()(x, bad)
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "1")
    with pytest.raises(RuntimeError, match="out of bounds for dimension with size 5"):
        cm(x, bad)
    torch.testing.assert_close(cm(x, i), _ComputedGather()(x, i))
    bad[1, 2] = -3  # -1: gather takes no negative index
    with pytest.raises(RuntimeError, match="out of bounds"):
        cm(x, bad)
