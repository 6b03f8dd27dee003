"""Fusion legality where a kernel reads values at computed places: gathers, scatters and pools' windows.

A gather reads its table anywhere, so the table must be a kernel input; a
scatter stores each lane's value at a computed address; a pool reads whole
windows, recomputing an elementwise prologue at each window position. These
checks say when a producer group may still merge into such a consumer
(`why_not_merge` in `mlirfuse.passes.legality` asks each); each returns None
when legal, otherwise the reason.
"""

from __future__ import annotations

from mlirfuse.dialect import GroupKind, group_kind
from mlirfuse.ir import op_id, tensor_type
from mlirfuse.ops.elementwise import fusible
from mlirfuse.ops.indexing import (
    CREATIONS,
    EMBEDS,
    GATHERS,
    INDEX_LISTS,
    gather,
    indexed_operand,
    reads_shape_only,
    scatter,
    scatter_op,
)
from mlirfuse.ops.pooling import WINDOWED, window_ops
from mlirfuse.ops.views import VIEW_OPS, view_chain
from mlirfuse.passes.legality_cat import recomputable
from mlirfuse.passes.rewriter import defined_by


def why_not_window(producer, consumer) -> str | None:
    """Why `producer` cannot become the window prologue of `consumer`'s pools (None: it can, or no pool reads it).

    A prologue is recomputed at every window position: it must be elementwise
    ops of its inputs (and views of them), read in `consumer` by pools and by
    the pools' other prologue ops only.
    """
    block = consumer.regions[0].blocks[0]
    window = None
    for arg, v in zip(block.arguments, consumer.operands):
        if not defined_by(v, producer) or not any(u.owner.operation.name in WINDOWED and u.operand_number == 0 for u in arg.uses):
            continue
        window = window_ops(block) if window is None else window
        if not all((u.owner.operation.name in WINDOWED and u.operand_number == 0) or op_id(u.owner.operation) in window for u in arg.uses):
            return "pools a value the group also reads outside the windows"
        for op in producer.regions[0].blocks[0].operations:
            if not (op.operation.name in VIEW_OPS or fusible(op) or op.operation.name.startswith("torch.constant.")
                    or op.operation.name in ("torch.prim.ListConstruct", "fusion.yield")):
                return f"pools a computed value that is not elementwise ({op.operation.name}; a window prologue is recomputed per position)"
    return None


# The ops `why_not_indexed` looks for in the consumer's body: without one it answers None (a legality check skips it).
INDEXED_READERS = frozenset(CREATIONS) | frozenset(EMBEDS) | frozenset(GATHERS) | {"torch.prim.ListConstruct"}


def why_not_indexed(producer, consumer) -> str | None:
    """Why `consumer`'s gathers or *_like ops cannot read what `producer` computes (None: they can).

    A gather's table is read at any place by any lane, so it must be a kernel
    input; an index is read where it broadcasts into the gather's result, so a
    computed one must already have the result's layout (gather, index_select
    on the last dim); a value read only for its shape is not worth computing.
    """
    block = consumer.regions[0].blocks[0]
    for arg, v in zip(block.arguments, consumer.operands):
        if not defined_by(v, producer):
            continue
        uses = list(arg.uses)
        for use in _through_views(uses):
            owner, number = use.owner, use.operand_number
            if owner.operation.name == "torch.prim.ListConstruct" and indexed_operand(owner, number):
                owner = next(u.owner for u in owner.results[0].uses if u.owner.operation.name in INDEX_LISTS)
                number = None
            if owner.operation.name in EMBEDS and number == 1:
                return "indexes a computed value (the table must be a kernel input)"
            if owner.operation.name in GATHERS:
                plan = gather(owner)
                if isinstance(plan, str):
                    continue
                if number == GATHERS[owner.operation.name][0]:
                    why = why_not_computed_table(producer, consumer)
                    if why:
                        return why
                    continue
                if plan.trailing and why_not_placed_index(producer, consumer):
                    return "computed index does not broadcast into the gather's result"
        if uses and all(reads_shape_only(u.owner.operation.name, u.operand_number) for u in uses):
            return "read only for its shape"
    return None


def why_not_computed_table(producer, consumer) -> str | None:
    """Why a gather in `consumer` cannot read its table where `producer` computes it (None: it can).

    A pointwise kernel evaluates a table of elementwise ops (a mask cast to
    bool) at the gathered coordinates: one load of each of its inputs per
    gathered element, as a load of the stored table would be, and a few
    ops recomputed (`recomputable`).
    """
    if group_kind(consumer) != GroupKind.POINTWISE or group_kind(producer) != GroupKind.POINTWISE:
        return "indexes a computed value (the table must be a kernel input)"
    if recomputable(producer, "a gather's table") is not None:
        return "indexes a computed value (the table must be a kernel input)"
    # The table's inputs are addressed through their strides in the kernel's space, right-aligned.
    rank = len(tensor_type(consumer.results[0].type).shape)
    values = [*producer.operands, *(r for op in producer.regions[0].blocks[0].operations for r in op.results)]
    if any((t := tensor_type(v.type)) is not None and len(t.shape) > rank for v in values):
        return "indexes a computed value of a higher rank than the kernel's space (the table must be a kernel input)"
    return None


def why_not_placed_index(producer, consumer) -> str | None:
    """Why a computed index that does not broadcast into its gather's result cannot be recomputed where it is read (None: it can).

    Position ids from an arange, embedded: a pointwise kernel evaluates the
    index at the result's index dims, as it evaluates a view of it; the
    producer reads no input, so nothing is loaded elsewhere.
    """
    if group_kind(consumer) != GroupKind.POINTWISE or len(producer.operands):
        return "computed index does not broadcast into the gather's result"
    return recomputable(producer, "a gather's index")


def has_computed_table(group) -> bool:
    """Does a gather of `group` read a table, or an index that does not broadcast into its result, that the group computes?

    Pointwise kernels evaluate those where the gather reads them; other kernels load tables and indices.
    """
    block = group.regions[0].blocks[0]
    for op in block.operations:
        if op.operation.name not in GATHERS or isinstance(plan := gather(op), str):
            continue
        if view_chain(plan.table, block) is None or (plan.trailing and any(view_chain(v, block) is None for v in plan.indices)):
            return True
    return False


def _through_views(uses) -> list:
    """`uses`, and the uses of views reading them (a computed value viewed in the group is read where its views are)."""
    found = []
    for use in uses:
        found.append(use)
        if use.owner.operation.name in VIEW_OPS:
            found += _through_views(list(use.owner.results[0].uses))
    return found


def why_not_scatter(producer, consumer) -> str | None:
    """Why pointwise `producer` cannot become the prologue of scatter group `consumer` (None: it can).

    The scatter kernel runs over the index's space and stores each lane's
    source value at the address it computes; the tensor scattered into is
    copied into the output before the launch, so it must be a kernel input.
    No op of the group may read the scatter's result (another program may
    not have written it yet): the scatter ends its group.
    """
    if group_kind(producer) != GroupKind.POINTWISE:
        return "a scatter's prologue is pointwise"
    block = consumer.regions[0].blocks[0]
    op = scatter_op(block)
    plan = scatter(op) if op is not None else "no scatter"
    if isinstance(plan, str):
        return plan
    for arg, v in zip(block.arguments, consumer.operands):
        if not defined_by(v, producer):
            continue
        for use in arg.uses:
            if use.owner.operation == op.operation and use.operand_number == 0:
                return "scatters into a computed value (it must be a kernel input)"
            if plan.target.trailing and indexed_operand(use.owner, use.operand_number):
                return "computed index does not broadcast into the scatter's iteration space"
    if any(tensor_type(r.type).shape != plan.target.shape for r in producer.results):
        return "different iteration space"
    return None
