"""Views inside groups and around extern calls, against eager PyTorch.

A view read by a group is a load site of its kernel (strides from torch's
view functions, no copy); a reshape of a pointwise result is stored
row-major; views feeding matmuls are the extern call's strided operands.
A cat of group results is written by one kernel into slices of its buffer.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import mlirfuse
from helpers import Lambda

TOL = dict(rtol=1e-5, atol=1e-5)


def compile_checked(fn, *inputs):
    model = fn if isinstance(fn, nn.Module) else Lambda(fn)
    cm = mlirfuse.compile(model, inputs)
    with torch.no_grad():
        expected = model(*inputs)
    got = cm(*inputs)
    torch.testing.assert_close(got, expected, **TOL)
    return cm


def aten_steps(cm) -> list[str]:
    """ATen ops the runtime runs outside kernels and extern calls' operands."""
    return [s.name for s in cm.program.steps if s.kind == "aten" and not s.operand_view]


CASES = {
    "view+transpose": (lambda x, y: torch.relu(x.view(2, 8, 2, 4).transpose(1, 2) * y), ((2, 8, 8), (2, 2, 8, 4))),
    "permute": (lambda x: torch.exp(x.permute(2, 0, 1)) + 1, ((3, 4, 5),)),
    "expand": (lambda x, y: x.expand(4, 6) * y, ((1, 6), (4, 6))),
    "squeeze+unsqueeze": (lambda x, y: x.squeeze(0).unsqueeze(1) + y, ((1, 5), (5, 3))),
    "select": (lambda x: torch.sigmoid(x.select(1, 2)), ((4, 3, 6),)),
    "slice with step": (lambda x: torch.tanh(x[:, 1::2]), ((4, 9),)),
    "t": (lambda x, y: x.t() - y, ((6, 4), (4, 6))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_view_of_input_is_read_by_the_kernel(name):
    fn, shapes = CASES[name]
    cm = compile_checked(fn, *[torch.randn(s) for s in shapes])
    assert cm.stats["launches"] == 1, cm.stats
    assert aten_steps(cm) == [], aten_steps(cm)


def test_views_in_a_reduction():
    # softmax over a transposed, sliced input: one persistent reduction kernel.
    cm = compile_checked(lambda x: torch.softmax(x.transpose(0, 1)[:, 2:], dim=-1), torch.randn(10, 6))
    assert cm.stats["launches"] == 1 and aten_steps(cm) == [], cm.stats


def test_exit_reshape_is_stored_not_copied():
    x = torch.randn(4, 6)
    cm = compile_checked(lambda x: (torch.relu(x).reshape(-1), torch.relu(x).view(2, 12)), x)
    assert cm.stats["launches"] == 1 and aten_steps(cm) == [], aten_steps(cm)


def test_transpose_of_computed_value_splits_the_group():
    cm = compile_checked(lambda x: torch.exp(x).t() + 1, torch.randn(5, 7))
    assert cm.stats["launches"] == 2 and aten_steps(cm) == [], cm.stats


class Attention(nn.Module):
    """Causal self-attention written with views and matmuls, as nanoGPT does."""

    def __init__(self, d: int = 32, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.register_buffer("causal", torch.ones(8, 8).tril(), persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        att = att.masked_fill(self.causal[:t, :t] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, d))


def test_attention_views_are_read_by_kernels():
    torch.manual_seed(0)
    cm = compile_checked(Attention().eval(), torch.randn(2, 8, 32))
    # The linears are GEMMs and attention one kernel, reading the heads by strides. The q/k/v
    # split's slices move onto the qkv weight and bias (fusion-chunk-motion, matmul-slices):
    # one grouped GEMM of three, no ATen view left.
    assert aten_steps(cm) == [] and cm.stats["unfused_ops"] == 0, cm.stats
    assert sorted(k.kind for k in cm.kernels.values()).count("attention") == 1
    assert any("3 GEMMs share each A tile" in k.source for k in cm.kernels.values())


CONCATS = {
    "pieces of different sizes": (
        lambda a, b, c: (torch.cat([torch.sigmoid(a), torch.tanh(b), c], dim=1), torch.sigmoid(a)),
        ((4, 8), (4, 16), (4, 4)),
    ),
    "along dim 0": (lambda a, b: torch.cat([torch.relu(a), torch.exp(b)], dim=0), ((3, 5), (6, 5))),
    "broadcast inside a piece": (lambda a, b: torch.cat([a * b, torch.neg(a)], dim=-1), ((4, 6), (6,))),
}


@pytest.mark.parametrize("name", list(CONCATS))
def test_concat_is_written_by_one_kernel(name):
    fn, shapes = CONCATS[name]
    cm = compile_checked(fn, *[torch.randn(s) for s in shapes])
    assert cm.stats["launches"] == 1 and aten_steps(cm) == [], aten_steps(cm)


@pytest.mark.parametrize(
    "fn",
    [lambda x, w: torch.relu(x.reshape(-1)) * 2, lambda x, w: x.reshape(6, 4) @ w],
    ids=["kernel", "extern"],
)
def test_reshape_of_a_non_contiguous_input_matches_eager(fn):
    # torch.export records reshape as view for the contiguous example; a
    # transposed input of the same shape passes the guards and cannot be
    # viewed: it is reshaped (copied), as eager does.
    w = torch.randn(4, 3)
    cm = mlirfuse.compile(Lambda(fn), (torch.randn(4, 6), w))
    x = torch.randn(6, 4).t()
    torch.testing.assert_close(cm(x, w), fn(x, w), **TOL)


# Issue 22: values computed from coordinates alone (aranges, fills, elementwise ops of them), read through
# views by a pointwise group, are recomputed at the views' coordinates: one kernel, no stored intermediate.
COORDINATE_VIEWS = {
    "causal mask": (lambda x: (torch.arange(8).unsqueeze(0) <= torch.arange(8).unsqueeze(1)) & (x > 0), ((8, 8),)),
    "position ids": (lambda x: x * (torch.arange(8) + 3).unsqueeze(1).float(), ((8, 5),)),
    "transpose": (lambda x: x + (torch.arange(12).view(3, 4) * 2).t(), ((4, 3),)),
    "slice with step": (lambda x: x + torch.arange(20, dtype=torch.float32)[3::4], ((5,),)),
    "select": (lambda x: x - torch.arange(24).view(2, 3, 4).select(1, 2), ((2, 4),)),
    "reshape": (lambda x: x * torch.arange(1, 13, dtype=torch.float32).reshape(3, 4).reshape(2, 6), ((2, 6),)),
    "expand and permute": (
        lambda x: x + (torch.arange(4) * 10).unsqueeze(0).expand(3, 4).permute(1, 0), ((4, 3),)
    ),
    "pad of an arange": (lambda x: F.pad(torch.arange(5, dtype=torch.float32) + x, (1, 2)), ((5,),)),
}


@pytest.mark.parametrize("name", list(COORDINATE_VIEWS))
def test_view_of_coordinate_value_is_recomputed(name):
    fn, shapes = COORDINATE_VIEWS[name]
    inputs = [torch.randn(s) for s in shapes]
    cm = compile_checked(fn, *inputs)
    assert cm.stats["launches"] == 1, (cm.stats, cm.mlir)
    assert aten_steps(cm) == [], aten_steps(cm)


def test_position_ids_read_by_two_kernels_are_recomputed_in_each():
    """A decoder's preamble: the position ids feed the causal mask and the rotary angles (two iteration spaces)."""

    def preamble(inv_freq):
        position = torch.arange(8) + 0
        mask = position.unsqueeze(0) <= position.unsqueeze(1)
        angles = position.unsqueeze(1).float() * inv_freq
        return mask, torch.cat([angles, angles], -1).cos()

    cm = compile_checked(preamble, torch.rand(4))
    assert cm.stats["launches"] == 2, (cm.stats, cm.mlir)


def test_identity_expand_of_a_computed_mask_is_one_kernel():
    """Eager attention's additive mask: a bool mask computed from an input, expanded to its own shape, made a bias."""
    big = torch.finfo(torch.float32).min
    cm = compile_checked(lambda m: torch.where((m != 0).expand(2, -1, 8, 8), torch.zeros(()), big), torch.randint(0, 2, (2, 1, 8, 8)))
    assert cm.stats["launches"] == 1, (cm.stats, cm.mlir)


def _rotate(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


def falcon_rotary(qkv, cos, sin):
    """Falcon's q and k off its fused qkv ([b, t, groups, q heads per group + k + v, d]), rotated.

    q's slice and k's broadcast over the group's heads are not viewable as
    [b, heads, t, d]: eager copies them (clone) before the reshape.
    """
    x = qkv.view(2, 8, 2, 4, 8)
    q = x[:, :, :, :-2].reshape(2, 8, 4, 8).transpose(1, 2)
    k = x[:, :, :, 2:3].expand(2, 8, 2, 2, 8).reshape(2, 8, 4, 8).transpose(1, 2)
    return _rotate(q, cos, sin), _rotate(k, cos, sin)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_views_of_copies_are_read_through_in_one_kernel(dtype):
    """Issue 22: Falcon's copies of q and the broadcast k were a launch of their own, read back by the rotary kernel.

    A group that only copies (views of) its inputs computes nothing: the
    rotary kernel reads the inputs at the views' coordinates instead (in
    more dims than its iteration space: the site's own strides).
    """
    qkv, cos, sin = torch.randn(2, 8, 64).to(dtype), torch.randn(8, 8).to(dtype), torch.randn(8, 8).to(dtype)
    # (f16: eager rounds after each op, the kernel once per result.)
    tol = TOL if dtype == torch.float32 else dict(rtol=1e-2, atol=1e-2)
    cm = mlirfuse.compile(Lambda(falcon_rotary), (qkv, cos, sin))
    # Another qkv's strides too: the copies read their input through strides passed at launch.
    for x in (qkv, torch.randn(2, 8, 128).to(dtype)[..., ::2]):
        torch.testing.assert_close(cm(x, cos, sin), falcon_rotary(x, cos, sin), **tol)
    assert cm.stats["launches"] == 1, (cm.stats, cm.mlir)
    assert aten_steps(cm) == [], aten_steps(cm)


def test_view_of_a_computed_copy_splits_the_group():
    # The copy's operand is computed (exp): recomputing it at the view's coordinates is not a copy's load.
    cm = compile_checked(lambda x: x.view(2, 4, 3)[:, :, :2].exp().clone().reshape(2, 8).t() + 1, torch.randn(2, 12))
    assert cm.stats["launches"] == 2 and aten_steps(cm) == [], cm.stats
