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
from mlirfuse.elementwise import RULES, fusible
from mlirfuse.indexing import (
    EMBEDS,
    GATHERS,
    INDEX_LISTS,
    INDEXING_OPS,
    gather,
    indexed_operand,
    reads_shape_only,
    scatter,
    scatter_op,
)
from mlirfuse.ir import (
    block_ops,
    constant_value,
    defining_op,
    ir,
    is_constant_like,
    op_id,
    result_index,
    tensor_type,
    torch_name,
)
from mlirfuse.passes.base import body_ops
from mlirfuse.passes.rewriter import FusionRewriter, defined_by, exported_results, group_kind, merged_inputs
from mlirfuse.pooling import WINDOWED, window_ops
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


def computing_ops(group) -> int:
    """The torch ops of `group` that compute (views and constants do not): what max-group-size counts."""
    return _body_facts(group)[0]


def _body_facts(group) -> tuple[int, object]:
    """(`computing_ops`, the first reduction op or None) of `group`, in one pass over its body."""
    count, first_reduction = 0, None
    for op in group.regions[0].blocks[0].operations:
        name = op.operation.name
        if name.startswith(("torch.aten.", "torch.prims.")) and name not in VIEW_OPS:
            count += 1
        if first_reduction is None and name in REDUCTIONS:
            first_reduction = op
    return count, first_reduction


def _viewed_inputs(consumer, producer) -> str | None:
    """How `consumer` reads a value `producer` computes, where a kernel cannot read it at its own coordinates.

    "view" if a view reads it (inside a group views read group inputs only);
    "pad" or "cat" if it feeds a pad or a cat piece, directly or through
    elementwise ops (it is then evaluated at the pad's or piece's coordinates).
    """
    block = consumer.regions[0].blocks[0]
    remapped = _remapped_args(block)
    for arg, v in zip(block.arguments, consumer.operands):
        if defined_by(v, producer):
            if any(u.owner.operation.name in VIEW_OPS for u in arg.uses):
                return "view"
            if arg.arg_number in remapped:
                return remapped[arg.arg_number]
    return None


def _remapped_args(block) -> dict[int, str]:
    """Block argument numbers read by a pad or a cat piece, directly or through the ops computing it: "pad" or "cat"."""
    found: dict[int, str] = {}
    for op in block_ops(block)[0]:
        name = op.operation.name
        if name not in PADS and name != CAT:
            continue
        stack = [op.operands[0]] if name in PADS else list(cat_list(op).operands)
        seen = set()
        while stack:
            v = stack.pop()
            if v in seen or is_constant_like(v):
                continue
            seen.add(v)
            if isinstance(v.owner, ir.Block):
                found.setdefault(ir.BlockArgument(v).arg_number, "pad" if name in PADS else "cat")
            else:
                stack.extend(v.owner.operands)
    return found


def why_not_remapped(producer, consumer) -> str | None:
    """Why `consumer` does not pad or cat (directly or through elementwise ops) values `producer` may compute at the pad's coordinates; None if it does."""
    viewed = _viewed_inputs(consumer, producer)
    if viewed not in ("pad", "cat"):
        return "neither padded nor concatenated"
    return _why_not_remapped(producer, viewed)


def _why_not_remapped(producer, what: str) -> str | None:
    """Why a pad or cat piece cannot read what `producer` computes at its own coordinates (None: it can).

    The kernel evaluates the producer's ops at the shifted, mirrored or
    clamped coordinates of the pad (masked outside a constant pad): only
    elementwise ops, views of inputs, and pads and cats (whose coordinates
    compose) can be evaluated anywhere; gathers and creation ops read the
    kernel's own coordinates, reductions a whole row.
    """
    kind = group_kind(producer)
    if kind != "pointwise":
        return f"{what} of a {kind} result"
    for op in body_ops(producer)[0]:
        name = op.operation.name
        if name.startswith("torch.constant.") or name in VIEW_OPS or name in PADS or name in (CAT, "torch.prim.ListConstruct"):
            continue
        if name in INDEXING_OPS or torch_name(op) not in RULES:
            return f"{what} of a value computed by {name} (only elementwise ops are evaluated at a {what}'s coordinates)"
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

    Each piece is a group input, or is computed and the cat's result feeds
    an elementwise op: the group then reads each piece at the piece's
    coordinates (its producers may merge in: `why_not_merge`). A cat of
    computed values read by nothing fusible is a concat exit (`why_not_concat`).
    """
    reason = _why_not_static_cat(cat)
    if reason:
        return reason
    items = cat_list(cat)
    read_pointwise = any(fusible(u.owner) for u in cat.results[0].uses)
    for v in items.operands:
        t, owner = tensor_type(v.type), defining_op(v)
        if t is None or not t.is_static:
            return "a piece is not a statically shaped tensor"
        computed = owner is not None and (owner.name == "fusion.group" or fusible(owner.opview) or owner.name in REDUCTIONS)
        if computed and not read_pointwise:
            return "a piece is computed by a group (a concat exit)"
    return None


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
    if viewed == "view":
        return "view of a computed value"
    if viewed and _why_not_remapped(producer, viewed):
        return _why_not_remapped(producer, viewed)
    why = why_not_indexed(producer, consumer) or why_not_window(producer, consumer)
    if why:
        return why
    if group_kind(producer) == "scatter":
        return "a scatter's result is complete only after its launch"
    if group_kind(consumer) == "scatter":
        return why_not_scatter(producer, consumer)
    # Each body is looked at once here: its size and its reduction.
    (p_ops, p_first), (c_ops, c_first) = _body_facts(producer), _body_facts(consumer)
    exported = exported_results(producer, consumer)
    args = len(merged_inputs(producer, consumer)) + len(consumer.results) + len(exported)
    if args > limits.max_args:
        return f"argument limit ({args} > {limits.max_args})"
    if limits.max_group_size and p_ops + c_ops > limits.max_group_size:
        return f"group size limit ({p_ops + c_ops} > {limits.max_group_size})"
    p_red = reduction(p_first) if p_first is not None else None
    c_red = reduction(c_first) if c_first is not None else None
    if p_red is None and c_red is None:
        iteration = tensor_type(consumer.results[0].type).shape
        if any(tensor_type(r.type).shape != iteration for r in exported):
            return "different iteration space"
        return None
    if _has_pad(producer) or _has_pad(consumer):
        return "pad or cat in a reduction group (read by pointwise kernels only)"
    if any(op.operation.name in WINDOWED for g in (producer, consumer) for op in g.regions[0].blocks[0].operations):
        return "pool or upsampling in a reduction group (windows are read by pointwise kernels only)"
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
    if any(op.operation.name == CAT for g in groups for op in body_ops(g)[0]):
        return "a piece's group holds a cat of its own (a concat kernel writes one cat)"
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
