"""A training step of a ResNet block: batch norm's per-channel values in its reduction kernels (issue 22).

fusion-keepdim-rows computes the running-stat updates and the backward's
per-channel terms in the reductions' keepdim shape, so they join the
reduction kernels; fusion-fuse-horizontal stores `num_batches_tracked + 1`
from a reduction kernel (row 0); fusion-fuse-vertical computes the
threshold backward's `0` in each kernel reading it. Numerics against eager:
the loss, every gradient, and the running mean, variance and counter after
each step (tests/helpers.py's `train_side_by_side`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.backend import Backend
from helpers import train_side_by_side

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from launches import ResNetBlock  # noqa: E402  (torchvision's BasicBlock, BN statistics drawn)


@pytest.fixture(autouse=True)
def _fresh_dynamo(fresh_dynamo):
    """Every test here compiles through Dynamo: tests/conftest.py's `fresh_dynamo` around each."""


@pytest.mark.parametrize("cin,cout,stride,convs", [(8, 8, 1, 2), (8, 16, 2, 3)], ids=["basic", "downsample"])
def test_resnet_block_trains_like_eager_with_batch_norm_in_its_reductions(cin, cout, stride, convs):
    torch.manual_seed(0)
    side = 6 // stride
    batches = [(torch.randn(2, cin, 6, 6) * (i + 1) + i, torch.randn(2, cout, side, side)) for i in range(2)]
    backend = Backend()
    _, ours = train_side_by_side(ResNetBlock(cin, cout, stride).train(), lambda m: torch.compile(m, backend=backend), batches)
    assert ours.bn1.num_batches_tracked.item() == 2
    forward, backward = backend.stats["forward"], backend.stats["backward"]
    # Forward: each convolution a Triton template, two reduction kernels (each batch norm's statistics, output and
    # running stats; the downsample's beside the block's second; the counters stored by one of them): no kernel of
    # its own for a running stat or a counter.
    assert (forward["launches"], forward["unfused_ops"]) == (convs + 2, 0), forward
    # Backward: each batch norm's backward (both sums, the per-channel terms, the input gradient) one kernel (the
    # downsample's shares the block's: both read the output gradient); convolution_backward stays ATen (Inductor's too).
    assert (backward["launches"], backward["unfused_ops"] - backward["unfused_views"]) == (2, convs), backward


class Counted(nn.Module):
    """A step counter beside a reduction: `calls + 1` reads nothing the softmax computes."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.calls += 1
        return torch.softmax(x, -1)


def test_counter_is_stored_once_by_a_reduction_kernel():
    x = torch.randn(64, 512)  # rows of 512: under the interpreter two programs of 32 rows, one of which stores
    model = Counted()
    cm = mlirfuse.compile(model, (x,))
    for _ in range(3):
        torch.testing.assert_close(cm(x), torch.softmax(x, -1))
    assert model.calls.item() == 3
    assert cm.stats["launches"] == 1, cm.stats
    source = "\n".join(k.source for k in cm.kernels.values())
    assert "(xindex == 0)" in source, source


class RowTerms(nn.Module):
    """A batch-norm-backward-like [C] term: a sum without keepdim, scaled per channel, broadcast back."""

    def __init__(self, c: int):
        super().__init__()
        self.w = nn.Parameter(torch.randn(c))

    def forward(self, x):
        s = x.sum(dim=(0, 2, 3))
        term = s * self.w / x[:, 0].numel()
        return x - term[None, :, None, None], s * 2


def test_per_channel_terms_join_the_reduction_kernel():
    torch.manual_seed(0)
    model, x = RowTerms(8), torch.randn(2, 8, 5, 5)
    with torch.no_grad():
        expected = model(x)
        cm = mlirfuse.compile(model, (x,))
        torch.testing.assert_close(cm(x), expected)
    assert cm.stats["launches"] == 1, cm.stats
