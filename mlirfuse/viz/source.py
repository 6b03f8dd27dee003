"""What `mlirfuse viz` draws: a .mlir file or a bundled model, as a `FusionGraph`.

A .mlir file holding `torch`-dialect functions runs through the mlirfuse
pipeline with fusion-explain-unfused on; one that already holds fusion ops
(`mlirfuse-opt --mlirfuse-pipeline --fusion-explain` output, or part way
through the pipeline) is drawn as it is. Bad input is reported as
mlirfuse-opt reports it: located diagnostics.
"""

from __future__ import annotations

from pathlib import Path

import torch

import mlirfuse
from mlirfuse import models
from mlirfuse.analysis.cost import bytes_text, count_text
from mlirfuse.diagnostics import Collector
from mlirfuse.dialect import make_context, verify_fusion_ops
from mlirfuse.input_checks import check_ir, check_text, decode
from mlirfuse.ir import ir
from mlirfuse.passes import default_pipeline
from mlirfuse.passes.pipeline import build_pass_manager
from mlirfuse.runtime.liveness import peak_text
from mlirfuse.viz.draw import VizError
from mlirfuse.viz.graph import FusionGraph, graph_of

# Models `mlirfuse viz NAME` compiles: classes in mlirfuse.models, fed models.demo_inputs().
BUNDLED = ("TinyBlock",)


class InvalidInput(VizError):
    """Bad IR: the message is located diagnostics (`file:line:col: error: ...`), one a line."""


def argument_names(bindings: list[tuple[str, object]]) -> list[str]:
    """A compiled model's function arguments as the user knows them: parameter, buffer or input."""
    names = []
    for kind, what in bindings:
        if kind in ("param", "buffer"):
            names.append(str(what))
        elif kind == "input":
            names.append(f"input {what}")
        else:
            names.append(kind)
    return names


def graph_of_compiled(cm, title: str) -> FusionGraph:
    """The graph of a `mlirfuse.compile` result (compile with explain=True to have the reasons), with each
    launch's bytes and FLOPs, the launch where the planned peak of live intermediates falls, and the totals."""
    graph = graph_of(cm.imported.module, title, argument_names(cm.imported.bindings))
    program = cm.program
    graph.notes.append("peak live memory: " + peak_text(program.plan, [step.name for step in program.steps]))
    if cm.cost is not None:
        bound = cm.cost.lower_bound_bytes
        graph.notes.append(f"bytes per call: {bytes_text(cm.cost.total.bytes)} moved, lower bound {bytes_text(bound)}")
    # The first function's clusters are its launches, in program order (as the cost model's and the program's
    # launch steps are, unless a kernel the lowering refused runs as ATen ops: then nothing is matched).
    clusters = [c for c in graph.clusters if c.function == graph.functions[0]] if graph.functions else []
    launches = [i for i, step in enumerate(program.steps) if step.kind == "launch"]
    costs = [cost for _, kind, cost in (cm.cost.steps if cm.cost else []) if kind == "launch"]
    if len(costs) == len(clusters):
        for cluster, cost in zip(clusters, costs):
            cluster.cost = f"{bytes_text(cost.bytes)} moved · {count_text(cost.flops)} FLOPs"
    peak = program.plan.peak_step
    if len(launches) == len(clusters) and peak in launches:
        clusters[launches.index(peak)].peak = f"peak live memory during this launch: {bytes_text(program.plan.planned_peak_bytes)}"
    return graph


def compile_bundled(name: str):
    """Compile a bundled model (see BUNDLED) with explain on, as `mlirfuse demo` does."""
    torch.manual_seed(0)
    return mlirfuse.compile(getattr(models, name)().eval(), models.demo_inputs(), explain=True)


def _has_fusion_ops(module: ir.Module) -> bool:
    found = False

    def visit(op):
        nonlocal found
        found = found or op.name.startswith("fusion.")
        return ir.WalkResult.INTERRUPT if found else ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def graph_of_mlir(path: Path) -> FusionGraph:
    """Parse `path`, fuse it unless it already holds fusion ops, and return its graph."""
    filename = str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise VizError(f"cannot read '{filename}': {e.strerror}") from None
    text, problem = decode(data, filename)
    problem = problem or check_text(text, filename)
    if problem is not None:
        raise InvalidInput(problem.format())
    context = make_context()
    collector = Collector(context, filename)
    try:
        with context:
            module = ir.Module.parse(text)
            if check_ir(module) and verify_fusion_ops(module.operation):
                if not _has_fusion_ops(module):
                    build_pass_manager(default_pipeline(), context, explain=True).run(module.operation)
                return graph_of(module, path.name)
    except ir.MLIRError as e:
        collector.add_error(e)
    finally:
        collector.detach()
    raise InvalidInput("\n".join(d.format() for d in collector.diags) or f"{filename}: error: cannot draw this IR")


def load(target: str) -> FusionGraph:
    """`target`: a .mlir file, or the name of a bundled model (BUNDLED)."""
    path = Path(target)
    if path.suffix == ".mlir" or path.is_file():
        return graph_of_mlir(path)
    names = {n.lower(): n for n in BUNDLED}
    name = names.get(target.lower().replace("-", "").replace("_", ""))
    if name is None:
        raise VizError(f"'{target}' is neither a .mlir file nor a bundled model (bundled: {', '.join(BUNDLED)})")
    return graph_of_compiled(compile_bundled(name), name)
