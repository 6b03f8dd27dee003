"""The cost model (mlirfuse/analysis/cost.py) against numbers computed from the PyTorch side, by hand.

Lit (test/lit/Transforms/fusion-cost.mlir) pins the IR annotations; here the
numbers come from the model's own tensors (parameter and activation sizes,
2*M*N*K), never from mlirfuse.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

import mlirfuse
from mlirfuse.analysis.cost import TARGETS
from helpers import Lambda


def _bytes(*tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def test_pointwise_kernel_moves_its_input_and_output_once():
    x = torch.randn(1000, 24)
    cm = mlirfuse.compile(Lambda(lambda x: torch.sigmoid(x * 2 + 1)), (x,))
    assert cm.stats["launches"] == 1
    assert cm.stats["bytes"] == cm.stats["bytes_lower_bound"] == 2 * _bytes(x)
    assert cm.stats["flops"] == 3 * x.numel()  # mul, add, sigmoid


def test_gemm_bytes_and_flops_are_2mnk_and_each_operand_once():
    m, n, k = 64, 48, 80
    x, w = torch.randn(m, k, dtype=torch.bfloat16), torch.randn(n, k, dtype=torch.bfloat16)
    cm = mlirfuse.compile(Lambda(lambda x, w: F.linear(x, w)), (x, w))
    assert cm.stats["launches"] == 1
    assert cm.stats["bytes"] == _bytes(x, w) + m * n * 2
    assert cm.stats["flops"] == 2 * m * n * k
    (_, _, cost), = cm.cost.steps
    assert cost.matmul_flops == ((("bfloat16", False), 2 * m * n * k),)


def test_attention_flops_are_its_two_products():
    b, h, lq, lk, d = 2, 3, 16, 24, 8
    q, k, v = torch.randn(b, h, lq, d), torch.randn(b, h, lk, d), torch.randn(b, h, lk, d)
    cm = mlirfuse.compile(Lambda(lambda q, k, v: F.scaled_dot_product_attention(q, k, v)), (q, k, v))
    assert cm.stats["launches"] == 1
    matmul = sum(f for _, f in cm.cost.total.matmul_flops)
    assert matmul == 2 * b * h * lq * lk * d * 2
    assert cm.stats["bytes"] == _bytes(q, k, v) + _bytes(q)  # the output is shaped like q here


def test_rope_prologue_reads_projections_cos_and_sin_once():
    """RoPE on q and k computed by the attention kernel: it reads the projections, cos and sin (broadcast over the
    heads, read by both prologues: once) and writes the output, and no rotated q or k goes through memory."""
    b, s, h, d = 2, 12, 4, 16

    def fn(q, k, v, cos, sin):
        q, k, v = (x.view(b, s, h, d).transpose(1, 2) for x in (q, k, v))
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)

        def rope(x):
            return x * cos + torch.cat((-x[..., d // 2 :], x[..., : d // 2]), dim=-1) * sin

        return F.scaled_dot_product_attention(rope(q), rope(k), v, is_causal=True)

    q, k, v = (torch.randn(b, s, h * d, dtype=torch.bfloat16) for _ in range(3))
    cos, sin = torch.randn(1, s, d, dtype=torch.bfloat16), torch.randn(1, s, d, dtype=torch.bfloat16)
    cm = mlirfuse.compile(Lambda(fn), (q, k, v, cos, sin))
    assert cm.stats["launches"] == 1
    assert cm.stats["bytes"] == cm.stats["bytes_lower_bound"] == _bytes(q, k, v, cos, sin) + _bytes(q)
    assert sum(f for _, f in cm.cost.total.matmul_flops) == 2 * b * h * s * s * d * 2


def test_mlp_lower_bound_is_parameters_input_and_output():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.LayerNorm(32), torch.nn.Linear(32, 96), torch.nn.GELU(), torch.nn.Linear(96, 32))
    x = torch.randn(4, 16, 32)
    cm = mlirfuse.compile(model.eval(), (x,))
    with torch.no_grad():
        out = model(x)
    assert cm.stats["bytes_lower_bound"] == _bytes(*model.parameters()) + _bytes(x) + _bytes(out)
    # Two kernels: the layer norm's output goes out and comes back once; the hidden activation stays on chip
    # (one matmul-chain kernel: lowering/matmul_chain.py).
    assert cm.stats["launches"] == 2
    assert cm.stats["bytes"] == cm.stats["bytes_lower_bound"] + 2 * _bytes(x)
    # Each step's share of the bound: the layer norm reads x and its parameters first, the chain the two
    # linears' parameters and writes the output; the excess is the normalized x, written then read.
    ln, fc1, _, fc2 = model
    assert cm.cost.bound_shares == [_bytes(x, *ln.parameters()), _bytes(*fc1.parameters(), *fc2.parameters(), out)]
    assert [c.bytes - share for (_, _, c), share in zip(cm.cost.steps, cm.cost.bound_shares)] == [_bytes(x)] * 2


def test_roofline_time_is_the_slower_of_bytes_and_flops():
    x = torch.randn(256, 256)
    cm = mlirfuse.compile(Lambda(lambda x: x.exp()), (x,))
    h100 = TARGETS["sm_90"]
    assert cm.cost.seconds("sm_90") == 2 * _bytes(x) / h100.bandwidth  # memory-bound
    assert cm.stats["roofline_ns"] == round(2 * _bytes(x) / h100.bandwidth * 1e9)
    big = 512
    a, b = torch.randn(big, big, dtype=torch.float16), torch.randn(big, big, dtype=torch.float16)
    gemm = mlirfuse.compile(Lambda(lambda a, b: a @ b), (a, b))
    flops = 2 * big**3
    assert gemm.cost.seconds("sm_90") == max(gemm.stats["bytes"] / h100.bandwidth, flops / h100.half)


class _Exp(torch.nn.Module):
    def forward(self, x):
        return x.exp()


def test_dynamic_sizes_have_no_cost():
    cm = mlirfuse.compile(_Exp(), torch.randn(8, 16), dynamic_shapes=({0: torch.export.Dim("batch")},))
    assert "?,16" in cm.mlir
    assert cm.cost is None and "bytes" not in cm.stats


def test_training_linear_views_do_not_cost_a_kernel_or_a_second_store():
    # AOTAutograd spells linear as view -> addmm -> view: the views hid the gelu and the residual add from
    # the GEMMs (5 forward launches, not 4), and sinking a view of a result that is also saved stored it
    # twice (the backward's bytes: 15.5 MB before, 12.3 after, for this block).
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from mlirfuse.backend import backend
    from reductions import MLPBlock

    torch.manual_seed(0)
    model, x = MLPBlock(64, 128), torch.randn(2, 16, 64)
    eager = MLPBlock(64, 128)
    eager.load_state_dict(model.state_dict())
    torch._dynamo.reset()
    backend.clear()
    torch.compile(model, backend=backend)(x).sum().backward()
    eager(x).sum().backward()
    for ours, theirs in zip(model.parameters(), eager.parameters()):
        torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-4, atol=1e-5)
    stats = backend.stats
    # Backward: 7 launches before the bias gradients were summed by their weight gradients' GEMMs, 5 since.
    # Forward: 4 before fc1's GEMM stored the pre-activation the backward keeps (a [rows, N] view of its tile)
    # beside the gelu from its epilogue, 3 since.
    assert stats["forward"]["launches"] == 3 and stats["backward"]["launches"] == 5, stats
