"""Fusion policies (mlirfuse.passes.policy): functions that see each legal merge and may veto it.

`frugal_prologues`: a GEMM prologue is recomputed for every column block of
the result. A cast or a scale pays for itself (the GEMM reads its input
instead of a stored intermediate); a transcendental (gelu, exp, tanh ...)
recomputed N / BLOCK_N times may cost more than the bytes it saves on a
compute-bound GEMM. This policy keeps such producers out of GEMM prologues
(they become kernels of their own) and accepts everything else.

    import mlirfuse
    from examples.fusion_policy import frugal_prologues
    cm = mlirfuse.compile(model, x, policy=frugal_prologues)

    mlirfuse-opt in.mlir --fusion-policy=examples/fusion_policy.py:frugal_prologues --mlirfuse-pipeline

`no_reduction_merges` is a blunt one: a reduction group never takes in
another group (each stays its own kernel).
"""

from __future__ import annotations

from mlirfuse.passes.policy import Candidate

# What a prologue may recompute per tile: index-free arithmetic and casts.
CHEAP = frozenset({
    "torch.aten.mul.Tensor", "torch.aten.mul.Scalar", "torch.aten.add.Tensor", "torch.aten.add.Scalar",
    "torch.aten.sub.Tensor", "torch.aten.sub.Scalar", "torch.aten.div.Tensor", "torch.aten.div.Scalar",
    "torch.aten.neg", "torch.aten.to.dtype", "torch.aten._to_copy", "torch.prims.convert_element_type",
    "torch.aten.cat",  # a K-split operand: read piece by piece, nothing computed
})


def frugal_prologues(c: Candidate) -> str | None:
    if not c.recomputed_per_tile:
        return None
    costly = sorted({op.removeprefix("torch.aten.") for op in c.producer_ops if op not in CHEAP})
    if costly:
        return (f"policy frugal_prologues: {', '.join(costly)} would be recomputed per tile "
                f"(the merge saves {c.bytes_saved} bytes)")
    return None


def no_reduction_merges(c: Candidate) -> str | None:
    if {"reduction", "persistent-reduction"} & {c.producer_kind, c.consumer_kind}:
        return "policy no_reduction_merges: reductions stay kernels of their own"
    return None
