"""When a pointwise group may join a GEMM group: the prologue and epilogue checks `fusion-fuse-matmul` and `fusion-explain-unfused` share.

Each `why_not_*` returns None when the merge is legal, otherwise the reason
in words, as in `legality`: a prologue is recomputed on every operand tile
(pointwise, small, read by this GEMM alone), an epilogue runs on the
result tile (pointwise over the GEMM's result shape).
"""

from __future__ import annotations

from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.dialect import GroupKind, group_kind
from mlirfuse.ir import defining_op, tensor_type
from mlirfuse.ops.indexing import INDEXING_OPS
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, gemm
from mlirfuse.ops.views import PADS, VIEW_OPS
from mlirfuse.passes.base import body_ops
from mlirfuse.passes.legality import computing_ops, why_not_merge
from mlirfuse.passes.legality_chain import why_not_chain
from mlirfuse.passes.options import Limits


def group_gemm(group) -> Gemm | None:
    """The GEMM a matmul group computes."""
    for op in group.regions[0].blocks[0].operations:
        if op.operation.name in MATMUL_OPS:
            found = gemm(op)
            return found if isinstance(found, Gemm) else None
    return None


def _tile_only(group) -> str | None:
    """Why `group`'s body cannot be emitted on a GEMM's tiles (indexing, creation, pads, cats), or None."""
    ops, _ = body_ops(group)
    name = next((op.operation.name for op in ops if op.operation.name in INDEXING_OPS | PADS | {"torch.aten.cat"}), None)
    return f"holds '{name}' (indexing, creation, pads and cats are not emitted on GEMM tiles)" if name else None


def _why_not_on_tiles(group, role: str, pointwise_only: str) -> str | None:
    """Why `group` (the GEMM's `role`) cannot be computed on a GEMM's tiles: not pointwise, or a tile-only op."""
    kind = group_kind(group)
    if kind != GroupKind.POINTWISE:
        return f"{role} is a {kind} group ({pointwise_only})"
    why = _tile_only(group)
    return f"{role} {why}" if why else None


def why_not_epilogue(mm, consumer, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """None if group `consumer` may become part of matmul group `mm`'s epilogue; otherwise why not."""
    why = _why_not_on_tiles(consumer, "consumer", "a GEMM epilogue is pointwise over the GEMM's result")
    if why:
        return why
    space = group_gemm(mm).out
    if any(tensor_type(r.type).shape != space for r in consumer.results):
        return "different iteration space (the epilogue runs over the GEMM's result tile)"
    return why_not_merge(mm, consumer, dep, limits)


def why_not_prologue(producer, mm, dep: DependenceAnalysis, limits: Limits = Limits(), max_ops: int = 4) -> str | None:
    """None if group `producer` may be recomputed on `mm`'s operand tiles; otherwise why not."""
    why = _why_not_on_tiles(producer, "producer", "a prologue is recomputed per tile: pointwise only")
    if why:
        return why
    if any(u.owner.operation != mm.operation for r in producer.results for u in r.uses):
        return "producer's result is also read elsewhere"
    _, terminator = body_ops(producer)
    if any(defining_op(v) is not None and defining_op(v).name in VIEW_OPS for v in terminator.operands):
        return "producer stores a reshape of a computed value (a copy, not recomputed per tile)"
    if computing_ops(producer) > max_ops:
        return f"prologue of {computing_ops(producer)} ops > {max_ops} (recomputed on every tile)"
    return why_not_merge(producer, mm, dep, limits)


def why_not_template(producer, consumer, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """Why two neighbouring groups, at least one a matmul group, are separate (for fusion-explain-unfused)."""
    if GroupKind.MATMUL_CHAIN in (group_kind(producer), group_kind(consumer)):
        return "a matmul-chain kernel takes no further prologue, epilogue or GEMM (yet)"
    if group_kind(producer) == GroupKind.MATMUL and group_kind(consumer) == GroupKind.MATMUL:
        return why_not_chain(producer, consumer, dep, limits)
    if group_kind(producer) == GroupKind.MATMUL:
        return why_not_epilogue(producer, consumer, dep, limits)
    return why_not_prologue(producer, consumer, dep, limits)
