"""Embedding mlirfuse in another MLIR-based compiler: its Context, its PassManager, our passes.

    from torch_mlir import ir, passmanager
    from torch_mlir.dialects import torch as torch_d
    from mlirfuse import embed

    ctx = ir.Context()
    torch_d.register_dialect(ctx)             # the caller's context, torch-mlir's dialects loaded
    embed.load_dialect(ctx)                    # idempotent
    with ctx:
        module = ir.Module.parse(text)
        pm = passmanager.PassManager.parse("builtin.module(func.func(torch-maximize-value-semantics))")
        embed.add_passes(pm, "mlirfuse-pipeline{max-args=64 explain=true}")
        embed.add_pass(pm, "fusion-fuse-vertical", max_args=16)    # one pass, options as keywords
        pm.add("canonicalize")                 # anything else the caller runs
        pm.run(module.operation)
    sources = embed.triton_sources(module)     # fusion.kernel name -> Triton source

What this module promises (the rest of mlirfuse may move):

- `load_dialect(ctx)`: the `fusion` ops parse, verify and print in `ctx`;
  loading twice is harmless. The ops are unregistered (see
  `mlirfuse.dialect.fusion`), so `ctx` is set to allow unregistered dialects.
- `add_passes(pm, pipeline)`: appends a pipeline, in `--pass-pipeline`
  syntax without the `builtin.module(...)` wrapper or with it (`mlirfuse-pipeline{...},
  cse, fusion-outline`) or as a list of pass names, to a PassManager
  anchored on `builtin.module`. Our elements become Python passes, the
  others are handed to MLIR. `add_pass(pm, name, **options)`: one pass or
  pipeline, options as keywords (`max_args=64` or `**{"max-args": 64}`).
  Options are the ones `passes()` lists; a wrong one raises
  `mlirfuse.PipelineError` naming the valid ones (`.source`, `.column`
  locate it). The passes run on any module of `torch`-dialect functions:
  value (`!torch.vtensor`) or not (`!torch.tensor`; only value-semantic ops
  are fused), several functions, public and private, declarations too. Each pass is checked
  by the fusion verifier; a failure is an MLIR error located at the module
  and the PassManager's run raises `ir.MLIRError`.
- A fusion policy (`mlirfuse.passes.policy`): run the PassManager inside
  `with mlirfuse.passes.policy.using(fn):` and every legal merge is put to
  `fn`, which may veto it.
- `passes()`, `pass_options(name)`: every pass and pipeline name with its
  documentation, and each option's name, type, default and meaning.
- `lower_kernel(kernel_op)`: one `fusion.kernel` to a `TritonKernel`
  (`.name`, `.source`, ...), on its own, no runtime; `triton_sources(module)`
  does every kernel of a module. A kernel Triton cannot express raises
  `LoweringError` naming it.
- `analyses(module)`: what fusion knows, for the embedding compiler to ask
  about the ops and values of function bodies: `.dependence`
  (`position(op)`: a topological position; `reaches(a, b)`: does op b
  depend on op a through def-use chains), `.alias` (`may_alias(v, w)`,
  `is_mutated(v)`, `writers(v)`: the `mlirfuse.ir.op_id`s of the ops that
  may write v's storage) and `.shapes` (`shape(v)`, `dtype(v)`: a torch
  dtype name; `same_space(v, w)`: provably the same shape;
  `broadcast_compatible(v, w)`; `size_only_uses(v)`: read only for its
  sizes), each computed once for the module as it is now. `explanations(module)`: after a pipeline run
  with `explain=true`, each group or launch with its neighbours left
  unfused and why.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.alias import AliasAnalysis
from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.analysis.shapes import ShapeAnalysis
from mlirfuse.dialect import load_fusion_dialect
from mlirfuse.errors import PipelineError
from mlirfuse.ir import ir, passmanager
from mlirfuse.lowering.triton import LoweringError, TritonKernel, lower_kernel
from mlirfuse.passes import PASSES, PIPELINES, PassOption, get_pass_class, pass_options
from mlirfuse.passes.pipeline import add_passes as _add_passes
from mlirfuse.passes.pipeline_text import our_pipeline

__all__ = [
    "load_dialect", "add_passes", "add_pass", "passes", "pass_options", "PassOption", "lower_kernel",
    "triton_sources", "TritonKernel", "LoweringError", "analyses", "Analyses", "explanations", "PipelineError",
]


def load_dialect(context: ir.Context) -> None:
    """Make `context` (the caller's, torch-mlir's dialects already loaded or not) accept fusion ops; idempotent."""
    load_fusion_dialect(context)


def add_passes(
    pm: passmanager.PassManager,
    pipeline: str | list[str],
    *,
    context: ir.Context | None = None,
    verify_analyses: bool | None = None,
) -> None:
    """Append `pipeline` (pipeline text or pass names, ours and upstream) to the caller's `pm`.

    `context` defaults to the current one (`with ctx:`). `verify_analyses`
    (default: MLIRFUSE_VERIFY_ANALYSES) recomputes our maintained analyses
    after each of our passes and fails on a difference.
    """
    context = context or ir.Context.current
    load_fusion_dialect(context)
    _add_passes(pm, pipeline, context, verify_analyses=verify_analyses)


def add_pass(pm: passmanager.PassManager, name: str, *, context: ir.Context | None = None, **options) -> None:
    """Append our pass or pipeline `name` with `options` (`max_args=64`; Python values) to `pm`."""
    if name not in PASSES and name not in PIPELINES:
        raise PipelineError(f"unknown mlirfuse pass '{name}' (passes: {', '.join(list(PASSES) + list(PIPELINES))})")
    context = context or ir.Context.current
    add_passes(pm, our_pipeline(name, {k.replace("_", "-"): v for k, v in options.items()}), context=context)


def passes() -> dict[str, str]:
    """Every pass and pipeline name -> its documentation."""
    found = {name: (get_pass_class(name).__doc__ or "").strip() for name in PASSES}
    found.update(PIPELINES)
    return found


def triton_sources(module: ir.Module) -> dict[str, str]:
    """Each `fusion.kernel` of `module` (after fusion-outline) -> its Triton source."""
    return {
        ir.StringAttr(op.attributes["sym_name"]).value: lower_kernel(op).source
        for op in module.body.operations
        if op.operation.name == "fusion.kernel"
    }


@dataclasses.dataclass
class Analyses:
    """mlirfuse's analyses of one module, as the fusion passes see it (see the module docstring for the queries)."""

    dependence: DependenceAnalysis
    alias: AliasAnalysis
    shapes: ShapeAnalysis


def analyses(module: ir.Module) -> Analyses:
    """Compute the dependence, alias and shape analyses of `module` now (they are not kept current afterwards)."""
    am = AnalysisManager()
    op = module.operation
    with op.context:
        return Analyses(am.get(DependenceAnalysis, op), am.get(AliasAnalysis, op), am.get(ShapeAnalysis, op))


def explanations(module: ir.Module) -> list[tuple[ir.Operation, list[str]]]:
    """(group or launch, why each neighbour was not fused) for every op carrying `fusion.explain`."""
    found = []

    def visit(op):
        if "fusion.explain" in op.attributes:
            found.append((op, [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes["fusion.explain"])]))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found
