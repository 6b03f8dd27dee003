"""Attention as one flash-attention launch (issue 10, item 3), against eager PyTorch.

Explicit attention (matmul -> scale / masks -> softmax -> matmul) and
F.scaled_dot_product_attention (causal, bool and additive masks, scale,
grouped-query heads by enable_gqa or by repeated kv) are each one launch;
lengths are not multiples of the blocks, head dims not powers of two.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from mlirfuse.runtime.aot import compile_kernels, resource_usage
from helpers import Lambda, gpu_launch_specializations

F32 = dict(rtol=1e-4, atol=1e-5)
# bf16/f16: eager rounds the scores and the weights to the dtype, the kernel keeps them in f32.
LOW = {torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2), torch.float16: dict(rtol=1e-3, atol=1e-3)}


def qkv(b=1, h=2, lq=5, lk=None, d=8, dv=None, hkv=None, dtype=torch.float32):
    lk = lk or lq
    q = torch.randn(b, h, lq, d, dtype=dtype)
    k = torch.randn(b, hkv or h, lk, d, dtype=dtype)
    v = torch.randn(b, hkv or h, lk, dv or d, dtype=dtype)
    return q, k, v


def one_launch(model, inputs, **tol):
    """Compile, check the attention is the only launch and nothing runs through ATen, compare with eager."""
    cm = mlirfuse.compile(model, inputs)
    assert cm.stats["launches"] == 1, (cm.stats, cm.mlir)
    assert cm.stats["unfused_ops"] == 0, (cm.stats, cm.mlir)
    (kernel,) = cm.kernels.values()
    assert kernel.kind == "attention"
    with torch.no_grad():
        expected = model(*inputs)
    torch.testing.assert_close(cm(*inputs), expected, **(tol or F32))
    return cm


def explicit(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s + mask
    return torch.softmax(s, dim=-1) @ v


@pytest.mark.parametrize("lq,lk,d", [(5, 5, 8), (17, 11, 16), (7, 19, 12)])
def test_explicit_attention(lq, lk, d):
    one_launch(Lambda(explicit), qkv(lq=lq, lk=lk, d=d))


def test_explicit_attention_additive_mask_broadcast_over_heads():
    q, k, v = qkv(lq=9, lk=13, d=16, dv=8)
    mask = torch.randn(1, 1, 9, 13)
    one_launch(Lambda(explicit), (q, k, v, mask))


class CausalSelfAttention(torch.nn.Module):
    """nanoGPT's attention: a causal buffer sliced to the length, masked_fill(-inf), softmax in f32, cast back."""

    def __init__(self, n: int = 32):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(n, n)).view(1, 1, n, n))

    def forward(self, q, k, v):
        t = q.shape[-2]
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1, dtype=torch.float32).to(q.dtype)
        return att @ v


def test_explicit_causal_masked_fill():
    one_launch(CausalSelfAttention().eval(), qkv(lq=17, d=16))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_explicit_causal_low_precision(dtype):
    one_launch(CausalSelfAttention().eval(), qkv(lq=11, d=16, dtype=dtype), **LOW[dtype])


def test_explicit_where_bool_mask_and_3d_batch():
    def fn(q, k, v, keep):
        s = torch.bmm(q, k.transpose(1, 2)) * 0.25
        s = torch.where(keep, s, -1e4)
        return torch.bmm(torch.softmax(s, -1), v)

    q, k, v = (torch.randn(2, 6, 8) for _ in range(3))
    keep = torch.rand(2, 6, 6) > 0.3
    cm = mlirfuse.compile(Lambda(fn), (q, k, v, keep))
    torch.testing.assert_close(cm(q, k, v, keep), fn(q, k, v, keep), **F32)
    assert any(k.kind == "attention" for k in cm.kernels.values())


def repeat_kv(x, n):
    """transformers' repeat_kv: (b, hkv, s, d) -> (b, hkv * n, s, d) by unsqueeze/expand/reshape."""
    b, h, s, d = x.shape
    return x[:, :, None, :, :].expand(b, h, n, s, d).reshape(b, h * n, s, d)


def test_explicit_gqa_repeat_kv():
    def fn(q, k, v):
        return explicit(q, repeat_kv(k, 2), repeat_kv(v, 2))

    one_launch(Lambda(fn), qkv(h=4, hkv=2, lq=7, d=8))


@pytest.mark.parametrize("lq,lk", [(5, 5), (17, 9), (9, 17)])
def test_sdpa_causal(lq, lk):
    one_launch(Lambda(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)), qkv(lq=lq, lk=lk, d=16))


def test_sdpa_bool_mask_with_scale():
    q, k, v = qkv(lq=13, lk=7, d=8)
    mask = torch.rand(1, 2, 13, 7) > 0.4
    mask[..., 0] = True
    one_launch(Lambda(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3)), (q, k, v, mask))


def test_sdpa_bool_mask_fully_masked_row():
    q, k, v = qkv(lq=6, d=8)
    mask = torch.rand(1, 1, 6, 6) > 0.5
    mask[..., 2, :] = False
    one_launch(Lambda(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)), (q, k, v, mask))


def test_sdpa_fully_masked_row_propagates_nan_of_v():
    # Eager computes a row with nothing to attend to as 0 @ v: NaN where v holds NaN (fuzz seed 800050).
    q, k = torch.randn(2, 1, 1, 8), torch.randn(1, 1, 2, 8)
    v = torch.tensor([1.5, -0.0, -0.0, float("nan")]).view(2, 1, 2, 1)
    mask = torch.full((1, 2), float("-inf"))
    one_launch(
        Lambda(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)), (q, k, v, mask), **F32, equal_nan=True
    )


def test_sdpa_additive_mask():
    q, k, v = qkv(lq=10, lk=12, d=16)
    mask = torch.randn(10, 12)
    one_launch(Lambda(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m)), (q, k, v, mask))


def test_sdpa_enable_gqa():
    fn = Lambda(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
    one_launch(fn, qkv(h=4, hkv=2, lq=9, d=8))


def test_sdpa_repeat_interleave_kv():
    def fn(q, k, v):
        k, v = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
        return F.scaled_dot_product_attention(q, k, v)

    one_launch(Lambda(fn), qkv(h=4, hkv=2, lq=6, d=8))


def falcon_split(qkv, groups=2, per_group=2, d=8):
    """Falcon's `_split_heads` (new_decoder_architecture): q, k, v out of one fused [b, s, g * (n + 2) * d] tensor."""
    b, s, _ = qkv.shape
    x = qkv.view(b, s, groups, per_group + 2, d)
    q, k, v = x[:, :, :, :-2], x[:, :, :, [-2]], x[:, :, :, [-1]]
    k, v = torch.broadcast_to(k, q.shape), torch.broadcast_to(v, q.shape)
    return [t.flatten(2, 3).transpose(1, 2) for t in (q, k, v)]


@pytest.mark.parametrize("computed", [False, True])
@pytest.mark.parametrize("attention", ["sdpa", "explicit"])
def test_falcon_kv_broadcast_read_as_a_repeat(attention, computed):
    """Issue 22: k and v, selected from the fused qkv by constant indices and broadcast over each group's
    query heads, are read by the attention kernel at kv head h // 2 of the qkv tensor: no gather, no copy.

    The qkv an input: k and v are loaded through a squeeze standing for the broadcast. The qkv computed
    (`tanh(qkv) * w`, read only by the split): a prologue of q, k and v, evaluated at kv head h // 2."""

    def fn(qkv, w):
        q, k, v = falcon_split(torch.tanh(qkv) * w if computed else qkv)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True) if attention == "sdpa" else explicit(q, k, v)

    inputs = (torch.randn(2, 5, 64), torch.randn(64))
    model = Lambda(fn)
    cm = mlirfuse.compile(model, inputs)
    (kernel,) = [k for k in cm.kernels.values() if k.kind == "attention"]
    chains = [site.chain for site in kernel.sites]
    assert not any(op == "torch.aten.expand" for chain in chains for op, _ in chain), chains
    assert "(b1 // 2)" in kernel.source
    if computed:
        assert cm.stats["launches"] == 1, cm.mlir
        assert "prologue" in kernel.source and "tanh" in kernel.source
    else:
        assert sum(any(op == "torch.aten.squeeze.dim" for op, _ in chain) for chain in chains) == 2, chains
    for args in (inputs, (torch.randn(2, 5, 64), torch.randn(64))):
        torch.testing.assert_close(cm(*args), model(*args), **F32)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_sdpa_low_precision(dtype):
    fn = Lambda(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    one_launch(fn, qkv(lq=13, d=16, dtype=dtype), **LOW[dtype])


def test_softmax_over_another_dim_is_not_attention():
    def fn(q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1), dim=-2) @ v

    q, k, v = qkv(lq=5, d=8)
    cm = mlirfuse.compile(Lambda(fn), (q, k, v))
    torch.testing.assert_close(cm(q, k, v), fn(q, k, v), **F32)
    assert all(k.kind != "attention" for k in cm.kernels.values())
    assert "softmax over a dim other than the keys" in cm.mlir


# Real head sizes, the tightest register budgets of attention_blocks' table: f32 (no tensor
# cores, all in registers) with a 128 head on sm_80, bf16 GQA with a 128 head on sm_90, and
# f32 heads of 64 (the GPT-2 block of bench/launches.py, causal; with 4 warps ptxas spilled
# 5.5 KiB there). (f16/bf16 heads of 64 and 128 measured on both: 186-255 registers, no spills.)
GPU_CASES = {
    "f32-d128-sm80": (80, Lambda(explicit), lambda: (*qkv(lq=3, d=128), torch.randn(3, 3))),
    "bf16-gqa-d128-sm90": (
        90,
        Lambda(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)),
        lambda: qkv(h=4, hkv=2, lq=3, d=128, dtype=torch.bfloat16),
    ),
    "f32-d64-sm80": (80, Lambda(explicit), lambda: (*qkv(lq=3, d=64), torch.randn(3, 3))),
    # Non-causal f32 sdpa, head 64, on sm_80: 8 bytes of stack at 128 registers with two stages (issue 21).
    "f32-d64-sdpa-sm80": (80, Lambda(F.scaled_dot_product_attention), lambda: qkv(lq=3, d=64)),
    "f32-d64-causal-sm90": (
        90, Lambda(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)), lambda: qkv(lq=3, d=64)
    ),
    # Llama's RoPE on q and k as the prologue (head 128, bf16, causal): the rotated tiles computed in registers.
    "bf16-rope-d128-sm90": (90, Lambda(lambda *a: llama_rope_attention(*a)), lambda: rope_inputs(h=4, hkv=4, s=3, d=128, dtype=torch.bfloat16)),
    "bf16-rope-d128-sm80": (80, Lambda(lambda *a: llama_rope_attention(*a)), lambda: rope_inputs(h=4, hkv=4, s=3, d=128, dtype=torch.bfloat16)),
    # f32 with RoPE on k per key block (the Llama block of bench/launches.py, head 32), sm_90: compiled for any
    # arguments it took 255 registers and spilled 8 bytes; as launched (strides of 1 specialized) it does not.
    "f32-rope-d32-sm90": (90, Lambda(lambda *a: llama_rope_attention(*a)), lambda: rope_inputs(h=4, hkv=4, s=3, d=32)),
}


@pytest.mark.parametrize("case", list(GPU_CASES))
def test_attention_compiles_for_gpu_without_spills(case):
    arch, fn, inputs = GPU_CASES[case]
    cm = mlirfuse.compile(fn, inputs())
    kernels = [k for k in cm.kernels.values() if k.kind == "attention"]
    (compiled,) = compile_kernels(kernels, arch=arch, specialized=gpu_launch_specializations(cm, fn, arch))  # as launched
    usage = resource_usage(compiled.cubin)
    assert 0 < usage["reg"] <= 255, usage
    assert usage["stack"] == 0 and usage["local"] == 0, f"{compiled.name} spills on sm_{arch}: {usage}"


def test_near_misses_and_neighbours_are_explained():
    q = torch.randn(1, 2, 5, 8)
    dropout = Lambda(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.5))
    cm = mlirfuse.compile(dropout, (q, q, q))
    assert cm.stats["launches"] == 0
    assert cm.explain() == {
        "torch.aten.scaled_dot_product_attention": ["attention not fused: dropout_p 0.5 is not 0 (the kernel has no random numbers)"]
    }
    epilogue = Lambda(lambda q, k, v: torch.relu(F.scaled_dot_product_attention(q, k, v)) + 1)
    cm = mlirfuse.compile(epilogue, (q, q, q), explain=True)
    (name,) = [n for n, k in cm.kernels.items() if k.kind == "attention"]
    assert cm.explain()[name] == ["consumer fusion.group: the attention kernel fuses no epilogue (yet)"]
    torch.testing.assert_close(cm(q, q, q), epilogue(q, q, q), **F32)


# NaN and inf as eager's CPU sdpa propagates them (fuzz class "causal sdpa with NaN/inf in k or v",
# seeds 70404117, 70404465, 70404531, 70404629, 70404923). Which backend eager runs decides it:
# flash (4-d, contiguous last dims, equal head dims) or math (anything else, here v's head dim).
NAN, INF = float("nan"), float("inf")


def same_as_eager(fn, *inputs):
    """One attention launch whose output equals eager's, NaN and inf positions included."""
    return one_launch(Lambda(fn), inputs, **F32, equal_nan=True)


def causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_causal_sdpa_flash_computes_zero_times_v_of_every_key_in_its_block():
    # lq 2 < lk 5: eager's flash kernel visits all 5 keys (one key block), so 0 * NaN reaches every row.
    q, k, v = qkv(lq=2, lk=5, d=4)
    v[0, 0, 4, 1] = NAN
    v[0, 1, 3, 0] = INF
    assert torch.isnan(causal(q, k, v)[0, 0, :, 1]).all()
    same_as_eager(causal, q, k, v)


def test_causal_sdpa_flash_replaces_masked_scores():
    # Flash fills the scores above the diagonal with -inf: NaN or inf in k there changes nothing.
    q, k, v = qkv(lq=4, d=4)
    k[0, 0, 3, 0] = NAN
    k[0, 1, 2, :] = INF
    assert torch.isfinite(causal(q, k, v)[0, 0, :3]).all()
    same_as_eager(causal, q, k, v)


def test_causal_sdpa_math_adds_the_mask():
    # v's head dim differs from q's: eager runs its math sdpa, which adds -inf above the diagonal,
    # so a NaN or +inf score there (NaN + -inf) makes the whole row NaN.
    q, k, v = qkv(lq=4, d=4, dv=3)
    k[0, 0, 3, 0] = NAN
    k[0, 1, 2, :] = INF
    v[0, 1, 3, 2] = NAN
    assert torch.isnan(causal(q, k, v)[0, 0]).all()
    same_as_eager(causal, q, k, v)


def test_causal_sdpa_math_for_a_strided_query():
    q, k, v = qkv(lq=3, d=4)
    q = torch.cat([q, q], -1)[..., ::2]  # last dim not contiguous: math
    k[0, 0, 2, 1] = NAN
    same_as_eager(causal, q, k, v)


def test_sdpa_flash_drops_a_nan_score_in_its_simd_tail():
    # ATen's flash row max skips NaN in the scalar tail of its SIMD loop (fewer keys than a
    # vector holds): row 0, whose only unmasked score is NaN, gives 0 @ v = 0, not NaN;
    # later rows, with finite scores beside the NaN, are NaN.
    q, k, v = qkv(lq=4, d=4)
    k[0, 0, 0, 0] = NAN
    q[0, 1, 0, 0] = NAN
    out = causal(q, k, v)
    assert (out[0, :, 0] == 0).all() and torch.isnan(out[0, 0, 1:]).all()
    same_as_eager(causal, q, k, v)


@pytest.mark.parametrize("mask_dtype", [torch.bool, torch.float32])
def test_sdpa_mask_is_added_nan_scores_stay(mask_dtype):
    # A bool mask is added as 0 / -inf: NaN + -inf is NaN, and so is +inf + -inf (3-d: math sdpa).
    q, k, v = torch.randn(1, 3, 2), torch.randn(1, 4, 2), torch.randn(1, 4, 2)
    k[0, 1, 0], k[0, 3, :] = NAN, INF
    keep = torch.tensor([[True, False, True, False], [True, True, True, False], [False, True, True, True]])
    mask = keep if mask_dtype == torch.bool else torch.zeros(3, 4).masked_fill(~keep, -INF)

    def fn(q, k, v, m):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m)

    same_as_eager(fn, q, k, v, mask)
    same_as_eager(fn, q[None], k[None], v[None], mask)  # 4-d: flash, the same semantics


def test_causal_sdpa_flash_visits_the_key_blocks_of_its_query_block():
    # 200 queries: eager's query blocks of 64 rows reach keys < 256, so they visit the key
    # block [0, 512) and never [512, 600): NaN in v at key 300 reaches every row, at key 550 none.
    q, k, v = torch.randn(1, 1, 200, 2), torch.randn(1, 1, 600, 2), torch.randn(1, 1, 600, 2)
    v[0, 0, 300, 0] = NAN
    v[0, 0, 550, 1] = NAN
    out = causal(q, k, v)
    assert torch.isnan(out[..., 0]).all() and not torch.isnan(out[..., 1]).any()
    same_as_eager(causal, q, k, v)


def masked_fill_causal(q, k, v, above):
    return torch.softmax((q @ k.transpose(-2, -1)).masked_fill(above, -INF), -1) @ v


def additive_causal(q, k, v, bias):
    return torch.softmax(q @ k.transpose(-2, -1) + bias, -1) @ v


@pytest.mark.parametrize("fn", [masked_fill_causal, additive_causal])
def test_explicit_causal_attention_nan_and_inf(fn):
    # masked_fill replaces the masked scores (NaN in k there is dropped), an additive mask keeps
    # NaN + -inf; both compute 0 * v of every masked key.
    q, k, v = qkv(lq=3, lk=5, d=4)
    k[0, 0, 4, 0] = NAN
    k[0, 1, 3, :] = INF
    v[0, 1, 4, 1] = NAN
    above = torch.ones(3, 5, dtype=torch.bool).triu(1)
    same_as_eager(fn, q, k, v, above if fn is masked_fill_causal else torch.zeros(3, 5).masked_fill(above, -INF))


# RoPE and other pointwise prologues on q, k and v (issue 22): computed on each tile as the kernel loads it.


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(x, cos, sin, rotary=None):
    """transformers' apply_rotary_pos_emb on one tensor; `rotary` < head dim: the partial form (GPT-NeoX, Phi)."""
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    if rotary is None:
        return x * cos + rotate_half(x) * sin
    x_rot, x_pass = x[..., :rotary], x[..., rotary:]
    return torch.cat((x_rot * cos + rotate_half(x_rot) * sin, x_pass), dim=-1)


def heads(x, n, d):
    """[b, s, n * d] -> [b, n, s, d], as a projection's output is split into heads."""
    return x.view(x.shape[0], x.shape[1], n, d).transpose(1, 2)


def cos_sin(s, rotary, dtype=torch.float32):
    angles = torch.randn(1, s, rotary // 2) * 3
    emb = torch.cat((angles, angles), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def llama_rope_attention(q, k, v, cos, sin):
    d = cos.shape[-1]  # the head (rotated whole)
    q, k, v = (heads(x, x.shape[-1] // d, d) for x in (q, k, v))
    return F.scaled_dot_product_attention(rope(q, cos, sin), rope(k, cos, sin), v, is_causal=True)


def rope_inputs(b=2, h=4, hkv=2, s=9, d=16, rotary=None, dtype=torch.float32):
    q, k, v = (torch.randn(b, s, n * d, dtype=dtype) for n in (h, hkv, hkv))
    return (q, k, v, *cos_sin(s, rotary or d, dtype))


def prologue_kernel(cm):
    """The attention kernel, checked to compute its operands (no launch but it, nothing through ATen)."""
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, (cm.stats, cm.mlir)
    (kernel,) = cm.kernels.values()
    assert kernel.kind == "attention" and "# prologue" in kernel.source, kernel.source
    return kernel


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("rotary", [None, 8])
def test_rope_prologue_sdpa_gqa_causal(dtype, rotary):
    """Llama's sdpa attention (GQA by enable_gqa) and GPT-NeoX/Phi's partial rotary, f32 and bf16: one launch."""

    def fn(q, k, v, cos, sin):
        q, k, v = heads(q, 4, 16), heads(k, 2, 16), heads(v, 2, 16)
        q, k = rope(q, cos, sin, rotary), rope(k, cos, sin, rotary)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    inputs = rope_inputs(rotary=rotary, dtype=dtype)
    cm = mlirfuse.compile(Lambda(fn), inputs)
    prologue_kernel(cm)
    tol = F32 if dtype == torch.float32 else LOW[dtype]
    torch.testing.assert_close(cm(*inputs), fn(*inputs), **tol)
    other = rope_inputs(rotary=rotary, dtype=dtype)
    torch.testing.assert_close(cm(*other), fn(*other), **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rope_prologue_eager_attention_repeat_kv(dtype):
    """transformers' eager attention: matmul(q, repeat_kv(k)ᵀ) * scaling + causal mask, softmax in f32, matmul(., repeat_kv(v))."""

    def fn(q, k, v, cos, sin, mask):
        q, k, v = heads(q, 4, 16), heads(k, 2, 16), heads(v, 2, 16)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        k, v = repeat_kv(k, 2), repeat_kv(v, 2)
        w = torch.matmul(q, k.transpose(2, 3)) * 0.25 + mask
        w = torch.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        return torch.matmul(w, v)

    inputs = rope_inputs(dtype=dtype)
    mask = torch.full((9, 9), float("-inf")).triu(1).to(dtype)[None, None]
    cm = mlirfuse.compile(Lambda(fn), (*inputs, mask))
    prologue_kernel(cm)
    tol = F32 if dtype == torch.float32 else LOW[dtype]
    torch.testing.assert_close(cm(*inputs, mask), fn(*inputs, mask), **tol)


def test_scale_and_cast_prologue():
    """A scale and a cast on q (an f32 projection attended in bf16), a scale on v: prologues too."""

    def fn(q, k, v):
        return F.scaled_dot_product_attention((q * 0.5).to(torch.bfloat16), k, (v * 2).to(torch.bfloat16))

    q, k, v = qkv(lq=7, d=16)
    inputs = (q, k.to(torch.bfloat16), v)
    cm = mlirfuse.compile(Lambda(fn), inputs)
    prologue_kernel(cm)
    torch.testing.assert_close(cm(*inputs), fn(*inputs), **LOW[torch.bfloat16])


def test_prologue_read_elsewhere_is_not_recomputed():
    """k's RoPE result is returned too (a KV cache would store it): it stays a kernel, the attention loads it, and
    the report says why."""

    def fn(q, k, v, cos, sin):
        q, k, v = heads(q, 4, 16), heads(k, 2, 16), heads(v, 2, 16)
        k = rope(k, cos, sin)
        return F.scaled_dot_product_attention(rope(q, cos, sin), k, v, enable_gqa=True), k

    inputs = rope_inputs()
    cm = mlirfuse.compile(Lambda(fn), inputs, explain=True)
    assert cm.stats["launches"] == 2, cm.mlir
    (name,) = [n for n, k in cm.kernels.items() if k.kind == "attention"]
    assert "prologue not fused: k is computed by 'torch.aten.add.Tensor', whose result is read outside the attention too" in (
        cm.explain()[name]
    )
    for got, expected in zip(cm(*inputs), fn(*inputs)):
        torch.testing.assert_close(got, expected, **F32)


def test_prologue_not_pointwise_is_refused():
    """q computed by a cumsum along the head dim (not pointwise over q's index space): loaded, with the reason."""

    def fn(q, k, v):
        return F.scaled_dot_product_attention(torch.cumsum(q, -1), k, v)

    inputs = qkv(lq=6, d=8)
    cm = mlirfuse.compile(Lambda(fn), inputs, explain=True)
    (name,) = [n for n, k in cm.kernels.items() if k.kind == "attention"]
    assert "prologue not fused: q is computed by 'torch.aten.cumsum', which is not pointwise over q's index space" in (
        cm.explain()[name]
    )
    torch.testing.assert_close(cm(*inputs), fn(*inputs), **F32)


@pytest.mark.parametrize("form", ["sdpa", "explicit"])
def test_output_relaid_and_copied_is_stored_by_the_kernel(form):
    """`o.transpose(1, 2).contiguous().reshape(b, s, h * d)` (the heads merged back, GPT-NeoX, Phi): the attention
    kernel stores its output in that layout; no copy kernel after it."""

    def fn(q, k, v):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True) if form == "sdpa" else explicit(q, k, v)
        return o.transpose(1, 2).contiguous().reshape(q.shape[0], q.shape[2], -1)

    inputs = qkv(b=2, h=3, lq=7, d=8)
    cm = mlirfuse.compile(Lambda(fn), inputs)
    # The reshape after the copy is a view of the kernel's result: no device call.
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == cm.stats["unfused_views"], cm.mlir
    (kernel,) = cm.kernels.values()
    assert "stored relaid: transpose.int -> clone" in kernel.source, kernel.source
    torch.testing.assert_close(cm(*inputs), fn(*inputs), **F32)
