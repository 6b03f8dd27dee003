"""A row normalization (RMSNorm, LayerNorm) computed by the GEMM reading it: loops over K sum A's rows first, the GEMM's
loop normalizes each A tile; the normalized A is never stored (fusion-fuse-matmul's row prologue, issue 22).

Numerics against eager at bf16/f16 tolerances; sizes not multiples of the blocks (rows and K past a tile's end)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from helpers import Lambda

# Off by default (fuse_matmul.py says why): these tests ask for it.
ROW_PROLOGUE = {"row-prologue": True}


class RMSNormQKV(torch.nn.Module):
    """Llama's RMSNorm (f32 statistics, cast back, times its weight) feeding three projections (a grouped GEMM)."""

    def __init__(self, d: int, n: int, dtype):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(d, dtype=dtype))
        self.q, self.k, self.v = (torch.nn.Linear(d, n, bias=False, dtype=dtype) for _ in range(3))

    def forward(self, x):
        xf = x.float()
        h = self.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype)
        return self.q(h), self.k(h), self.v(h)


def _close(got, expected, dtype):
    tol = {torch.bfloat16: (1.6e-2, 1e-2), torch.float16: (1e-3, 1e-3)}[dtype]
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
        torch.testing.assert_close(g, e, rtol=tol[0], atol=tol[1] * max(1.0, e.abs().max().item()))


@pytest.mark.parametrize("d", [64, 72])
def test_rmsnorm_is_the_prologue_of_the_grouped_qkv_gemm(d):
    torch.manual_seed(0)
    model, x = RMSNormQKV(d, 48, torch.bfloat16).eval(), 3 * torch.randn(2, 37, d, dtype=torch.bfloat16)
    cm = mlirfuse.compile(model, (x,), options=ROW_PROLOGUE)
    assert cm.stats["launches"] == 1  # was 2: the norm, then the GEMMs reading its stored result
    (kernel,) = cm.kernels.values()
    assert "rowsum0" in kernel.source and "rowsum1" not in kernel.source
    # Nothing but x, the norm's weight, the three weights and the three results moves.
    assert cm.stats["bytes"] == cm.stats["bytes_lower_bound"]
    with torch.no_grad():
        _close(cm(x), model(x), torch.bfloat16)


@pytest.mark.parametrize("d", [64, 40])
def test_layernorm_is_the_prologue_of_a_gemm_through_a_view(d):
    # GPT-2's Conv1D: the normalized [b, t, d] viewed as [b * t, d], then addmm; LayerNorm's two sums (mean, then
    # the variance of the deviations) are two loops over K.
    torch.manual_seed(0)
    ln = torch.nn.LayerNorm(d, dtype=torch.float16)
    with torch.no_grad():
        ln.weight.add_(0.1 * torch.randn(d, dtype=torch.float16))
        ln.bias.add_(0.1 * torch.randn(d, dtype=torch.float16))
    w, b = torch.randn(d, 3 * d, dtype=torch.float16) / d**0.5, torch.randn(3 * d, dtype=torch.float16)

    def f(x):
        h = ln(x)
        return torch.addmm(b, h.view(-1, d), w).view(*x.shape[:-1], 3 * d)

    x = 2 + torch.randn(2, 33, d, dtype=torch.float16)
    cm = mlirfuse.compile(Lambda(f), (x,), options=ROW_PROLOGUE)
    assert cm.stats["launches"] == 1
    (kernel,) = cm.kernels.values()
    assert "rowsum1" in kernel.source
    with torch.no_grad():
        _close(cm(x), f(x), torch.float16)


def test_a_norm_also_read_elsewhere_is_stored_once_by_its_own_kernel():
    # The limit: the normalized value is a result too, so it is stored anyway; the GEMM reads it (no recompute).
    torch.manual_seed(0)
    d = 64
    g, w = 1 + 0.1 * torch.randn(d, dtype=torch.bfloat16), torch.randn(32, d, dtype=torch.bfloat16)

    def f(x):
        h = F.rms_norm(x, (d,), g, 1e-6)
        return F.linear(h, w), h

    x = torch.randn(2, 16, d, dtype=torch.bfloat16)
    cm = mlirfuse.compile(Lambda(f), (x,), explain=True, options=ROW_PROLOGUE)
    assert cm.stats["launches"] == 2
    assert any("also read elsewhere" in why for reasons in cm.explain().values() for why in reasons), cm.explain()
    _close(cm(x), f(x), torch.bfloat16)


def test_transformer_layers_in_half_precision_match_eager():
    # The two layers of bench/bytes.py's weights-dominated rows, small: the first norm is the q/k/v GEMM's prologue.
    from transformers import GPT2Config, LlamaConfig
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=64, num_attention_heads=4, num_key_value_heads=4, intermediate_size=96,
                      attn_implementation="sdpa")
    layer, rope = LlamaDecoderLayer(cfg, 0).to(torch.bfloat16).eval(), LlamaRotaryEmbedding(cfg)

    def llama(x):
        positions = torch.arange(x.shape[1]).unsqueeze(0)
        out = layer(x, position_embeddings=rope(x, positions), attention_mask=None, position_ids=positions)
        return out[0] if isinstance(out, tuple) else out

    x = torch.randn(1, 24, 64, dtype=torch.bfloat16)
    cm = mlirfuse.compile(Lambda(llama), (x,), options=ROW_PROLOGUE)
    assert not any(name.startswith("fused_to_copy_pow_mean_add_rsqrt_mul_") and "linear" not in name for name in cm.kernels)
    with torch.no_grad():
        _close(cm(x), llama(x), torch.bfloat16)

    block = GPT2Block(GPT2Config(n_embd=64, n_head=4, attn_implementation="sdpa"), 0).to(torch.float16).eval()

    def gpt2(x):
        out = block(x)
        return out[0] if isinstance(out, tuple) else out

    x = torch.randn(1, 24, 64, dtype=torch.float16)
    cm = mlirfuse.compile(Lambda(gpt2), (x,), options=ROW_PROLOGUE)
    assert sum("mean" in name for name in cm.kernels) == 2  # both layer norms' kernels hold a mean ...
    assert sum("mean" in name and "matmul" in name for name in cm.kernels) == 1  # ... the first in the c_attn GEMM
    with torch.no_grad():
        _close(cm(x), gpt2(x), torch.float16)


class PreNormResidual(torch.nn.Module):
    """`h = x + o(a)`, then `h + down(rmsnorm(h))`: the residual read by the norm and by the next residual."""

    def __init__(self, d: int, dtype):
        super().__init__()
        self.o, self.down = (torch.nn.Linear(d, d, bias=False, dtype=dtype) for _ in range(2))
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(d, dtype=dtype))

    def forward(self, a, x):
        h = x + self.o(a)
        return h + self.down(F.rms_norm(h, (h.shape[-1],), self.weight, 1e-6))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_pre_norm_residual_is_an_epilogue_then_the_norm_a_row_prologue(dtype):
    torch.manual_seed(0)
    model = PreNormResidual(48, dtype).eval()
    a, x = torch.randn(2, 19, 48, dtype=dtype), torch.randn(2, 19, 48, dtype=dtype)
    cm = mlirfuse.compile(model, (a, x), options=ROW_PROLOGUE)
    # Was 3: the GEMM storing o, the add and the norm storing h and the normalized h, the second GEMM.
    assert cm.stats["launches"] == 2
    # Moved beyond the bound: h, stored by the first GEMM and read by the second (its prologue and its epilogue).
    assert cm.stats["bytes"] == cm.stats["bytes_lower_bound"] + 2 * x.numel() * x.element_size()
    with torch.no_grad():
        _close(cm(a, x), model(a, x), dtype)
