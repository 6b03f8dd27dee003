"""Fusion legality where a kernel reads values at coordinates of its own: pads, cats and views of computed values.

A pointwise kernel reads a pad or a cat of its inputs by index arithmetic,
evaluating what feeds it at the shifted, mirrored or clamped coordinates of
the pad or at each piece's coordinates; a cat of computed values read by
nothing fusible is the exit of a concat group instead (`why_not_concat` in
`mlirfuse.passes.legality`). A view of a value computed from coordinates
alone (aranges, fills and elementwise ops of them: position ids, masks) is
evaluated at the view's coordinates the same way (`why_not_viewed`). Each
`why_not_*` returns None when legal, otherwise the reason.
"""

from __future__ import annotations

from mlirfuse.dialect import GroupKind, group_kind
from mlirfuse.ir import (
    block_ops,
    constant_value,
    defining_op,
    ir,
    is_constant_like,
    op_id,
    tensor_type,
    torch_name,
)
from mlirfuse.ops.elementwise import RULES, fusible
from mlirfuse.ops.indexing import CREATIONS, INDEXING_OPS, TRIANGLES
from mlirfuse.ops.reductions import REDUCTIONS
from mlirfuse.ops.views import (
    CAT,
    COPIES,
    PADS,
    RESHAPES,
    VIEW_OPS,
    has_constant_args,
    is_identity_view,
    stored_relayout,
    view_coords,
)
from mlirfuse.passes.base import body_ops, ops_named
from mlirfuse.passes.rewriter import defined_by


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


def viewed_inputs(consumer, producer, names: frozenset | None = None) -> str | None:
    """How `consumer` reads a value `producer` computes, where a kernel cannot read it at its own coordinates.

    "view" if a view reads it (inside a group views read group inputs only);
    "pad" or "cat" if it feeds a pad or a cat piece, directly or through
    elementwise ops (it is then evaluated at the pad's or piece's coordinates).
    `names`: the consumer's op names where known (its body facts): without a pad or a cat, nothing is walked.
    """
    block = consumer.regions[0].blocks[0]
    # Walked once, where a producer's value is read other than by a view.
    remapped = None if names is None or names & _PADS_AND_CAT else {}
    for arg, v in zip(block.arguments, consumer.operands):
        if defined_by(v, producer):
            if any(u.owner.operation.name in VIEW_OPS for u in arg.uses):
                return "view"
            remapped = _remapped_args(block) if remapped is None else remapped
            if arg.arg_number in remapped:
                return remapped[arg.arg_number]
    return None


_PADS_AND_CAT = PADS | {CAT}


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
    """Why `consumer` does not pad, cat (directly or through elementwise ops) or view values `producer` may compute at the pad's, piece's or view's coordinates; None if it does."""
    viewed = viewed_inputs(consumer, producer)
    if viewed == "view":
        return why_not_viewed(producer, consumer)
    if viewed not in ("pad", "cat"):
        return "neither padded, concatenated nor viewed"
    return why_not_remapped_producer(producer, viewed)


def why_not_remapped_producer(producer, what: str) -> str | None:
    """Why a pad or cat piece cannot read what `producer` computes at its own coordinates (None: it can).

    The kernel evaluates the producer's ops at the shifted, mirrored or
    clamped coordinates of the pad (masked outside a constant pad): only
    elementwise ops, creation ops (from the coordinates), views, and pads
    and cats (whose coordinates compose) can be evaluated anywhere; gathers
    read tables at the kernel's own coordinates, reductions a whole row.
    """
    kind = group_kind(producer)
    if kind != GroupKind.POINTWISE:
        return f"{what} of a {kind} result"
    for op in body_ops(producer)[0]:
        name = op.operation.name
        if name.startswith("torch.constant.") or name in VIEW_OPS or name in PADS or name in (CAT, "torch.prim.ListConstruct"):
            continue
        if name in CREATIONS or name in TRIANGLES:
            continue
        if name in INDEXING_OPS or torch_name(op) not in RULES:
            return f"{what} of a value computed by {name} (only elementwise ops are evaluated at a {what}'s coordinates)"
    return None


# Torch ops a group may hold and still be recomputed where its values are read (a view's, pad's or gather's coordinates).
MAX_RECOMPUTED_OPS = 8


def recomputable(producer, what: str) -> str | None:
    """Why `producer`'s values cannot be recomputed where `what` reads them (None: they can).

    Creation ops (from the coordinates), elementwise ops and views evaluate
    anywhere; a few of them cost less than a store and a load.
    """
    if group_kind(producer) != GroupKind.POINTWISE:
        return f"{what} of a {group_kind(producer)} result"
    computing = 0
    for op in body_ops(producer)[0]:
        name = op.operation.name
        if name.startswith("torch.constant.") or name in VIEW_OPS or name == "torch.prim.ListConstruct":
            continue
        if name not in CREATIONS and name not in TRIANGLES and torch_name(op) not in RULES:
            return f"{what} of a value computed by {name} (only creation and elementwise ops are recomputed)"
        computing += 1
    if computing > MAX_RECOMPUTED_OPS:
        return f"{what} of a value of {computing} ops (more than {MAX_RECOMPUTED_OPS} recomputed)"
    return None


def why_not_viewed(producer, consumer) -> str | None:
    """Why `consumer` cannot read the views of `producer`'s values by evaluating them at the views' coordinates (None: it can).

    Both are pointwise (the consumer may end in a cat), and every view the
    consumer applies to the producer's values has an index map
    (`view_coords`); unless all of them are identities (an expand to the
    same shape) or the producer only copies what only the consumer reads
    (`_copies_for`: the copy's load is made where the view reads, and
    nothing is stored), the producer reads no input and holds a creation op
    (aranges, fills and elementwise ops of them: recomputing them costs no
    load) and is `recomputable`. Otherwise the view is of a stored value.
    """
    block = consumer.regions[0].blocks[0]
    args = [arg for arg, v in zip(block.arguments, consumer.operands) if defined_by(v, producer)]
    if group_kind(producer) == GroupKind.MATMUL and all(only_stored_relaid(arg) for arg in args):
        return None  # the GEMM stores its tile straight into the views' layout (`legality_matmul.why_not_epilogue`)
    if group_kind(producer) != GroupKind.POINTWISE or group_kind(consumer) not in (GroupKind.POINTWISE, GroupKind.CONCAT):
        return "view of a computed value"
    if not all(_views_mapped(arg) for arg in args):
        return "view of a computed value (a view with no index map)"
    if all(_identity_views(arg) for arg in args) or _copies_for(producer, consumer):
        return None
    if group_kind(consumer) != GroupKind.POINTWISE:
        return "view of a computed value"
    if len(producer.operands) or not any(op.operation.name in CREATIONS for op in body_ops(producer)[0]):
        return "view of a computed value"
    why = recomputable(producer, "view")
    return why and f"{why} (a view of a computed value)"


def only_stored_relaid(arg) -> bool:
    """Is every view of block argument `arg` the start of a relayout (reshapes, permutes, same-shape expands,
    copies) whose values the group only stores? (No op computes on them.)"""
    return all(stored_relayout(u.owner) for u in arg.uses if u.owner.name in VIEW_OPS)


def _copies_for(producer, consumer) -> bool:
    """Does `producer` only copy (views and `COPIES` of its inputs: a transposed q/k/v gradient made contiguous
    before a reshape), for `consumer` alone? Then the consumer reads the inputs where its views put them."""
    for op in body_ops(producer)[0]:
        name = op.operation.name
        if not (name.startswith("torch.constant.") or name in VIEW_OPS or name in COPIES or name == "torch.prim.ListConstruct"):
            return False
    return all(u.owner.operation == consumer.operation for r in producer.results for u in r.uses)


def _identity_views(value) -> bool:
    """Are all views reading `value` (and views of them) identities (`is_identity_view`)?"""
    return all(
        u.owner.operation.name not in VIEW_OPS or (is_identity_view(u.owner.operation) and _identity_views(u.owner.results[0]))
        for u in value.uses
    )


def _views_mapped(value) -> bool:
    """Do all views reading `value` (and views of them) have index maps?"""
    for use in value.uses:
        op = use.owner
        if op.operation.name in VIEW_OPS:
            rank = len(tensor_type(op.results[0].type).shape)
            if view_coords(op.operation, ["x"] * rank) is None or not _views_mapped(op.results[0]):
                return False
    return True


def has_computed_view(group) -> bool:
    """Does `group` view a value it computes (read at the view's coordinates: pointwise kernels only)?

    A view of an input is a chain of constant views (`constant_view`) from an argument of the body's block
    (`view_chain` is not None): found in one pass over the body's views (found by MLIR's walk: a body's other
    ops make no Python object), each asked once whether its arguments are constant (`has_constant_args`) and
    whether what it views is an argument or such a view.
    """
    block = group.regions[0].blocks[0]
    of_inputs = set()  # the results of the views of inputs seen so far
    known: dict = {}  # whether each argument asked is constant: a body's views share their constants
    for op in ops_named(group.operation, VIEW_OPS):
        if op.block != block:
            continue  # in a region of a body op
        source, result = op.operands[0], op.results[0]
        owner = source.owner
        if (owner == block if isinstance(owner, ir.Block) else source in of_inputs) and has_constant_args(op, known):
            of_inputs.add(result)
        elif not _exit_reshape(op):
            return True
    return False


def _exit_reshape(op) -> bool:
    """A reshape of a computed value only stored (`fusion-sink-exit-reshapes`): no index map involved."""
    return op.operation.name in RESHAPES and all(u.owner.operation.name in RESHAPES | {"fusion.yield"} for u in op.results[0].uses)


def has_pad(group) -> bool:
    """Does `group` read a pad or a cat of its inputs? (Read by index arithmetic in pointwise kernels only.)"""
    return any(op.operation.name in PADS or op.operation.name == CAT for op in group.regions[0].blocks[0].operations)


def why_not_static_cat(cat) -> str | None:
    """Why `cat` is not a cat by a constant dim, of a list only it reads, into a static shape; None if it is."""
    items = cat_list(cat)
    result = tensor_type(cat.results[0].type)
    if items is None or not isinstance(constant_value(cat.operands[1]), int) or result is None or not result.is_static:
        return "cat with a non-constant dim or list, or a dynamic shape"
    if any(u.owner.operation != cat.operation for u in items.results[0].uses):
        return "cat's list is read by another op"
    if result.numel and any((t := tensor_type(v.type)) is not None and t.is_static and t.numel == 0 for v in items.operands):
        # x[:, 5:5], x[:, 8:] of a 7-wide dim: a kernel's masked-in lanes would read the empty piece.
        return "a piece is empty (ATen's cat skips it; a kernel would read outside it)"
    return None


def why_not_cat_of_inputs(cat) -> str | None:
    """None if `cat` (outside groups) can join a pointwise group as a read of its pieces; otherwise why not.

    Each piece is a group input, or is computed and the cat's result feeds
    an elementwise op: the group then reads each piece at the piece's
    coordinates (its producers may merge in: `why_not_merge`). A cat of
    computed values read by nothing fusible is a concat exit (`why_not_concat`).
    """
    reason = why_not_static_cat(cat)
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
