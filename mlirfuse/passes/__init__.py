"""The pass registry: pass name -> where its class lives (imported lazily).

A name here is a flag of `mlirfuse-opt` and an element of `--pass-pipeline`;
the lit file testing it is `test/lit/Transforms/<name>.mlir`.
"""

from __future__ import annotations

import dataclasses
import importlib

from mlirfuse.passes.options import PassOption, declared, option

PASSES: dict[str, str] = {
    "fusion-functionalize": "mlirfuse.passes.functionalize:Functionalize",
    "fusion-fuse-attention": "mlirfuse.passes.fuse_attention:FuseAttention",
    "fusion-decompose": "mlirfuse.passes.decompose:Decompose",
    "fusion-split-bias": "mlirfuse.passes.split_bias:SplitBias",
    "fusion-chunk-motion": "mlirfuse.passes.chunk_motion:ChunkMotion",
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
    # Test passes: expose analyses to lit (test/lit/Analysis/).
    "test-dependence": "mlirfuse.passes.test_dependence:TestDependence",
    "test-alias": "mlirfuse.passes.test_alias:TestAlias",
    "test-shapes": "mlirfuse.passes.test_shapes:TestShapes",
}


def default_pipeline() -> list[str]:
    """Everything before Triton emission, as one straight line of named steps."""
    return [
        "fusion-functionalize",  # in-place ops on fresh copies become value-semantic ops
        "fusion-fuse-attention",  # attention (sdpa, or matmul -> softmax -> matmul) as one flash-attention group
        "fusion-decompose",  # softmax, layer_norm, ... into reductions and elementwise ops
        "fusion-split-bias",  # linear/addmm bias as an add.Tensor, to fuse with what follows
        "fusion-chunk-motion",  # chunk/split as slices, moved above the elementwise ops they cut
        "fusion-fuse-vertical",  # group maximal producer->consumer chains of elementwise ops and reductions
        "fusion-fuse-horizontal",  # merge independent groups reading the same tensor
        "fusion-fuse-concat",  # a cat of group results becomes the exit of one concat group
        "fusion-sink-exit-reshapes",  # reshapes of group results are stored by the group
        "fusion-fuse-matmul",  # matmuls as Triton GEMM groups with their prologue and epilogue
        "fusion-mark-persistent",  # reductions whose rows fit a block keep them in registers
        "fusion-extern-operands",  # views feeding an unfused op (matmul ...) become its strided operands
        "fusion-canonicalize",  # CSE/DCE inside groups; tidy group operands and results
        "fusion-outline",  # one fusion.kernel per structural class, groups become launches
    ]


def fuse_elementwise() -> list[str]:
    """The fusion stages of mlirfuse-pipeline; an option goes to every stage that has it (explain=true adds fusion-explain-unfused, horizontal=false drops fusion-fuse-horizontal)."""
    return [
        "fusion-fuse-vertical",
        "fusion-fuse-horizontal",
        "fusion-fuse-concat",
        "fusion-sink-exit-reshapes",
        "fusion-explain-unfused",
        "fusion-mark-persistent",
    ]


# Pipelines usable as one element of --pass-pipeline; each expands to its passes.
PIPELINES = {"mlirfuse-pipeline": default_pipeline, "fusion-fuse-elementwise": fuse_elementwise}

# Pipelines whose options go to their stages; the others take none.
OPTION_PIPELINES = frozenset({"mlirfuse-pipeline", "fusion-fuse-elementwise"})


@dataclasses.dataclass(frozen=True)
class Switches:
    """The pipeline options that switch a stage on or off instead of configuring it."""

    explain: bool = option(False, "run fusion-explain-unfused after the fusion stages")
    horizontal: bool = option(True, "run fusion-fuse-horizontal")


# Each switch's stage: option -> (stage, default).
STAGE_SWITCHES = {"explain": ("fusion-explain-unfused", Switches.explain), "horizontal": ("fusion-fuse-horizontal", Switches.horizontal)}


def get_pass_class(name: str):
    module, cls = PASSES[name].split(":")
    return getattr(importlib.import_module(module), cls)


def pass_options(name: str) -> list[PassOption]:
    """The options of pass or pipeline `name`; a pipeline has the union of its stages' (first stage's default) and its switches."""
    if name in PASSES:
        return [d.option for d in declared(get_pass_class(name))]
    if name not in OPTION_PIPELINES:
        return []
    stages = PIPELINES[name]()
    found: dict[str, PassOption] = {}
    switches = {d.option.name: d.option for d in declared(Switches)}
    for stage in stages:
        for each in pass_options(stage):
            found.setdefault(each.name, each)
    for key, (stage, default) in STAGE_SWITCHES.items():
        if stage in stages or key == "explain":  # explain adds fusion-explain-unfused where the pipeline lacks it
            found[key] = switches[key]
    return list(found.values())
