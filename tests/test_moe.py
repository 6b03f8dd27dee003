"""A Mixtral-style MoE layer and its routing chain, against eager PyTorch (issue 22).

The routing ops: softmax over the router's logits, top-k, the weights'
normalisation, a sort of the chosen experts, histc + cumsum of the sorted ids
(the experts' row offsets), the inverse permutation (an index_put into an
`empty`) and the weighted sum back per token. topk and sort stay ATen calls.
"""

from __future__ import annotations

import pytest
import torch

import mlirfuse
from helpers import Lambda, assert_fully_fused


def _check(fn, *inputs, launches: int | None = None, **tolerances):
    cm = mlirfuse.compile(Lambda(fn), inputs)
    expected, actual = fn(*inputs), cm(*inputs)
    torch.testing.assert_close(actual, expected, **tolerances)
    if launches is not None:
        assert cm.stats["launches"] == launches, cm.mlir
    return cm


def test_histc_is_one_reduction_kernel():
    # Values on every bin edge, the range's ends, outside it on both sides, and NaN (counted nowhere).
    x = torch.tensor([0.0, 0.75, 0.7499999, 1.5, 2.25, 3.0, 3.0001, -0.0001, float("nan"), 2.9999, 1.0, 2.0] * 3)
    cm = _check(lambda v: torch.histc(v, 4, 0, 3), x, launches=1, rtol=0, atol=0)
    assert_fully_fused(cm)


def test_histc_bin_edges_match_aten_in_float32():
    # Random values over [lo, hi] with a width that does not divide evenly: each value's bin is ATen's.
    torch.manual_seed(0)
    x = torch.rand(257) * 2.2 - 0.1
    _check(lambda v: torch.histc(v, 7, -0.1, 2.1), x, launches=1, rtol=0, atol=0)


def test_cumsum_of_histc_is_the_expert_offsets_kernel():
    # transformers' grouped_mm routing: the sorted expert ids' counts, then their running sum as int32 offsets.
    ids = torch.tensor([0, 0, 1, 3, 3, 3, 2, 0, 1, 3, 3, 2, 2, 0, 1, 1])

    def offsets(expert_ids):
        return torch.histc(expert_ids.float(), 4, 0, 3).cumsum(0, dtype=torch.int32)

    cm = _check(offsets, ids, launches=1, rtol=0, atol=0)
    assert_fully_fused(cm)


def test_histc_of_many_bins_stays_aten():
    # Past HISTC_MAX_BINS a one-hot reduction would re-read its input once per bin: ATen's histc, and the reason.
    x = torch.rand(64) * 100
    cm = mlirfuse.compile(Lambda(lambda v: torch.histc(v * 2, 100, 0, 200) + 1), (x,), explain=True)
    torch.testing.assert_close(cm(x), torch.histc(x * 2, 100, 0, 200) + 1, rtol=0, atol=0)
    assert cm.stats["unfused_ops"] == 1 and '"torch.aten.histc"' in cm.mlir
    reasons = [r for each in cm.explain().values() for r in each]
    assert "consumer torch.aten.histc: histc of more than 64 bins (a one-hot reduction re-reads its input once per bin)" in reasons


def _moe_block(hidden: int = 32, experts: int = 4):
    """transformers' MixtralSparseMoeBlock (top-2, SwiGLU experts through its default grouped_mm), weights N(0, 0.05)."""
    transformers = pytest.importorskip("transformers")
    from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock

    config = transformers.MixtralConfig(hidden_size=hidden, intermediate_size=2 * hidden, num_local_experts=experts,
                                        num_experts_per_tok=2, experts_implementation="grouped_mm")
    torch.manual_seed(0)
    block = MixtralSparseMoeBlock(config).eval()
    with torch.no_grad():
        for p in block.parameters():
            p.normal_(0, 0.05)
    return block


def _aten_calls(cm) -> list[str]:
    """The ATen (and custom-op) calls of the compiled program, views excluded, by op name."""
    return [s.name for s in cm.program.steps if s.kind == "aten" and not s.view]


def test_moe_layer_matches_eager_and_routes_in_kernels():
    block = _moe_block()
    x = torch.randn(2, 8, 32)
    cm = mlirfuse.compile(block, (x,), explain=True)
    with torch.no_grad():
        expected = block(x)
    torch.testing.assert_close(cm(x), expected)
    calls = _aten_calls(cm)
    # histc and the cumsum of it are one kernel; topk and sort stay ATen and say why.
    assert not any("histc" in c for c in calls), calls
    reasons = [r for each in cm.explain().values() for r in each]
    assert any(r.startswith("producer torch.aten.sort: sort stays an ATen call") for r in reasons), reasons
    assert any(r.startswith("consumer torch.aten.topk: topk stays an ATen call") for r in reasons), reasons


def test_inverse_permutation_is_one_kernel_writing_its_own_output():
    # transformers' `inv_perm = empty_like(perm); inv_perm[perm] = arange(n)`: every element written, so the
    # `empty` is the scatter kernel's fresh output (no ATen empty, no copy of it into the output).
    perm = torch.randperm(37, generator=torch.Generator().manual_seed(0))

    def inverse(p):
        inv = torch.empty_like(p)
        inv[p] = torch.arange(p.numel())
        return inv

    cm = _check(inverse, perm, launches=1, rtol=0, atol=0)
    assert_fully_fused(cm)
    assert not any(kernel.init for kernel in cm.kernels.values())  # nothing copied into an output before the launch


def test_weighted_gather_back_per_token_is_one_reduction_kernel():
    # The MoE's combine: expert rows scaled by their weights, gathered back by the inverse permutation, viewed
    # per token and summed over its k experts: one reduction kernel reading gathers of its inputs.
    torch.manual_seed(0)
    y, w = torch.randn(12, 5), torch.rand(12)
    inv = torch.randperm(12)

    def combine(rows, weights, index):
        return (rows * weights.unsqueeze(-1))[index].view(6, 2, 5).sum(dim=1)

    cm = _check(combine, y, w, inv, launches=1)
    assert_fully_fused(cm)


def test_gather_viewed_across_its_rows_is_not_rewritten():
    # A view that regroups the gathered rows' elements (not only dim 0) reads the gather in another order: the
    # view stays on the gather's result, and the numbers are eager's.
    torch.manual_seed(0)
    y, idx = torch.randn(6, 4), torch.tensor([5, 0, 3, 3, 1, 2])
    _check(lambda t, i: (t * 2.0)[i].view(4, 6).sum(dim=1), y, idx)


def test_scatter_takes_its_pointwise_sibling():
    # The sorted order read twice: weights gathered by it (pointwise over the index) and the inverse permutation
    # (a scatter over it): one kernel storing both.
    perm = torch.randperm(21, generator=torch.Generator().manual_seed(1))
    w = torch.rand(21)

    def both(p, weights):
        gathered = weights[p] * 3.0  # (before the scatter, as an MoE's routing reads them: its prologue)
        inv = torch.empty_like(p)
        inv[p] = torch.arange(p.numel())
        return inv, gathered

    cm = _check(both, perm, w, launches=1)
    assert_fully_fused(cm)
