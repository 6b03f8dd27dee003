"""The pass registry: pass name -> where its class lives (imported lazily).

A name here is a flag of `mlirfuse-opt` and an element of `--pass-pipeline`;
the lit file testing it is `test/lit/Transforms/<name>.mlir`.
"""

from __future__ import annotations

import importlib

PASSES: dict[str, str] = {
    "fusion-functionalize": "mlirfuse.passes.functionalize:Functionalize",
    "fusion-decompose": "mlirfuse.passes.decompose:Decompose",
    "fusion-split-bias": "mlirfuse.passes.split_bias:SplitBias",
    "fusion-chunk-motion": "mlirfuse.passes.chunk_motion:ChunkMotion",
    "fusion-fuse-elementwise": "mlirfuse.passes.fuse_elementwise:FuseElementwise",
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
        "fusion-decompose",  # softmax, layer_norm, ... into reductions and elementwise ops
        "fusion-split-bias",  # linear/addmm bias as an add.Tensor, to fuse with what follows
        "fusion-chunk-motion",  # chunk/split as slices, moved above the elementwise ops they cut
        "fusion-fuse-elementwise",  # group maximal chains of elementwise ops
        "fusion-extern-operands",  # views feeding an unfused op (matmul ...) become its strided operands
        "fusion-canonicalize",  # CSE/DCE inside groups; tidy group operands and results
        "fusion-outline",  # one fusion.kernel per structural class, groups become launches
    ]


# Pipelines usable as one element of --pass-pipeline; each expands to its passes.
PIPELINES = {"mlirfuse-pipeline": default_pipeline}


def get_pass_class(name: str):
    module, cls = PASSES[name].split(":")
    return getattr(importlib.import_module(module), cls)
