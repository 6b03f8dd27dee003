"""GEMM template instances compile for sm_80 and sm_90 without register spills and within shared memory.

Compiled ahead of time (no GPU): registers and the stack frame (where ptxas
spills) come from `cuobjdump -res-usage` on the cubin (Triton's metadata
counts spills only after loading on a GPU), shared memory from the compiled
kernel's metadata. The
sizes fill the heuristic's largest tiles (lowering/matmul.py CONFIG_TABLE).
"""

from __future__ import annotations

import functools
import operator

import pytest
import torch

import mlirfuse
from mlirfuse.runtime.aot import AotCompiles
from helpers import Lambda, gpu_launch_specializations

# Shared memory per block (opt-in maximum): sm_80 163 KiB, sm_90 227 KiB.
SHARED_LIMIT = {80: 163 * 1024, 90: 227 * 1024}


class _MLP(torch.nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = torch.nn.Linear(dim, hidden)
        self.fc2 = torch.nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def _lstm_step(x, h, c, w_ih, w_hh, b):
    i, f, g, o = (x @ w_ih.t() + h @ w_hh.t() + b).chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def _lstm_cat_step(x, h, c, w, b):
    i, f, g, o = torch.nn.functional.linear(torch.cat([x, h], 1), w, b).chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def _summed_weight_gradients(*args):
    """An unrolled LSTM's W_ih and W_hh gradients: sums over the steps of `g_t.t() @ x_t` and `g_t.t() @ h_t`."""
    n = len(args) // 3
    gs, xs, hs = args[:n], args[n : 2 * n], args[2 * n :]
    return (functools.reduce(operator.add, [g.t() @ x for g, x in zip(gs, xs)]),
            functools.reduce(operator.add, [g.t() @ h for g, h in zip(gs, hs)]))


def _head_split(x, w):
    b, t, d = x.shape
    q, k, v = (y.view(b, t, 12, 64).transpose(1, 2) for y in (x @ w.t()).split(d, dim=-1))
    return q.contiguous(), k.transpose(-2, -1).contiguous(), v.contiguous()


@pytest.fixture(scope="module")
def template_kernels():
    """The GEMM kernels of the models below, compiled once for the module (the tests only read them)."""
    torch.manual_seed(0)
    models = [
        (_MLP(256, 512), (torch.randn(2, 128, 256),)),  # f32: bias + gelu epilogue, bias + residual epilogue
        (  # bf16 SwiGLU: silu(x @ g) * (x @ u), one grouped GEMM (two accumulators), g read transposed by strides
            Lambda(lambda x, g, u: torch.nn.functional.silu(x @ g.t()) * (x @ u)),
            (torch.randn(256, 256).bfloat16(), torch.randn(512, 256).bfloat16(), torch.randn(256, 512).bfloat16()),
        ),
        (  # f16 batched attention scores with a scale and a prologue cast
            Lambda(lambda q, k: (q.half() @ k.transpose(-2, -1)) * 0.125),
            (torch.randn(4, 128, 64), torch.randn(4, 128, 64).half()),
        ),
    ]
    # An LSTM step, f32 and bf16: eight GEMMs (four gates, x and h) over two A operands, the cell as epilogue.
    for dtype in (torch.float32, torch.bfloat16):
        shapes = ((128, 256), (128, 256), (128, 256), (1024, 256), (1024, 256), (1024,))
        models.append((Lambda(_lstm_step), tuple(torch.randn(s).to(dtype) for s in shapes)))
    # Batch 1 in f32 (bench/compile_time.py's LSTM): a 16-row tile on few warps, where tf32x3 spilled on sm_90.
    shapes = ((1, 128), (1, 128), (1, 128), (512, 128), (512, 128), (512,))
    models.append((Lambda(_lstm_step), tuple(torch.randn(s) for s in shapes)))
    # The same step over cat([x, h]) (K-split: one K loop per piece, four GEMMs), f32 and bf16, and batch 1 in f32.
    for dtype, batch in ((torch.float32, 128), (torch.bfloat16, 128), (torch.float32, 1)):
        shapes = ((batch, 256), (batch, 256), (batch, 256), (1024, 512), (1024,))
        models.append((Lambda(_lstm_cat_step), tuple(torch.randn(s).to(dtype) for s in shapes)))
    # Back-to-back GEMMs (matmul-chain) at each dtype's largest hidden: f32 128 (tf32x3), bf16 256, f16 200.
    for dim, hidden, dtype, rows in ((1024, 128, torch.float32, 4096), (1024, 256, torch.bfloat16, 512), (64, 200, torch.float16, 1000)):
        models.append((_MLP(dim, hidden).to(dtype), (torch.randn(rows, dim).to(dtype),)))
    models.append((  # a batched chain in f32 (tf32x3): bmm -> gelu -> bmm, one program per rows and batch index
        Lambda(lambda x, w1, w2: torch.bmm(torch.nn.functional.gelu(torch.bmm(x, w1)), w2)),
        (torch.randn(8, 512, 64), torch.randn(8, 64, 128), torch.randn(8, 128, 64)),
    ))
    # A weight gradient with its bias gradient (the sum of A over K, from the A tiles), f32 and bf16.
    for dtype in (torch.float32, torch.bfloat16):
        models.append((Lambda(lambda g, x: (g.t() @ x, g.sum(0))), (torch.randn(4096, 1024).to(dtype), torch.randn(4096, 256).to(dtype))))
    # Weight gradients summed over 16 steps (fusion-sum-matmuls): one grouped GEMM over K-split cats of 16 pieces,
    # the gates' gradients (A) shared; batch 1 in f32 (bench/bytes.py's LSTM: pieces one row wide), 8 in bf16.
    for dtype, batch in ((torch.float32, 1), (torch.bfloat16, 8)):
        shapes = [(batch, 512)] * 16 + [(batch, 128)] * 32
        models.append((Lambda(_summed_weight_gradients), tuple(torch.randn(s).to(dtype) for s in shapes)))
    # The q/k/v GEMM storing the head splits a training forward saves (12 heads of 64, bf16): three relaid stores.
    models.append((Lambda(_head_split), (torch.randn(4, 256, 768).bfloat16(), torch.randn(2304, 768).bfloat16())))

    # Row prologues: an RMSNorm before a grouped q/k/v in bf16 (one loop over K first), a LayerNorm before a
    # linear with a bias in f16 (two loops).
    d = 1024
    models.append((
        Lambda(lambda x, g, wq, wk, wv: [torch.nn.functional.linear(h, w) for h in [torch.nn.functional.rms_norm(x, (d,), g)]
                                         for w in (wq, wk, wv)]),
        (torch.randn(512, d).bfloat16(), torch.randn(d).bfloat16(), *(torch.randn(d, d).bfloat16() for _ in range(3))),
    ))
    models.append((
        Lambda(lambda x, g, b, w, c: torch.nn.functional.linear(torch.nn.functional.layer_norm(x, (d,), g, b), w, c)),
        (torch.randn(512, d).half(), torch.randn(d).half(), torch.randn(d).half(), torch.randn(3 * d, d).half(),
         torch.randn(3 * d).half()),
    ))
    kernels = []  # (kernel, {arch: its launch's specialization})
    for model, inputs in models:
        cm = mlirfuse.compile(model.eval(), inputs, options={"row-prologue": True})  # off by default; its kernels compile too
        launches = {arch: gpu_launch_specializations(cm, model, arch) for arch in (80, 90)}
        kernels += [(k, {arch: launches[arch][k.name] for arch in launches})
                    for k in cm.kernels.values() if k.kind in ("matmul", "matmul-chain")]
    return kernels


@pytest.mark.parametrize("arch", [80, 90])
def test_gemm_kernels_compile_without_spills(template_kernels, arch):
    """Each kernel as a GPU launches it (its launch's specialization)."""
    kernels = [k for k, _ in template_kernels]
    assert len(kernels) == 21 and sum(k.kind == "matmul-chain" for k in kernels) == 4, [k.name for k in kernels]
    assert sum("stored relaid" in k.source for k in kernels) == 1  # the head splits' kernel
    assert sum("rowsum0" in k.source for k in kernels) == 2, [k.name for k in kernels]
    for compiled in AotCompiles().results([(k, arch, launches[arch]) for k, launches in template_kernels]):
        usage = compiled.resources()
        # ptxas spills to the stack frame: none at all means no spill stores or loads.
        assert usage["stack"] == 0 and usage["local"] == 0, (compiled.name, usage)
        assert 0 < usage["reg"] <= 255, (compiled.name, usage)
        assert 0 < compiled.shared <= SHARED_LIMIT[arch], (compiled.name, compiled.shared)
