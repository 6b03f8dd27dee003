"""mlirfuse.viz: graph extraction from fused IR, DOT/SVG/HTML rendering and the `mlirfuse viz` CLI.

The page in a real browser: tests/test_viz_browser.py.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap

import pytest

from mlirfuse.dialect import make_context
from mlirfuse.ir import ir
from mlirfuse.passes.pipeline import build_pass_manager
from mlirfuse.tools.main import main
from mlirfuse.tools.opt import main as opt_main
from mlirfuse.viz import graph_of, graph_of_mlir, render, to_dot
from mlirfuse.viz.draw import VIZ_JS, VizError
from mlirfuse.viz.graph import ATEN, EXTERN, INPUT, OP, OUTPUT, VIEW, FusionGraph

# relu | extern (t(w) folded into mm) | sigmoid * mm: two groups either side of one ATen call
# (f64: the Triton GEMM template takes f32/f16/bf16, so mm stays an ATen extern call).
TWO_GROUPS = textwrap.dedent(
    """\
    func.func @forward(%x: !torch.vtensor<[4,16],f64>, %w: !torch.vtensor<[8,16],f64>) -> !torch.vtensor<[4,8],f64> {
      %0 = torch.aten.relu %x : !torch.vtensor<[4,16],f64> -> !torch.vtensor<[4,16],f64>
      %1 = torch.aten.t %w : !torch.vtensor<[8,16],f64> -> !torch.vtensor<[16,8],f64>
      %2 = torch.aten.mm %0, %1 : !torch.vtensor<[4,16],f64>, !torch.vtensor<[16,8],f64> -> !torch.vtensor<[4,8],f64>
      %3 = torch.aten.sigmoid %2 : !torch.vtensor<[4,8],f64> -> !torch.vtensor<[4,8],f64>
      %4 = torch.aten.mul.Tensor %3, %2 : !torch.vtensor<[4,8],f64>, !torch.vtensor<[4,8],f64> -> !torch.vtensor<[4,8],f64>
      return %4 : !torch.vtensor<[4,8],f64>
    }
    """
)

# The same pointwise body on both sides of mm: one kernel, two launches.
SHARED_KERNEL = textwrap.dedent(
    """\
    func.func @forward(%x: !torch.vtensor<[4,4],f64>, %w: !torch.vtensor<[4,4],f64>) -> !torch.vtensor<[4,4],f64> {
      %0 = torch.aten.relu %x : !torch.vtensor<[4,4],f64> -> !torch.vtensor<[4,4],f64>
      %1 = torch.aten.mm %0, %w : !torch.vtensor<[4,4],f64>, !torch.vtensor<[4,4],f64> -> !torch.vtensor<[4,4],f64>
      %2 = torch.aten.relu %1 : !torch.vtensor<[4,4],f64> -> !torch.vtensor<[4,4],f64>
      return %2 : !torch.vtensor<[4,4],f64>
    }
    """
)

CONCAT = textwrap.dedent(
    """\
    func.func @forward(%a: !torch.vtensor<[2,8],f32>, %b: !torch.vtensor<[2,8],f32>) -> !torch.vtensor<[4,8],f32> {
      %int0 = torch.constant.int 0
      %0 = torch.aten.relu %a : !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
      %1 = torch.aten.mul.Tensor %a, %b : !torch.vtensor<[2,8],f32>, !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
      %l = torch.prim.ListConstruct %0, %1 : (!torch.vtensor<[2,8],f32>, !torch.vtensor<[2,8],f32>) -> !torch.list<vtensor>
      %2 = torch.aten.cat %l, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,8],f32>
      return %2 : !torch.vtensor<[4,8],f32>
    }
    """
)


def fused(text: str, pipeline: str) -> FusionGraph:
    """`text` through `pipeline` (with explain), drawn."""
    context = make_context()
    with context:
        module = ir.Module.parse(text)
        build_pass_manager(pipeline, context, explain=True).run(module.operation)
        return graph_of(module, "test")


def edges_by_label(graph: FusionGraph) -> set[tuple[str, str]]:
    label = {n.id: n.label.split("\n")[0] for n in graph.nodes}
    return {(label[a], label[b]) for a, b in graph.edges}


@pytest.fixture
def write(tmp_path):
    def write(text: str, name: str = "input.mlir"):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


def test_groups_extern_and_reasons(write):
    graph = graph_of_mlir(write(TWO_GROUPS))
    assert graph.functions == ["forward"]
    assert [(c.kind, c.ops) for c in graph.clusters] == [
        ("pointwise", ["torch.aten.relu"]),
        ("pointwise", ["torch.aten.sigmoid", "torch.aten.mul.Tensor"]),
    ]
    assert all(c.name.startswith("fused_") for c in graph.clusters)
    # Each group says why mm stayed outside, as fusion-explain-unfused wrote it on the launch.
    why = "torch.aten.mm: not a GEMM the template takes: dtypes float64 @ float64 -> float64 (the template takes f32/f16/bf16, all alike)"
    assert graph.clusters[0].reasons == [f"consumer {why}"]
    assert graph.clusters[1].reasons == [f"producer {why}"]
    kinds = {n.label.split("\n")[0]: n.kind for n in graph.nodes}
    assert kinds == {
        "%arg0": INPUT, "%arg1": INPUT, "relu": OP, "extern mm": EXTERN, "sigmoid": OP, "mul.Tensor": OP, "return": OUTPUT,
    }
    assert "1 operand views" in next(n.label for n in graph.nodes if n.kind == EXTERN)
    assert edges_by_label(graph) == {
        ("%arg0", "relu"), ("relu", "extern mm"), ("%arg1", "extern mm"),
        ("extern mm", "sigmoid"), ("extern mm", "mul.Tensor"), ("sigmoid", "mul.Tensor"), ("mul.Tensor", "return"),
    }
    for cluster in graph.clusters:
        assert {n.cluster for n in graph.nodes if n.id in cluster.nodes} == {cluster.id}
    assert graph.stats() == {"groups": 2, "kernels": 2, "unfused_ops": 1, "unfused_views": 0}


def test_one_kernel_two_launches_are_two_clusters(write):
    graph = graph_of_mlir(write(SHARED_KERNEL))
    assert len(graph.clusters) == 2 and graph.clusters[0].name == graph.clusters[1].name
    assert graph.stats()["kernels"] == 1
    # Each launch draws its own copy of the kernel body.
    first, second = (c.nodes for c in graph.clusters)
    assert len(first) == len(second) == 1 and first != second
    assert edges_by_label(graph) == {("%arg0", "relu"), ("relu", "mm"), ("%arg1", "mm"), ("mm", "relu"), ("relu", "return")}
    assert next(n for n in graph.nodes if n.label == "mm").kind == ATEN


def test_concat_pieces_reach_the_cat_through_the_list():
    graph = fused(CONCAT, "mlirfuse-pipeline")
    (cluster,) = graph.clusters
    assert cluster.kind == "concat" and cluster.ops == ["torch.aten.relu", "torch.aten.mul.Tensor", "torch.aten.cat"]
    assert {("relu", "cat"), ("mul.Tensor", "cat"), ("%arg0", "relu"), ("%arg1", "mul.Tensor")} <= edges_by_label(graph)


def test_already_fused_ir_is_drawn_as_it_is(write, tmp_path):
    fused_file = tmp_path / "fused.mlir"
    assert opt_main([str(write(TWO_GROUPS)), "--mlirfuse-pipeline", "--fusion-explain", "-o", str(fused_file)]) == 0
    drawn, direct = graph_of_mlir(fused_file), graph_of_mlir(write(TWO_GROUPS))
    assert [(c.name, c.ops, c.reasons) for c in drawn.clusters] == [(c.name, c.ops, c.reasons) for c in direct.clusters]
    assert edges_by_label(drawn) == edges_by_label(direct)


def test_groups_before_outlining_and_unfused_views():
    graph = fused(TWO_GROUPS, "fusion-fuse-elementwise")
    assert [c.name for c in graph.clusters] == ["group 0", "group 1"]
    assert all(c.reasons for c in graph.clusters)
    kinds = {n.label: n.kind for n in graph.nodes}
    assert kinds["t"] == VIEW and kinds["mm"] == ATEN  # no fusion-extern-operands: plain ops


def test_every_function_is_drawn(write):
    second = TWO_GROUPS.replace("@forward", "@helper")
    graph = graph_of_mlir(write(TWO_GROUPS + second))
    assert graph.functions == ["forward", "helper"]
    assert [c.function for c in graph.clusters] == ["forward", "forward", "helper", "helper"]
    dot = to_dot(graph)
    assert dot.count('subgraph "cluster_func_') == 2


def test_dot_has_one_labelled_cluster_per_group(write):
    graph = graph_of_mlir(write(TWO_GROUPS))
    dot = to_dot(graph)
    assert len(re.findall(r"subgraph cluster_group\d+ \{", dot)) == 2
    for cluster in graph.clusters:
        assert f'id="{cluster.id}"' in dot
        n = len(cluster.ops)
        assert f'label="{cluster.name}\\npointwise · {n} op{"s" if n > 1 else ""}"' in dot
        assert cluster.reasons[0] in dot  # the tooltip
    assert 'class="node-extern"' in dot and 'class="node-input"' in dot


def test_quoting_survives_odd_names(write):
    graph = graph_of_mlir(write(TWO_GROUPS))
    graph.clusters[0].reasons = ['producer "x\\y": <odd>']
    dot = to_dot(graph)
    assert 'producer \\"x\\\\y\\": <odd>' in dot


@pytest.mark.skipif(not VIZ_JS.is_file(), reason="make setup installs @viz-js/viz (npm)")
def test_html_page_is_self_contained(write):
    graph = graph_of_mlir(write(TWO_GROUPS))
    page = render(graph, "html")
    assert "<script src" not in page and "<link" not in page and "@import" not in page
    data = json.loads(re.search(r'<script id="mlirfuse-data" type="application/json">(.*?)</script>', page, re.S).group(1))
    assert data["dot"] == to_dot(graph)
    assert [g["reasons"] for g in data["groups"].values()] == [c.reasons for c in graph.clusters]
    assert "2 fusion groups" in page


def test_html_without_the_browser_asset_names_the_fix(write, monkeypatch, tmp_path):
    monkeypatch.setattr("mlirfuse.viz.draw.VIZ_JS", tmp_path / "missing.js")
    with pytest.raises(VizError, match="make setup"):
        render(graph_of_mlir(write(TWO_GROUPS)), "html")


def test_cli_writes_dot(write, tmp_path, capsys):
    out = tmp_path / "g.dot"
    assert main(["viz", str(write(TWO_GROUPS)), "-o", str(out)]) == 0
    assert out.read_text().startswith("digraph fusion {")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_cli_svg_through_graphviz(write, tmp_path):
    out = tmp_path / "g.out"
    assert main(["viz", str(write(TWO_GROUPS)), "-o", str(out), "--format", "svg"]) == 0
    svg = out.read_text()
    assert len(re.findall(r'<g id="group\d+" class="cluster fusion&#45;group', svg)) == 2


def test_cli_svg_without_graphviz_says_so(write, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["viz", str(write(TWO_GROUPS)), "-o", str(tmp_path / "g.svg")]) == 1
    assert "--format svg needs Graphviz's 'dot' program on PATH" in capsys.readouterr().err


def test_cli_errors(write, tmp_path, capsys):
    assert main(["viz", "NoSuchModel"]) == 1
    assert "'NoSuchModel' is neither a .mlir file nor a bundled model (bundled: TinyBlock)" in capsys.readouterr().err
    assert main(["viz", str(tmp_path / "missing.mlir")]) == 1
    assert "cannot read" in capsys.readouterr().err
    bad = write("func.func @f() {\n  %0 = torch.aten.relu : oops\n}\n", "bad.mlir")
    assert main(["viz", str(bad), "-o", str(tmp_path / "g.dot")]) == 1
    err = capsys.readouterr().err
    assert re.search(rf"{re.escape(str(bad))}:2:\d+: error: ", err), err
    assert not (tmp_path / "g.dot").exists()


class _PeakModel(__import__("torch").nn.Module):
    """A GEMM, then a softmax over its rows: two launches, the GEMM's result the one intermediate."""

    def forward(self, x, w):
        return (x @ w).softmax(-1) * 2.0


def test_compiled_graph_shows_each_launch_cost_and_the_peak():
    import torch

    import mlirfuse
    from mlirfuse.analysis.cost import bytes_text
    from mlirfuse.viz import graph_of_compiled

    cm = mlirfuse.compile(_PeakModel(), (torch.randn(16, 8), torch.randn(8, 32)))
    graph = graph_of_compiled(cm, "peak")
    launches = [cost for _, kind, cost in cm.cost.steps if kind == "launch"]
    assert len(graph.clusters) == len(launches) >= 2
    for cluster, cost in zip(graph.clusters, launches):
        assert cluster.cost.startswith(f"{bytes_text(cost.bytes)} moved")
    plan = cm.program.plan
    peaked = [c for c in graph.clusters if c.peak]
    assert cm.program.steps[plan.peak_step].kind == "launch" and len(peaked) == 1
    assert bytes_text(plan.planned_peak_bytes) in peaked[0].peak
    launch_steps = [s.name for s in cm.program.steps if s.kind == "launch"]
    assert peaked[0].name == cm.program.steps[plan.peak_step].name == launch_steps[graph.clusters.index(peaked[0])]
    dot = to_dot(graph)
    assert dot.count(" peak") == 1 and "peak live memory during this launch" in dot
    assert graph.notes[0].startswith("peak live memory: ") and graph.notes[1].startswith("bytes per call: ")


def test_collectives_are_drawn_as_such():
    # A row-parallel linear's all_reduce and its wait, as the FX importer spells them: two collective nodes
    # (counted among the unfused calls, as cm.stats counts them), named by the collective, not "operator".
    text = textwrap.dedent(
        """\
        func.func @forward(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
          %str = torch.constant.str "sum"
          %str_0 = torch.constant.str "0"
          %0 = torch.aten.relu %x : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
          %1 = torch.operator "torch._c10d_functional.all_reduce"(%0, %str, %str_0) : (!torch.vtensor<[4,8],f32>, !torch.str, !torch.str) -> !torch.vtensor<[4,8],f32>
          %2 = torch.operator "torch._c10d_functional.wait_tensor"(%1) : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
          %3 = torch.aten.sigmoid %2 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
          return %3 : !torch.vtensor<[4,8],f32>
        }
        """
    )
    with make_context():
        graph = graph_of(ir.Module.parse(text))
    collectives = [n for n in graph.nodes if n.kind == "collective"]
    assert [n.label for n in collectives] == ["all_reduce", "wait_tensor"]
    assert graph.stats()["unfused_ops"] == 4  # relu, sigmoid (no pipeline ran) and the two collectives
    dot = to_dot(graph)
    assert dot.count("shape=\"hexagon\"") == 2 and "node-collective" in dot
