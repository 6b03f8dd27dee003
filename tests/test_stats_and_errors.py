"""The public contract of a compiled module: `stats`, `mlir`, `kernels`, and its errors."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.frontend.importer import import_module
from helpers import Lambda

STATS_KEYS = {"aten_ops", "groups", "kernels", "constant_merges", "launches", "unfused_ops", "unfused_views", "operand_views", "writebacks",
              "writeback_bytes", "planned_peak_bytes", "allocated_bytes", "bytes", "bytes_lower_bound", "flops", "roofline_ns",
              "passes_run", "kernels_compiled", "program_cache_hits", "program_cache_misses", "kernel_cache_hits",
              "kernel_cache_misses"}


def _launched_kernels(mlir: str) -> list[str]:
    return re.findall(r'"fusion\.launch"\([^)]*\) \{kernel = @(\w+)[,}]', mlir)


class TwoChains(nn.Module):
    """The same elementwise chain on two independent inputs, plus a matmul between them."""

    def forward(self, x, y):
        a = torch.sigmoid(torch.relu(x) * 2)
        b = torch.sigmoid(torch.relu(y) * 2)
        return a @ b.t(), a, b


@pytest.fixture(scope="module")
def two_chains():
    x, y = torch.randn(8, 16), torch.randn(8, 16)
    # matmul="aten": the matmul stays an ATen call between the two identical chains.
    return mlirfuse.compile(TwoChains(), (x, y), matmul="aten"), (x, y)


def test_stats_keys_and_types(two_chains):
    cm, _ = two_chains
    assert set(cm.stats) == STATS_KEYS
    for key, value in cm.stats.items():
        assert type(value) is int and value >= 0, (key, value)


def test_stats_are_consistent_with_the_ir(two_chains):
    cm, _ = two_chains
    stats = cm.stats
    launched = _launched_kernels(cm.mlir)
    assert stats["launches"] == len(launched) == cm.mlir.count('"fusion.launch"')
    assert stats["kernels"] == len(cm.kernels) == len(set(launched)) == cm.mlir.count('"fusion.kernel"')
    assert set(cm.kernels) == set(launched)
    assert stats["kernels"] <= stats["groups"]
    assert stats["unfused_ops"] >= 1  # the matmul


def test_identical_chains_share_one_kernel(two_chains):
    cm, (x, y) = two_chains
    assert cm.stats["kernels"] == 1, cm.mlir
    assert cm.stats["launches"] == 2
    expected = TwoChains()(x, y)
    torch.testing.assert_close(cm(x, y), expected)


def test_identical_independent_chains_share_one_kernel():
    # No matmul joining them: two outputs, nothing to merge through.
    model = Lambda(lambda x, y: (torch.tanh(x) + 1, torch.tanh(y) + 1))
    x, y = torch.randn(8, 16), torch.randn(8, 16)
    cm = mlirfuse.compile(model, (x, y))
    assert (cm.stats["kernels"], cm.stats["launches"]) == (1, 2), cm.stats
    torch.testing.assert_close(cm(x, y), model(x, y))


def test_aten_ops_counts_only_computing_ops():
    # relu and add.Scalar; the constant 1 (and alpha) are not ops that compute.
    cm = mlirfuse.compile(Lambda(lambda x: torch.relu(x) + 1), (torch.randn(4, 16),))
    assert cm.stats["aten_ops"] == 2
    assert cm.stats["unfused_ops"] == 0
    assert (cm.stats["groups"], cm.stats["kernels"], cm.stats["launches"]) == (1, 1, 1)


def test_aten_ops_excludes_list_construction():
    # view's size list is a torch.prim.ListConstruct of constants: not counted.
    cm = mlirfuse.compile(Lambda(lambda x: torch.relu(x.view(8, 8)) + 1), (torch.randn(4, 16),))
    assert "torch.prim.ListConstruct" in str(import_module(Lambda(lambda x: x.view(8, 8)), (torch.randn(4, 16),)).module)
    assert cm.stats["aten_ops"] == 3
    assert cm.stats["unfused_ops"] == 0  # the view is read inside the kernel


def test_mlir_and_kernel_sources():
    cm = mlirfuse.compile(Lambda(lambda x: torch.sigmoid(x) * 3), (torch.randn(4, 16),))
    assert "fusion.launch" in cm.mlir
    assert "fusion.kernel" in cm.mlir
    (name, kernel), = cm.kernels.items()
    assert kernel.name == name
    assert "@triton.jit" in kernel.source and f"def {name}(" in kernel.source


def test_kernels_are_cached_under_the_cache_dir():
    x = torch.randn(4, 16)
    cm = mlirfuse.compile(Lambda(lambda x: torch.exp(x) - 2), (x,))
    cm(x)
    root = Path(os.environ["MLIRFUSE_CACHE_DIR"])
    for name, kernel in cm.kernels.items():
        files = list(root.rglob(f"{name}_*.py"))
        assert files, f"no cached source for {name} under {root}"
        assert any(f.read_text() == kernel.source for f in files)


# --- errors -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_inputs():
    # strict: a mismatch raises instead of compiling a new specialization (tests/test_guards.py).
    model = Lambda(lambda x, y: torch.relu(x * y) + 1)
    return mlirfuse.compile(model, (torch.randn(4, 16), torch.randn(4, 16)), strict=True)


def test_wrong_shape_names_the_input(two_inputs):
    with pytest.raises(mlirfuse.InputMismatchError, match=r"input 1\b.*\[4, 16\].*\[4, 8\]"):
        two_inputs(torch.randn(4, 16), torch.randn(4, 8))


def test_wrong_dtype_names_the_input(two_inputs):
    with pytest.raises(mlirfuse.InputMismatchError, match=r"input 0\b.*float64"):
        two_inputs(torch.randn(4, 16, dtype=torch.float64), torch.randn(4, 16))


def test_wrong_number_of_inputs(two_inputs):
    with pytest.raises(mlirfuse.InputMismatchError, match="2 inputs"):
        two_inputs(torch.randn(4, 16))


class Masked(nn.Module):
    """Keyword arguments after the positional input, as transformers' `attention_mask`."""

    def forward(self, x, mask=None, scale=None):
        return torch.relu(x * scale).masked_fill(mask, 0.0)


def test_keyword_inputs_in_any_order():
    x, mask, scale = torch.randn(4, 16), torch.rand(4, 16) > 0.5, torch.randn(16)
    cm = mlirfuse.compile(Masked(), (x,), {"scale": scale, "mask": mask})
    expected = Masked()(x, mask=mask, scale=scale)
    # Flattened in the example's keyword order, whatever order the caller uses.
    assert torch.equal(cm(x, mask=mask, scale=scale), expected)
    assert torch.equal(cm(x, scale=scale, mask=mask), expected)
    assert cm.guard_stats["compiles"] == 1
    strict = mlirfuse.compile(Masked(), (x,), {"scale": scale, "mask": mask}, strict=True)
    with pytest.raises(mlirfuse.InputMismatchError, match="keyword arguments"):
        strict(x, mask=mask)


def test_input_mismatch_is_an_mlirfuse_error():
    assert issubclass(mlirfuse.InputMismatchError, mlirfuse.MlirfuseError)
    assert issubclass(mlirfuse.UnsupportedModelError, mlirfuse.MlirfuseError)


def test_non_module_is_rejected():
    with pytest.raises(mlirfuse.UnsupportedModelError, match="nn.Module"):
        mlirfuse.compile(lambda x: x + 1, (torch.randn(4),))


def test_unfused_views_counts_only_aliasing_ops():
    fn = Lambda(lambda x, w: (x.transpose(0, 1) @ w).view(-1))
    cm = mlirfuse.compile(fn, (torch.randn(4, 8), torch.randn(4, 3)), matmul="aten")
    # The transpose is the matmul's strided operand (an extern group); the
    # view of the matmul's result aliases it; the matmul computes.
    assert cm.stats["operand_views"] == 1, cm.stats
    assert cm.stats["unfused_views"] == 1 and cm.stats["unfused_ops"] == 2, cm.stats


def test_explain_names_the_reason_for_each_unfused_neighbour():
    fn = Lambda(lambda x, w: torch.relu(x @ w) + torch.logcumsumexp(x, 0))
    cm = mlirfuse.compile(fn, (torch.randn(4, 4), torch.randn(4, 4)), explain=True, matmul="aten")
    reasons = [r for rs in cm.explain().values() for r in rs]
    assert any("torch.aten.matmul" in r and "unsupported op" in r for r in reasons), reasons
    assert any("torch.aten.logcumsumexp" in r for r in reasons), reasons
    assert "fusion.explain" in cm.mlir
