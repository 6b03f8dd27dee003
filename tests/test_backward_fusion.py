"""The backward's fusions (issue 22): a bias gradient summed beside its weight gradient in the GEMM's kernel.

Numerics against eager PyTorch (TRITON_INTERPRET=1): forward graphs that
hold the pattern, and training steps through the torch.compile backend,
gradients of parameters and inputs.
"""

from __future__ import annotations

import pytest
import torch

from mlirfuse import models
from mlirfuse.backend import backend
from helpers import compile_and_compare, kernel_ops, train_side_by_side


@pytest.fixture(autouse=True)
def _fresh_dynamo(fresh_dynamo):
    backend.clear()


def _sources(cm) -> str:
    return "\n".join(k.source for k in cm.kernels.values())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_bias_gradient_is_summed_by_the_weight_gradient_gemm(dtype):
    # K = 300 rows (three K steps of the interpreter's 128), M = 70 (two row tiles), N = 130 (three column
    # tiles: only the first column's programs store the sums).
    torch.manual_seed(0)
    g, x = torch.randn(300, 70, dtype=dtype), torch.randn(300, 130, dtype=dtype)
    tolerances = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-1)
    cm = compile_and_compare(lambda g, x: (g.t() @ x, g.sum(0)), (g, x), **tolerances)
    assert cm.stats["launches"] == 1, cm.stats
    assert "A summed over K" in _sources(cm)


def test_bias_gradient_of_a_flattened_batch_keeps_its_dim():
    # The backward's form: view(g, [B*T, d]), its t() the weight gradient's A, its sum over dim 0 with keepdim, viewed.
    torch.manual_seed(0)
    g, x = torch.randn(3, 7, 20), torch.randn(21, 9)

    def fn(g, x):
        flat = g.view(21, 20)
        return torch.mm(flat.t(), x), flat.sum([0], keepdim=True).view(20)

    cm = compile_and_compare(fn, (g, x))
    assert cm.stats["launches"] == 1, cm.stats


def test_a_summed_along_its_own_k_dim():
    # A read as it is stored and summed over its last dim: the sums of its rows, [2, 5] here.
    torch.manual_seed(0)
    a, w = torch.randn(2, 5, 40), torch.randn(40, 24)
    cm = compile_and_compare(lambda a, w: (a @ w, a.sum(-1)), (a, w))
    assert cm.stats["launches"] == 1, cm.stats


@pytest.mark.parametrize("fn", [
    lambda g, x: (g.t() @ x, g.sum(1)),  # over A's rows (M), not K
    lambda g, x: (g.t() @ x, g.sum(0, dtype=torch.float64)),  # another dtype
    lambda g, x: (g.t() @ x, (g * 2).sum(0)),  # a sum of a computed value
    lambda g, x: (g.t() @ x, g.amax(0)),  # not a sum
], ids=["rows", "dtype", "computed", "amax"])
def test_other_reductions_stay_beside_the_gemm(fn):
    torch.manual_seed(0)
    g, x = torch.randn(30, 12), torch.randn(30, 17)
    cm = compile_and_compare(fn, (g, x))
    assert cm.stats["launches"] == 2, cm.stats
    assert "A summed over K" not in _sources(cm)


def test_batched_gemm_takes_no_sum():
    torch.manual_seed(0)
    g, x = torch.randn(2, 30, 12), torch.randn(2, 30, 17)
    cm = compile_and_compare(lambda g, x: (g.transpose(1, 2) @ x, g.sum(1)), (g, x))
    assert cm.stats["launches"] == 2, cm.stats


def test_mlp_backward_sums_bias_gradients_in_its_weight_gradient_gemms():
    torch.manual_seed(0)
    batches = [(torch.randn(2, 16, 32), torch.randn(2, 16, 32)) for _ in range(2)]
    train_side_by_side(models.MLP(d_model=32, hidden=64), lambda m: torch.compile(m, backend="mlirfuse"), batches)
    back = backend.stats["backward"]
    # Four GEMMs (two weight gradients with their bias gradients, two input gradients) and LayerNorm's sums.
    assert back["launches"] == 5, back
    sources = [k.source for r in backend.graphs if r.role == "backward" for k in r.graph.kernels.values()]
    assert sum("A summed over K" in s for s in sources) == 2


def test_gradients_of_inputs_match_eager():
    torch.manual_seed(0)
    model = models.MLP(d_model=24, hidden=40)
    compiled = torch.compile(__import__("copy").deepcopy(model), backend="mlirfuse")
    x = torch.randn(3, 5, 24)
    grads = []
    for fn in (model, compiled):
        xi = x.clone().requires_grad_(True)
        fn(xi).square().sum().backward()
        grads.append(xi.grad)
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=1e-5)
    for p, q in zip(model.parameters(), compiled.parameters()):
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-5)


def test_kernel_ops_name_the_sum():
    torch.manual_seed(0)
    g, x = torch.randn(8, 6), torch.randn(8, 5)
    cm = compile_and_compare(lambda g, x: (g.t() @ x, g.sum(0)), (g, x))
    assert "sum.dim_IntList" in " ".join(kernel_ops(cm))


def _heads_cat(q, k, v, w):
    # The q/k/v gradients' form: each piece a GEMM's [b, h, t, d] result, transposed to [b, t, h, d], copied
    # contiguous (reshape's clone) and reshaped to [b, t, h * d], then concatenated along the features.
    return torch.cat([torch.matmul(x, w).transpose(1, 2).reshape(2, 16, 64) for x in (q, k, v)], 2)


def test_cat_reads_copied_pieces_through_their_reshapes():
    torch.manual_seed(0)
    inputs = (*(torch.randn(2, 4, 16, 16) for _ in range(3)), torch.randn(16, 16))
    cm = compile_and_compare(_heads_cat, inputs, rtol=1e-4, atol=1e-4)
    # The (grouped) GEMM and one kernel storing the cat: no kernel only copies a piece.
    assert cm.stats["launches"] == 2, cm.stats
    assert "clone" in " ".join(kernel_ops(cm))


def test_copy_also_returned_stays_a_kernel():
    torch.manual_seed(0)
    inputs = (*(torch.randn(2, 4, 16, 16) for _ in range(3)), torch.randn(16, 16))

    def fn(q, k, v, w):
        copied = torch.matmul(q, w).transpose(1, 2).contiguous()
        return torch.cat([copied.view(2, 16, 64), k.transpose(1, 2).reshape(2, 16, 64)], 2), copied

    cm = compile_and_compare(fn, inputs, rtol=1e-4, atol=1e-4)
    # The GEMM, storing the returned copy straight into its transposed layout (its epilogue), and the cat,
    # which reads that copy as stored and k's copy (of an input) where its reshape puts it: 2 (3 when the copy
    # was a kernel of its own; 4 when k's was too).
    assert cm.stats["launches"] == 2, cm.stats
    assert any("matmul" in name and "clone" in name for name in cm.kernels), list(cm.kernels)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_cat_of_copied_pieces_in_low_precision(dtype):
    torch.manual_seed(0)
    inputs = (*(torch.randn(2, 4, 16, 16, dtype=dtype) for _ in range(3)), torch.randn(16, 16, dtype=dtype))
    cm = compile_and_compare(_heads_cat, inputs, rtol=2e-2, atol=5e-2)
    assert cm.stats["launches"] == 2, cm.stats


def test_gpt2_block_training_is_below_inductors_launches():
    torch.manual_seed(0)
    block = models.TinyBlock(d_model=64, n_heads=4, seq=16)
    batches = [(torch.randn(2, 16, 64), torch.randn(2, 16, 64)) for _ in range(2)]
    train_side_by_side(block, lambda m: torch.compile(m, backend="mlirfuse"), batches)
    fwd, back = backend.stats["forward"], backend.stats["backward"]
    # Inductor (CPU, bench/training.py): forward 7 kernels + 6 extern calls. Here: 2 LayerNorms, the q/k/v
    # GEMM storing the head splits the backward keeps (tests/test_stored_relayout.py), q @ k^T, the softmax,
    # p @ v storing the head merge, and 3 GEMMs whose epilogues store activations and the reshaped values
    # the backward keeps. No kernel only copies.
    assert fwd["launches"] + fwd["unfused_ops"] - fwd["unfused_views"] <= 9, fwd
    names = [name for r in backend.graphs if r.role == "forward" for name in r.graph.kernels]
    assert not [n for n in names if "clone" in n and "mm" not in n], names
    # Backward: Inductor 8 kernels + 12 extern calls. Here 12 GEMMs (bias gradients summed in 4 of them, the
    # attention output gradient's head split stored by its GEMM), the q/k/v gradients' cat reading its
    # transposed pieces, and 5 more kernels.
    assert back["launches"] + back["unfused_ops"] - back["unfused_views"] <= 18, back
    sources = [k.source for r in backend.graphs if r.role == "backward" for k in r.graph.kernels.values()]
    assert sum("A summed over K" in s for s in sources) >= 3  # qkv, proj (shared with fc2's kernel) and fc1


@pytest.mark.parametrize("fn", [
    lambda a, b, x: a @ b + x.transpose(1, 2).reshape(6, 20),  # a GEMM's epilogue
    lambda a, b, x: x.transpose(1, 2).reshape(6, 20) @ b.t() + 1,  # a GEMM's A
    lambda a, b, x: (x.transpose(1, 2).reshape(6, 20) * b[0]).sum(-1),  # a reduction
], ids=["epilogue", "prologue", "reduction"])
def test_copy_read_through_a_reshape_by_a_template_or_reduction_stays_a_kernel(fn):
    # Only pointwise (and concat) kernels evaluate a copy at a reshape's coordinates; GEMM tiles and reduction
    # rows read their inputs through strides, so the copy stays a kernel of its own (a GEMM epilogue holding it
    # failed to lower).
    torch.manual_seed(0)
    cm = compile_and_compare(fn, (torch.randn(6, 8), torch.randn(8, 20), torch.randn(2, 4, 3, 5)), rtol=1e-4, atol=1e-4)
    assert cm.stats["launches"] == 2, cm.stats
