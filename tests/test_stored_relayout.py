"""A GEMM storing its tile straight into a relayout of it (issue 22, the training forward).

AOTAutograd saves the head-split q, k and v for the backward, so their
copies (`view -> transpose -> clone -> view`) are graph results; the
attention output's head merge is another copy. The GEMM producing the values
stores each copy in its layout from its epilogue (`ops.views.relayout_strides`),
so no kernel only copies. Numerics against eager PyTorch (TRITON_INTERPRET=1),
forward graphs here; the GPT-2 block's training steps (gradients) in
tests/test_backward_fusion.py.
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import mlirfuse
from mlirfuse.backend import backend
from helpers import Lambda, compile_and_compare


@pytest.fixture(autouse=True)
def _fresh_dynamo(fresh_dynamo):
    backend.clear()


def _head_split(x, w, b):
    # t = 20 rows (no block multiple), d = 48, 4 heads of 12: q [b, h, t, hd], k transposed [b, h, hd, t], v.
    n, t, d = x.shape
    q, k, v = (x @ w.t() + b).split(d, dim=-1)
    q, k, v = (y.view(n, t, 4, d // 4).transpose(1, 2) for y in (q, k, v))
    return q.contiguous(), k.transpose(-2, -1).contiguous(), v.reshape(n * 4, t, d // 4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_qkv_gemm_stores_the_head_splits(dtype):
    torch.manual_seed(0)
    inputs = (torch.randn(2, 20, 48, dtype=dtype), torch.randn(144, 48, dtype=dtype), torch.randn(144, dtype=dtype))
    tolerances = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=2e-2, atol=5e-2)
    cm = compile_and_compare(_head_split, inputs, **tolerances)
    assert cm.stats["launches"] == 1, cm.stats  # the grouped q/k/v GEMM, storing the three copies
    assert "stored relaid" in "\n".join(k.source for k in cm.kernels.values())


def test_batched_gemm_stores_the_head_merge():
    # attention's `p @ v` per head ([b * h, t, hd]) merged to [b, t, h * hd]: the bmm's batch index is cut
    # into (b, h), its columns land beside the other heads' of the row.
    torch.manual_seed(0)

    def fn(p, v):
        return torch.bmm(p, v).view(2, 4, 20, 12).transpose(1, 2).reshape(2, 20, 48)

    cm = compile_and_compare(fn, (torch.randn(8, 20, 20), torch.randn(8, 20, 12)), rtol=1e-4, atol=1e-4)
    assert cm.stats["launches"] == 1, cm.stats


@pytest.mark.parametrize("fn", [
    lambda a, b: (a @ b).t().contiguous().view(3, 8),  # [6, 4] -> [4, 6] -> [3, 8]: no stride per dim
    lambda a, b: (a @ b).t().contiguous() * 2,  # computed on: read at the view's coordinates
], ids=["no-strides", "computed-on"])
def test_relayouts_the_epilogue_cannot_store_stay_kernels(fn):
    torch.manual_seed(0)
    cm = compile_and_compare(fn, (torch.randn(6, 5), torch.randn(5, 4)), rtol=1e-4, atol=1e-4)
    assert cm.stats["launches"] == 2, cm.stats


def test_dynamic_rows_keep_the_copy_kernel():
    # `?` rows: the relayout's strides are not constants, the copy stays a kernel; any batch size is right.
    torch.manual_seed(0)
    model = Lambda(_head_split)
    w, b = torch.randn(144, 48), torch.randn(144)
    cm = mlirfuse.compile(model, (torch.randn(2, 20, 48), w, b), dynamic_shapes=(({0: Dim("n")}, None, None),))  # Lambda takes *args
    for n in (2, 3):
        x = torch.randn(n, 20, 48)
        for got, want in zip(cm(x, w, b), model(x, w, b)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)



def _relayout(rng, y):
    """`y` through 1-4 random splits, merges, transposes and permutes, then copied (and maybe flattened)."""
    for _ in range(rng.randint(1, 4)):
        shape, r = list(y.shape), y.dim()
        step = rng.choice(("split", "merge", "transpose", "permute"))
        splittable = [(d, f) for d in range(r) for f in range(2, shape[d]) if shape[d] % f == 0]
        if step == "split" and splittable:
            d, f = rng.choice(splittable)
            y = y.view(*shape[:d], f, shape[d] // f, *shape[d + 1 :])
        elif step == "merge" and r >= 2:
            d = rng.randrange(r - 1)
            y = y.reshape(*shape[:d], shape[d] * shape[d + 1], *shape[d + 2 :])
        elif step == "transpose" and r >= 2:
            y = y.transpose(*rng.sample(range(r), 2))
        elif step == "permute" and r >= 2:
            y = y.permute(*rng.sample(range(r), r))
    y = y.contiguous()
    return y.flatten(0, 1) if rng.random() < 0.5 and y.dim() >= 2 else y


@pytest.mark.parametrize("seed", range(6))
def test_random_relayouts_of_a_gemm_match_eager(seed):
    # Random view/transpose/permute chains copied after a GEMM (a bmm, a batched matmul, an mm), beside the
    # GEMM's own result or not: whatever the epilogue stores in place, every result equals eager's.
    import random

    rng = random.Random(seed)
    batch = rng.choice(((), (2,), (3,)))
    m, k, n = rng.choice((4, 6, 12, 20)), rng.choice((8, 16)), rng.choice((4, 6, 12, 24))
    a, w = torch.randn(*batch, m, k), torch.randn(*batch[:1] if len(batch) and rng.random() < 0.5 else (), k, n)
    also, seeds = rng.random() < 0.3, [rng.randrange(1 << 30) for _ in range(rng.randint(1, 2))]

    def fn(a, w):
        y = torch.nn.functional.gelu(torch.matmul(a, w))
        return (*(_relayout(random.Random(s), y) for s in seeds), *([y] if also else []))

    compile_and_compare(fn, (a, w), fused=False, rtol=1e-4, atol=1e-4)  # (a contiguous chain is a view: ATen)
