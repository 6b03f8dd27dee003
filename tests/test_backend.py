"""`torch.compile(model, backend="mlirfuse")`: discovery, training through AOTAutograd, stats, eager fallback."""

from __future__ import annotations

import logging

import pytest
import torch

import mlirfuse
from mlirfuse import models
from mlirfuse.backend import Backend, backend
from helpers import discover_dynamo_backends, train_side_by_side


@pytest.fixture(autouse=True)
def _fresh_dynamo(fresh_dynamo):
    """Every test here compiles through Dynamo: tests/conftest.py's `fresh_dynamo` around each."""


@pytest.fixture(scope="module", autouse=True)
def _entry_point(tmp_path_factory):
    discover_dynamo_backends(tmp_path_factory.mktemp("entry-points"))


def test_entry_point_names_the_backend():
    """backend="mlirfuse" resolves through the `torch_dynamo_backends` entry point (nothing registers it by import)."""
    from torch._dynamo.backends.registry import _BACKENDS, lookup_backend

    assert _BACKENDS["mlirfuse"].value == "mlirfuse.backend:backend"
    assert lookup_backend("mlirfuse") is backend


def test_mlp_trains_like_eager_with_fused_backward():
    torch.manual_seed(0)
    batches = [(torch.randn(2, 4, 32), torch.randn(2, 4, 32)) for _ in range(3)]
    train_side_by_side(models.MLP(), lambda m: torch.compile(m, backend="mlirfuse"), batches)
    stats = backend.stats
    assert stats["forward"]["graphs"] == stats["backward"]["graphs"] == 1, stats
    assert stats["forward"]["eager_graphs"] == stats["backward"]["eager_graphs"] == 0
    # LayerNorm's and GELU's backward (decomposed) are fused: more ops than launches.
    back = stats["backward"]
    assert back["launches"] >= 2 and back["unfused_ops"] <= 8, back
    kernels = "\n".join(k.source for r in backend.graphs if r.role == "backward" for k in r.graph.kernels.values())
    assert "tl.sum" in kernels  # the LayerNorm backward's reductions are in kernels, not ATen


def test_gpt2_block_trains_like_eager():
    torch.manual_seed(0)
    block = models.TinyBlock(d_model=32, n_heads=2, seq=8)
    batches = [(torch.randn(2, 8, 32), torch.randn(2, 8, 32)) for _ in range(3)]
    train_side_by_side(block, lambda m: torch.compile(m, backend="mlirfuse"), batches)
    stats = backend.stats
    assert stats["backward"]["launches"] >= 3 and stats["backward"]["eager_graphs"] == 0, stats


def test_cnn_with_batch_norm_trains_like_eager():
    torch.manual_seed(0)
    batches = [(torch.randn(2, 3, 6, 6), torch.randn(2, 3)) for _ in range(3)]
    eager, ours = train_side_by_side(models.SmallCNN().train(), lambda m: torch.compile(m, backend="mlirfuse"), batches)
    assert ours.bn1.num_batches_tracked.item() == 3
    assert backend.stats["backward"]["launches"] >= 2


def test_graph_break_compiles_each_graph():
    def f(x):
        y = torch.relu(x) + 1
        torch._dynamo.graph_break()
        return torch.sigmoid(y) * 2

    x = torch.randn(4, 8)
    torch.testing.assert_close(torch.compile(f, backend="mlirfuse")(x), f(x))
    assert backend.stats["inference"]["graphs"] == 2 and backend.stats["inference"]["eager_graphs"] == 0


def test_inference_graph_under_no_grad():
    model = models.MLP().eval()
    x = torch.randn(2, 4, 32)
    compiled = torch.compile(model, backend="mlirfuse")
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    assert set(backend.stats) == {"inference"}
    graph = backend.graphs[0].graph
    assert graph.stats["launches"] >= 1 and "fusion.launch" in graph.mlir


def test_options_reach_the_pipeline():
    mine = Backend(explain=True)
    # logcumsumexp has no kernel: the explain report names it as the pointwise groups' neighbour.
    f = torch.compile(lambda x: torch.logcumsumexp(torch.exp(x), 0) + 1, backend=mine)
    x = torch.randn(4, 4)
    torch.testing.assert_close(f(x), torch.logcumsumexp(torch.exp(x), 0) + 1)
    assert any(mine.graphs[0].graph.explain().values())
    assert backend.graphs == []  # a Backend instance keeps its own records
    with pytest.raises(Exception, match="unknown mlirfuse backend option"):
        torch.compile(lambda x: x + 1, backend="mlirfuse", options={"max_args": 3})(x)


def test_unsupported_op_runs_eagerly_with_one_log_line(caplog):
    # torch.cond is a higher-order op: the graph holding it runs eagerly, whatever else it holds.
    def f(x):
        return torch.cond(x.sum() > 0, torch.sin, torch.cos, (torch.relu(x) + 1,)) * 2

    x = torch.randn(4, 8)
    with caplog.at_level(logging.INFO, logger="mlirfuse"):
        out = torch.compile(f, backend="mlirfuse")(x)
    torch.testing.assert_close(out, f(x))
    lines = [r.getMessage() for r in caplog.records if r.name == "mlirfuse"]
    assert len(lines) == 1 and "op 'cond'" in lines[0], lines
    assert backend.stats["inference"]["eager_graphs"] == 1



def test_dynamic_shapes_train_like_eager_without_recompiling():
    # dynamic=True: Dynamo hands over graphs with symbolic sizes (int inputs, `?` dims); each
    # role compiles once and serves every batch and sequence length (issue 11 item 4).
    torch.manual_seed(0)
    shapes = [(2, 3, 32), (5, 3, 32), (4, 7, 32)]
    batches = [(torch.randn(*s), torch.randn(*s)) for s in shapes]
    train_side_by_side(models.MLP(), lambda m: torch.compile(m, backend="mlirfuse", dynamic=True), batches)
    stats = backend.stats
    assert stats["forward"]["graphs"] == stats["backward"]["graphs"] == 1, stats
    assert stats["forward"]["eager_graphs"] == stats["backward"]["eager_graphs"] == 0
    assert stats["forward"]["launches"] >= 2 and stats["backward"]["launches"] >= 2, stats
    forward = next(r.graph for r in backend.graphs if r.role == "forward")
    assert "?,?,32" in forward.mlir and "!torch.int" in forward.mlir  # symbolic sizes, as int inputs


def test_automatic_dynamic_shapes_compile_the_second_graph_symbolic():
    # Without dynamic=: a second size makes Dynamo recompile with symbolic sizes; that graph serves the third.
    def f(x):
        return torch.softmax(torch.relu(x) * 2, dim=-1)

    compiled = torch.compile(f, backend="mlirfuse")
    with torch.no_grad():
        for n in (4, 6, 9):
            x = torch.randn(n, 8)
            torch.testing.assert_close(compiled(x), f(x))
    stats = backend.stats["inference"]
    assert stats["graphs"] == 2 and stats["eager_graphs"] == 0, stats
    assert "?,8" in backend.graphs[-1].graph.mlir


class _RegionBlock(torch.nn.Module):
    def __init__(self, d: int = 16):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.norm = torch.nn.LayerNorm(d)

    @torch.compiler.nested_compile_region
    def forward(self, x):
        return self.norm(torch.nn.functional.gelu(self.lin(x)) + x)


class _RegionStack(torch.nn.Module):
    def __init__(self, layers: int):
        super().__init__()
        self.blocks = torch.nn.ModuleList([_RegionBlock() for _ in range(layers)])

    def forward(self, x):
        x = x * 2
        for block in self.blocks:
            x = block(x)
        return x.sum(-1)


@pytest.mark.parametrize("layers", [2, 5])
def test_nested_compile_regions_compile_once_and_are_called_per_block(layers):
    # Issue 20 item 1: Dynamo's invoke_subgraph (torch.compiler.nested_compile_region) reached the backend as a
    # higher-order op and the whole graph ran eagerly. Now the subgraph is one private function, compiled once
    # (its kernels do not grow with depth), called per block.
    torch.manual_seed(0)
    model = _RegionStack(layers).eval()
    b = Backend()
    compiled = torch.compile(model, backend=b)
    x = torch.randn(4, 16)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    (record,) = b.graphs
    assert record.eager_reason is None
    graph = record.graph
    assert [s.kind for s in graph.program.steps].count("call") == layers
    assert "func.func private @forward_repeated_subgraph0" in graph.mlir
    assert graph.stats["kernels"] == 4  # the scale, the block's GEMM + gelu + residual and layer norm, the sum
    assert graph.stats["launches"] == 2 + 2 * layers


def test_nested_compile_regions_train_like_eager():
    torch.manual_seed(0)
    model = _RegionStack(3)
    reference = _RegionStack(3)
    reference.load_state_dict(model.state_dict())
    b = Backend()
    compiled = torch.compile(model, backend=b)
    x = torch.randn(4, 16)
    compiled(x).sum().backward()
    reference(x).sum().backward()
    assert [(g.role, g.eager_reason) for g in b.graphs] == [("forward", None), ("backward", None)]
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


@pytest.mark.parametrize("in_place", [True, False], ids=["stored_in_place", "copied"])
def test_stats_count_the_copies_of_mutated_buffers_back(in_place, monkeypatch):
    """Batch norm in training updates its running stats in place: AOTAutograd's runtime (the backend) and
    `call_program` (mlirfuse.compile) copy the graph's results into them after each call. Those copies are device
    calls outside the kernels: `writebacks` counts them and `writeback_bytes` what they move (read + write);
    a result the kernel stored in the buffer itself moves nothing (tests/test_write_back_in_place.py), and
    with in-place stores off (`MLIRFUSE_NO_REUSE=1`) every copy counts."""
    if not in_place:
        monkeypatch.setenv("MLIRFUSE_NO_REUSE", "1")
    model = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).train()
    x = torch.randn(2, 4, 8, 8)
    torch.compile(model, backend=backend)(x).sum().backward()
    # running_mean and running_var: 8 f32 each; num_batches_tracked: one i64. Each read once and written once.
    expected = (3, 2 * (8 * 4 + 8 * 4 + 8)) if not in_place else (0, 0)
    assert (backend.stats["forward"]["writebacks"], backend.stats["forward"]["writeback_bytes"]) == expected
    assert (backend.stats["backward"]["writebacks"], backend.stats["backward"]["writeback_bytes"]) == (0, 0)
    cm = mlirfuse.compile(model, (x,))
    assert (cm.stats["writebacks"], cm.stats["writeback_bytes"]) == expected
    assert mlirfuse.compile(model.eval(), (x,)).stats["writebacks"] == 0
