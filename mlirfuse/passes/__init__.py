"""The pass registry (pass name -> where its class lives, imported lazily) and the pipeline as data.

A name here is a flag of `mlirfuse-opt` and an element of `--pass-pipeline`;
the lit file testing it is `test/lit/Transforms/<name>.mlir`. `STAGES` is
the pipeline: one row per stage, in order, with the pipelines holding it
and its switch; `mlirfuse.passes.pipeline_text` expands a pipeline from it.
A pass's options are its typed fields (`mlirfuse.passes.options`).
"""

from __future__ import annotations

import dataclasses
import importlib

from mlirfuse.passes.options import PassOption, declared, option

PASSES: dict[str, str] = {
    "fusion-functionalize": "mlirfuse.passes.functionalize:Functionalize",
    "fusion-fold-constant-indices": "mlirfuse.passes.fold_constant_indices:FoldConstantIndices",
    "fusion-fuse-attention": "mlirfuse.passes.fuse_attention:FuseAttention",
    "fusion-decompose": "mlirfuse.passes.decompose:Decompose",
    "fusion-keepdim-rows": "mlirfuse.passes.keepdim_rows:KeepdimRows",
    "fusion-split-bias": "mlirfuse.passes.split_bias:SplitBias",
    "fusion-chunk-motion": "mlirfuse.passes.chunk_motion:ChunkMotion",
    "fusion-sum-matmuls": "mlirfuse.passes.sum_matmuls:SumMatmuls",
    "fusion-fuse-vertical": "mlirfuse.passes.fuse_vertical:FuseVertical",
    "fusion-fuse-horizontal": "mlirfuse.passes.fuse_horizontal:FuseHorizontal",
    "fusion-fuse-concat": "mlirfuse.passes.fuse_concat:FuseConcat",
    "fusion-sink-exit-reshapes": "mlirfuse.passes.sink_exit_reshapes:SinkExitReshapes",
    "fusion-fuse-matmul": "mlirfuse.passes.fuse_matmul:FuseMatmul",
    "fusion-explain-unfused": "mlirfuse.passes.explain_unfused:ExplainUnfused",
    "fusion-mark-persistent": "mlirfuse.passes.mark_persistent:MarkPersistent",
    "fusion-extern-operands": "mlirfuse.passes.extern_operands:ExternOperands",
    "fusion-canonicalize": "mlirfuse.passes.canonicalize:Canonicalize",
    "fusion-outline": "mlirfuse.passes.outline:Outline",
    "fusion-schedule-collectives": "mlirfuse.passes.schedule_collectives:ScheduleCollectives",
    # Not a stage: annotates the IR with the cost model's numbers (run it last).
    "fusion-cost": "mlirfuse.passes.cost:Cost",
    # Test passes: expose analyses to lit (test/lit/Analysis/).
    "test-dependence": "mlirfuse.passes.testing.dependence:TestDependence",
    "test-alias": "mlirfuse.passes.testing.alias:TestAlias",
    "test-shapes": "mlirfuse.passes.testing.shapes:TestShapes",
}


MLIRFUSE_PIPELINE = "mlirfuse-pipeline"
FUSE_ELEMENTWISE = "fusion-fuse-elementwise"

# Pipelines usable as one element of --pass-pipeline -> what they are; each
# expands to the rows of STAGES naming it, and its options go to the stages
# that have them.
PIPELINES = {
    MLIRFUSE_PIPELINE: "Everything before Triton emission, as one straight line of named steps.",
    FUSE_ELEMENTWISE: (
        "The fusion stages of mlirfuse-pipeline; an option goes to every stage that has it "
        "(explain=true adds fusion-explain-unfused, horizontal=false drops fusion-fuse-horizontal)."
    ),
}


@dataclasses.dataclass(frozen=True)
class Switches:
    """The pipeline options that switch a stage on or off instead of configuring it (the stage's `switch`)."""

    explain: bool = option(False, "run fusion-explain-unfused after the fusion stages")
    horizontal: bool = option(True, "run fusion-fuse-horizontal")


@dataclasses.dataclass(frozen=True)
class Stage:
    """One row of the pipeline: a pass, what it does there, the pipelines holding it and its switches."""

    name: str
    does: str
    pipelines: tuple[str, ...] = (MLIRFUSE_PIPELINE,)
    # A fusion stage: fusion-explain-unfused describes what they left, so it runs after the last of them.
    makes_groups: bool = False
    # The `Switches` option turning it on or off (its default there).
    switch: str | None = None
    # With matmuls left ATen calls (`compile(matmul="aten")`): its options then; None: it does not run.
    aten_matmul: dict | None = dataclasses.field(default_factory=dict)


_BOTH = (MLIRFUSE_PIPELINE, FUSE_ELEMENTWISE)

# The pipeline as data: every stage once, in order.
STAGES = (
    Stage("fusion-functionalize", "in-place ops on fresh copies become value-semantic ops"),
    # Before attention is matched: q/k/v indexed by lifted constants become views it reads through.
    Stage("fusion-fold-constant-indices", "an index by a one-element constant as a slice; a clone of a constant as itself"),
    Stage("fusion-fuse-attention", "attention (sdpa, or matmul -> softmax -> matmul) as one flash-attention group"),
    Stage("fusion-decompose", "softmax, layer_norm, ... into reductions and elementwise ops"),
    # After decompose (its reductions keep dims): per-row values join the reduction's kernel in that shape.
    Stage("fusion-keepdim-rows", "per-row values of a reduction (running stats, a backward's terms) in its keepdim shape"),
    Stage("fusion-split-bias", "linear/addmm bias as an add.Tensor, to fuse with what follows"),
    # Without Triton GEMMs a sliced GEMM would be one ATen call per piece: slices stay on the result.
    Stage("fusion-chunk-motion", "chunk/split as slices, moved above the elementwise ops they cut",
          aten_matmul={"matmul-slices": False}),
    # After chunk motion: an LSTM step's gate slices are on its weights, each gate's sum of GEMMs whole.
    Stage("fusion-sum-matmuls", "a sum of matmuls as one matmul over operands concatenated along K, where it moves fewer bytes"),
    Stage("fusion-fuse-vertical", "group maximal producer->consumer chains of elementwise ops and reductions",
          _BOTH, makes_groups=True),
    Stage("fusion-fuse-horizontal", "merge independent groups reading the same tensor",
          _BOTH, makes_groups=True, switch="horizontal"),
    # Without Triton GEMMs nothing reads a cat piece by piece: it is a concat exit.
    Stage("fusion-fuse-concat", "a cat of group results becomes the exit of one concat group", _BOTH, makes_groups=True,
          aten_matmul={"ksplit": False}),
    Stage("fusion-sink-exit-reshapes", "reshapes of group results are stored by the group", _BOTH, makes_groups=True),
    Stage("fusion-fuse-matmul", "matmuls as Triton GEMM groups with their prologue and epilogue",
          makes_groups=True, aten_matmul=None),
    # In mlirfuse-pipeline too when switched on: explain=true puts it after the last fusion stage of any pipeline.
    Stage("fusion-explain-unfused", "each group's neighbours left outside it, and why", (FUSE_ELEMENTWISE,), switch="explain"),
    Stage("fusion-mark-persistent", "reductions whose rows fit a block keep them in registers", _BOTH),
    Stage("fusion-extern-operands", "views feeding an unfused op (matmul ...) become its strided operands"),
    Stage("fusion-canonicalize", "CSE/DCE inside groups; tidy group operands and results"),
    Stage("fusion-outline", "one fusion.kernel per structural class, groups become launches"),
    Stage("fusion-schedule-collectives", "collectives issued as early and waited as late as their values allow"),
)

# The passes that make groups; fusion-explain-unfused describes what they left.
FUSION_STAGES = tuple(stage.name for stage in STAGES if stage.makes_groups)


def pipeline_stages(name: str) -> list[Stage]:
    """The rows of pipeline `name`, in order (switched-off ones included)."""
    return [stage for stage in STAGES if name in stage.pipelines]


def default_pipeline() -> list[str]:
    """Everything before Triton emission, as one straight line of named steps: mlirfuse-pipeline's passes."""
    return [stage.name for stage in pipeline_stages(MLIRFUSE_PIPELINE) if switched_on(stage, Switches())]


def switched_on(stage: Stage, switches: Switches) -> bool:
    """Does `stage` run under `switches`? (A stage without a switch always does.)"""
    return stage.switch is None or getattr(switches, stage.switch)


def get_pass_class(name: str):
    module, cls = PASSES[name].split(":")
    return getattr(importlib.import_module(module), cls)


def pass_options(name: str) -> list[PassOption]:
    """The options of pass or pipeline `name`; a pipeline has the union of its stages' (first stage's default) and its switches."""
    if name in PASSES:
        return [d.option for d in declared(get_pass_class(name))]
    if name not in PIPELINES:
        return []
    stages = pipeline_stages(name)
    found: dict[str, PassOption] = {}
    for stage in stages:
        for each in pass_options(stage.name):
            found.setdefault(each.name, each)
    switched = {stage.switch for stage in stages} | {"explain"}  # explain adds fusion-explain-unfused where a pipeline lacks it
    found.update((d.option.name, d.option) for d in declared(Switches) if d.option.name in switched)
    return list(found.values())
