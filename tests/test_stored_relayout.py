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

