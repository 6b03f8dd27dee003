"""When two groups may become one: the checks every fusion pass and `fusion-explain-unfused` share.

Each `why_not_*` returns None when the rewrite is legal, otherwise the reason
in words; the fusion passes act on None, `fusion-explain-unfused` attaches the words.

- pointwise + pointwise: exported results must have the consumer's shape;
- with a reduction: every reduction of the merged group reduces the same
  axes of the same shape S; every pointwise op's shape broadcasts into S
  (prologue: full shape; epilogue on reduced values: the keepdim shape);
  a reduction's result without keepdim may only leave the group;
- never when another path runs from the producer to the consumer through an
  op outside both (the merged group would feed and read it: a cycle).
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.alias import AliasAnalysis
from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.analysis.shapes import ShapeAnalysis
from mlirfuse.elementwise import fusible
from mlirfuse.indexing import (
    EMBEDS,
    GATHERS,
    INDEX_LISTS,
    gather,
    indexed_operand,
    reads_shape_only,
    scatter,
    scatter_op,
)
from mlirfuse.ir import (
    constant_value,
    defining_op,
    ir,
    op_id,
    result_index,
    tensor_type,
)
from mlirfuse.passes.base import body_ops
from mlirfuse.passes.rewriter import FusionRewriter, defined_by, exported_results, group_kind, merged_inputs
from mlirfuse.reductions import REDUCTIONS, Reduction, reduction
from mlirfuse.views import PADS, VIEW_OPS, is_view, view_args

# Group kinds the fusion passes grow; the others are finished.
FUSIBLE_KINDS = ("pointwise", "reduction")

CAT = "torch.aten.cat"


@dataclasses.dataclass(frozen=True)
class Limits:
    max_args: int = 128  # kernel tensor arguments: inputs + results
    max_group_size: int = 0  # torch ops in a group; 0: no limit


# What every fusion pass keeps current through its rewriter (and so preserves).
FUSION_ANALYSES = (DependenceAnalysis, AliasAnalysis, ShapeAnalysis)


def fusion_rewriter(module: ir.Operation, am: AnalysisManager | None) -> tuple[FusionRewriter, DependenceAnalysis]:
    """A fusion pass's rewriter and the dependence analysis it asks.

    The rewriter keeps every live analysis current. The fusion passes consult
    only the dependence analysis, so only that one is computed here; the
    alias and shape analyses are maintained when a pass before computed them
    (and preserved), and in checking mode (`--verify-analyses`) all of
    FUSION_ANALYSES are made live so that their maintenance is proven.
    """
    am = am or AnalysisManager()
    dep = am.get(DependenceAnalysis, module)
    if am.verify:
        for cls in FUSION_ANALYSES:
            am.get(cls, module)
    return FusionRewriter(am), dep


def is_fusible_group(op) -> bool:
    return op is not None and op.name == "fusion.group" and group_kind(op) in FUSIBLE_KINDS


def group_reduction(group) -> Reduction | None:
    """The (shared) reduction a reduction group computes; None for pointwise groups."""
    for op in group.regions[0].blocks[0].operations:
        if op.operation.name in REDUCTIONS:
            return reduction(op)
    return None


def absorbable_view(operand, consumer):
    """A view op outside any group (constant arguments) whose result `consumer` reads.

    The group reads through it by index arithmetic instead of a copy.
    """
    op = defining_op(operand)
    if not is_view(op) or op.block != consumer.operation.block or view_args(op) is None:
        return None
    return op.opview


def _broadcasts_into(shape, target) -> bool:
    if len(shape) > len(target):
        return False
    return all(d == t or d == 1 for d, t in zip(reversed(shape), reversed(target)))


def _merged_sizes(producer, consumer) -> tuple[int, int]:
    """(tensor arguments, torch ops) of the group merging the two would make."""
    args = len(merged_inputs(producer, consumer)) + len(consumer.results) + len(exported_results(producer, consumer))
    ops = sum(
        1
        for g in (producer, consumer)
        for op in g.regions[0].blocks[0].operations
        if op.operation.name.startswith(("torch.aten.", "torch.prims.")) and op.operation.name not in VIEW_OPS
    )
    return args, ops


def _viewed_inputs(consumer, producer) -> str | None:
    """"view" or "pad" if `consumer` views or pads a value `producer` computes (inside a group they read group inputs only)."""
    block = consumer.regions[0].blocks[0]
    for arg, v in zip(block.arguments, consumer.operands):
        if defined_by(v, producer):
            for u in arg.uses:
                if u.owner.operation.name in VIEW_OPS:
                    return "view"
                if u.owner.operation.name in PADS:
                    return "pad"
                if u.owner.operation.name == "torch.prim.ListConstruct":  # a piece of a cat of inputs
                    return "cat"
    return None


def _has_pad(group) -> bool:
    """Does `group` read a pad or a cat of its inputs? (Read by index arithmetic in pointwise kernels only.)"""
    return any(op.operation.name in PADS or op.operation.name == CAT for op in group.regions[0].blocks[0].operations)


def _why_not_static_cat(cat) -> str | None:
    """Why `cat` is not a cat by a constant dim, of a list only it reads, into a static shape; None if it is."""
    items = cat_list(cat)
    result = tensor_type(cat.results[0].type)
    if items is None or not isinstance(constant_value(cat.operands[1]), int) or result is None or not result.is_static:
        return "cat with a non-constant dim or list, or a dynamic shape"
    if any(u.owner.operation != cat.operation for u in items.results[0].uses):
        return "cat's list is read by another op"
    return None


def why_not_cat_of_inputs(cat) -> str | None:
    """None if `cat` (outside groups) can join a pointwise group as a read of its pieces; otherwise why not.

    Each piece must be a group input: cats of group results are concat exits (`why_not_concat`).
    """
    reason = _why_not_static_cat(cat)
    if reason:
        return reason
    items = cat_list(cat)
    for v in items.operands:
        t, owner = tensor_type(v.type), defining_op(v)
        if t is None or not t.is_static:
            return "a piece is not a statically shaped tensor"
        if owner is not None and (owner.name == "fusion.group" or fusible(owner.opview) or owner.name in REDUCTIONS):
            return "a piece is computed by a group (a concat exit)"
    return None


def _pad_broadcast(groups, space) -> bool:
    """Is a pad in `groups` broadcast along a dim it pads? (Its coordinates are the space's there.)"""
    for group in groups:
        for op in group.regions[0].blocks[0].operations:
            if op.operation.name in PADS:
                source = tensor_type(op.operands[0].type).shape
            elif op.operation.name == CAT:
                source = tensor_type(cat_list(op).operands[0].type).shape
            else:
                continue
            shape = tensor_type(op.results[0].type).shape
            offset = len(space) - len(shape)
            if any(n != m and n != space[d + offset] for d, (n, m) in enumerate(zip(shape, source))):  # padded, broadcast
                return True
    return False


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
        for use in uses:
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
                    return "indexes a computed value (the table must be a kernel input)"
                if plan.trailing:
                    return "computed index does not broadcast into the gather's result"
        if uses and all(reads_shape_only(u.owner.operation.name, u.operand_number) for u in uses):
            return "read only for its shape"
    return None


def why_not_scatter(producer, consumer) -> str | None:
    """Why pointwise `producer` cannot become the prologue of scatter group `consumer` (None: it can).

    The scatter kernel runs over the index's space and stores each lane's
    source value at the address it computes; the tensor scattered into is
    copied into the output before the launch, so it must be a kernel input.
    No op of the group may read the scatter's result (another program may
    not have written it yet): the scatter ends its group.
    """
    if group_kind(producer) != "pointwise":
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


def why_not_merge(producer, consumer, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """None if `producer` may merge into `consumer`; otherwise the reason."""
    if "attention" in (group_kind(producer), group_kind(consumer)):
        return "the attention kernel fuses no pointwise prologue or epilogue (yet)"
    if dep.dependents_between(producer, consumer)[1]:
        return "cycle"
    viewed = _viewed_inputs(consumer, producer)
    if viewed:
        return f"{viewed} of a computed value"
    why = why_not_indexed(producer, consumer)
    if why:
        return why
    if group_kind(producer) == "scatter":
        return "a scatter's result is complete only after its launch"
    if group_kind(consumer) == "scatter":
        return why_not_scatter(producer, consumer)
    args, ops = _merged_sizes(producer, consumer)
    if args > limits.max_args:
        return f"argument limit ({args} > {limits.max_args})"
    if limits.max_group_size and ops > limits.max_group_size:
        return f"group size limit ({ops} > {limits.max_group_size})"
    p_red, c_red = group_reduction(producer), group_reduction(consumer)
    exported = exported_results(producer, consumer)
    if p_red is None and c_red is None:
        iteration = tensor_type(consumer.results[0].type).shape
        if any(tensor_type(r.type).shape != iteration for r in exported):
            return "different iteration space"
        if _pad_broadcast((producer, consumer), iteration):
            return "pad or cat broadcast along its padded dim"
        return None
    if _has_pad(producer) or _has_pad(consumer):
        return "pad or cat in a reduction group (read by pointwise kernels only)"
    if p_red is not None and c_red is not None and (p_red.shape, p_red.dims) != (c_red.shape, c_red.dims):
        return "reductions over different axes"
    red = p_red or c_red
    pointwise = consumer if c_red is None else producer if p_red is None else None
    if pointwise is not None and not _broadcasts_into(tensor_type(pointwise.results[0].type).shape, red.shape):
        return "different iteration space"
    # A kernel writes full-space results over S and row-space results one per
    # row: anything else (a broadcast-smaller value) has no place to be stored.
    for r in list(exported) + list(consumer.results):
        shape = tensor_type(r.type).shape
        if shape not in (red.shape, red.keepdim_shape) and not _is_reduction_result(r):
            return "different iteration space"
    for r in producer.results:
        if _is_reduction_result(r) and any(u.owner.operation == consumer.operation for u in r.uses):
            owner = _yielded_op(producer, r)
            if not _keepdim(owner):
                return "reduction result used without keepdim"
    return None


def _yielded_op(group, result):
    """The op inside `group` whose value the group yields as `result`."""
    _, terminator = body_ops(group)
    return defining_op(terminator.operands[result_index(result)])


def _is_reduction_result(result) -> bool:
    group = defining_op(result).opview
    owner = _yielded_op(group, result)
    return owner is not None and owner.name in REDUCTIONS


def _keepdim(op) -> bool:
    red = reduction(op.opview)
    return isinstance(red, Reduction) and (red.keepdim or len(red.dims) == 0)


def cat_list(cat):
    """The ListConstruct op holding the cat's pieces, or None."""
    items = defining_op(cat.operands[0])
    return items if items is not None and items.name == "torch.prim.ListConstruct" else None


def piece_groups(cat) -> list:
    """The distinct groups computing the cat's pieces, in list order."""
    groups = {}
    for v in cat_list(cat).operands:
        owner = defining_op(v)
        if owner is not None and owner.name == "fusion.group":
            groups.setdefault(op_id(owner), owner.opview)
    return list(groups.values())


def why_not_concat(cat, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """None if `cat` and the groups computing its pieces can become one concat group; otherwise why not."""
    reason = _why_not_static_cat(cat)
    if reason:
        return reason
    items = cat_list(cat)
    groups = piece_groups(cat)
    if not groups:
        return "no piece is computed by a group"
    if any(group_kind(g) != "pointwise" for g in groups):
        return "cat of a reduction result"
    if any(op.operation.name == CAT for g in groups for op in g.regions[0].blocks[0].operations):
        return "a piece's group reads a cat (a concat kernel holds one cat)"
    members = {op_id(g) for g in groups}
    for i, a in enumerate(groups):
        for b in groups[i + 1 :]:
            if dep.reaches(a, b) or dep.reaches(b, a):
                return "cycle"
    for v in items.operands:  # a piece no group computes must not be computed from one
        owner = defining_op(v)
        if owner is not None and op_id(owner) not in members and any(dep.reaches(g, owner) for g in groups):
            return "cycle"
    inputs = {v for g in groups for v in g.operands} | {v for v in items.operands if not _defined_by_any(v, members)}
    outputs = 1 + sum(1 for g in groups for r in g.results if any(u.owner.operation != items.operation for u in r.uses))
    if len(inputs) + outputs > limits.max_args:
        return f"argument limit ({len(inputs) + outputs} > {limits.max_args})"
    return None


def _defined_by_any(value: ir.Value, ids: set) -> bool:
    owner = defining_op(value)
    return owner is not None and op_id(owner) in ids
