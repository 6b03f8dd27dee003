"""mode="reduce-overhead": calls replayed from CUDA graphs (runtime/graphs.py).

Without a GPU only the option's checks and the reasons a program runs
without a graph run here; the captures and replays run where CUDA is
(`pytest tests/test_cuda_graphs.py` on a GPU machine), each result against
eager on the same device.
"""

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.runtime.graphs import GraphedProgram, random_step

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


class Block(nn.Module):
    def __init__(self, d=32, h=64):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, h)
        self.down = nn.Linear(h, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class Noisy(nn.Module):
    def forward(self, x):
        return x * 2 + torch.rand_like(x)


class Viewer(nn.Module):
    def forward(self, x):
        return x[0], x.sin()


def test_a_bad_mode_is_refused():
    with pytest.raises(ValueError, match="mode must be one of 'default', 'reduce-overhead'"):
        mlirfuse.compile(Block().eval(), (torch.randn(2, 4, 32),), mode="max-autotune")


def test_default_mode_has_no_graphs():
    cm = mlirfuse.compile(Block().eval(), (torch.randn(2, 4, 32),))
    assert cm.cuda_graphs is None


def test_without_cuda_calls_run_as_usual_and_say_why(monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")
    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(2, 4, 32)
    cm = mlirfuse.compile(model, (x,), mode="reduce-overhead")
    for _ in range(3):
        torch.testing.assert_close(cm(x), model(x), rtol=1e-5, atol=1e-5)
    stats = cm.cuda_graphs
    assert stats["captures"] == 0 and stats["ungraphed_calls"] == 3
    assert "CUDA" in stats["not_graphed"] or "cpu" in stats["not_graphed"]


def test_bounds_checked_launches_are_not_graphed(monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "1")
    x = torch.randn(2, 4, 32)
    cm = mlirfuse.compile(Block().eval(), (x,), mode="reduce-overhead")
    cm(x)
    assert "MLIRFUSE_CHECK_BOUNDS" in cm.cuda_graphs["not_graphed"]


def test_random_ops_are_never_graphed():
    x = torch.randn(4, 8)
    noisy = mlirfuse.compile(Noisy(), (x,), mode="reduce-overhead")
    assert "rand" in random_step(noisy.program)
    assert "random numbers" in noisy.cuda_graphs["not_graphed"]
    assert random_step(mlirfuse.compile(Block().eval(), (torch.randn(2, 4, 32),)).program) is None


@pytest.fixture
def unchecked(monkeypatch):
    """Launches as users run them: a bounds-checked launch reads its guards on the host, which no graph holds."""
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")


@cuda
def test_replays_match_eager_and_keep_earlier_results(unchecked):
    torch.manual_seed(0)
    model = Block().cuda().eval()
    xs = [torch.randn(2, 8, 32, device="cuda") for _ in range(5)]
    cm = mlirfuse.compile(model, (xs[0],), mode="reduce-overhead")
    outs = [cm(x) for x in xs]
    with torch.no_grad():
        for x, out in zip(xs, outs):  # an earlier call's result is not overwritten by a later replay
            torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)
    stats = cm.cuda_graphs
    assert (stats["warmups"], stats["captures"], stats["replays"], stats["ungraphed_calls"]) == (1, 1, 4, 0), stats


@cuda
def test_parameters_updated_in_place_or_replaced(unchecked):
    torch.manual_seed(0)
    model = Block().cuda().eval()
    x = torch.randn(2, 8, 32, device="cuda")
    cm = mlirfuse.compile(model, (x,), mode="reduce-overhead")
    cm(x), cm(x)
    with torch.no_grad():
        model.up.weight.add_(0.5)  # the same storage: the graph reads the new values
        torch.testing.assert_close(cm(x), model(x), rtol=1e-5, atol=1e-5)
        assert cm.cuda_graphs["captures"] == 1
        model.down.weight = nn.Parameter(torch.randn_like(model.down.weight))  # another tensor: captured anew
        torch.testing.assert_close(cm(x), model(x), rtol=1e-5, atol=1e-5)
        assert cm.cuda_graphs["captures"] == 2


@cuda
def test_a_result_viewing_an_input_runs_without_a_graph(unchecked):
    x = torch.randn(3, 5, device="cuda")
    cm = mlirfuse.compile(Viewer(), (x,), mode="reduce-overhead")
    for _ in range(3):
        first, second = cm(x)
        assert first.data_ptr() == x.data_ptr()  # a view of the caller's tensor, as eager
        torch.testing.assert_close(second, x.sin())
    assert "view of an input" in cm.cuda_graphs["not_graphed"]


@cuda
def test_dynamic_shapes_keep_a_graph_per_shape(unchecked):
    torch.manual_seed(0)
    model = Block().cuda().eval()
    batch = torch.export.Dim("batch", min=1, max=64)
    cm = mlirfuse.compile(model, (torch.randn(2, 8, 32, device="cuda"),), dynamic_shapes=({0: batch},),
                          mode="reduce-overhead")
    with torch.no_grad():
        for rows in (2, 5, 2, 5, 2, 5):
            x = torch.randn(rows, 8, 32, device="cuda")
            torch.testing.assert_close(cm(x), model(x), rtol=1e-5, atol=1e-5)
    stats = cm.cuda_graphs
    assert (stats["warmups"], stats["captures"], stats["replays"]) == (2, 2, 4), stats


@cuda
def test_a_loaded_package_replays_graphs(unchecked, tmp_path):
    torch.manual_seed(0)
    model = Block().cuda().eval()
    x = torch.randn(2, 8, 32, device="cuda")
    mlirfuse.save(mlirfuse.compile(model, (x,)), tmp_path / "pkg", targets=())
    run = mlirfuse.load(tmp_path / "pkg", weights=model, mode="reduce-overhead")
    with torch.no_grad():
        for _ in range(3):
            y = torch.randn_like(x)
            torch.testing.assert_close(run(y), model(y), rtol=1e-5, atol=1e-5)
    assert run.cuda_graphs["replays"] == 2


def test_graphed_program_counts_arguments_by_kind():
    x = torch.randn(2, 4, 32)
    cm = mlirfuse.compile(Block().eval(), (x,))
    kinds = [kind for kind, _ in cm.imported.bindings]
    graphed = GraphedProgram(cm.program, kinds)
    assert sum(graphed._fixed) == sum(kind in ("param", "buffer", "constant") for kind in kinds) > 0


def test_load_takes_the_mode(tmp_path):
    x = torch.randn(2, 4, 32)
    model = Block().eval()
    mlirfuse.save(mlirfuse.compile(model, (x,)), tmp_path / "pkg", targets=())
    with pytest.raises(ValueError, match="mode must be one of"):
        mlirfuse.load(tmp_path / "pkg", weights=model, mode="fast")
    run = mlirfuse.load(tmp_path / "pkg", weights=model, mode="reduce-overhead")
    with torch.no_grad():
        torch.testing.assert_close(run(x), model(x), rtol=1e-5, atol=1e-5)
    assert run.cuda_graphs["ungraphed_calls"] == 1


def test_the_backend_takes_the_mode():
    from mlirfuse.backend import Backend
    from mlirfuse.errors import PipelineError

    with pytest.raises(ValueError, match="mode must be one of"):
        Backend(mode="fast")
    with pytest.raises(PipelineError, match="unknown mlirfuse backend option"):
        Backend(cuda_graphs=True)
    torch._dynamo.reset()
    backend = Backend(mode="reduce-overhead")
    model = Block().eval()
    compiled = torch.compile(model, backend=backend)
    x = torch.randn(2, 4, 32)
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    stats = backend.stats["inference"]
    assert stats["cuda_graph_captures"] == 0 and stats["cuda_graph_ungraphed_calls"] == 3
    (runner,) = [record.runner for record in backend.graphs if record.runner is not None]
    assert sum(runner._fixed) == len(list(model.parameters()))  # read in place, not copied in per call


@cuda
def test_the_backend_replays_inference_graphs_with_parameters_in_place(unchecked):
    from mlirfuse.backend import Backend

    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Block().cuda().eval()
    backend = Backend(mode="reduce-overhead")
    compiled = torch.compile(model, backend=backend)
    with torch.no_grad():
        for _ in range(4):
            x = torch.randn(2, 8, 32, device="cuda")
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
        model.up.weight.mul_(0.5)  # in place: the replay reads it (a parameter is not copied into the graph)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    stats = backend.stats["inference"]
    assert (stats["cuda_graph_captures"], stats["cuda_graph_replays"]) == (1, 4), stats
