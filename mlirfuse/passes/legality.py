"""When two groups may become one: the checks every fusion pass and `fusion-explain-unfused` share.

Each `why_not_*` returns None when the rewrite is legal, otherwise the reason
in words; the fusion passes act on None, `fusion-explain-unfused` attaches the words.

- pointwise + pointwise: exported results must have the consumer's shape;
- with a reduction: every reduction of the merged group reduces the same
  axes of the same shape S; every pointwise op's shape broadcasts into S
  (prologue: full shape; epilogue on reduced values: the keepdim shape);
  a reduction's result without keepdim may only leave the group;
- with a scan: one scan dim of one shape S, pointwise ops broadcasting
  into S, every stored value shaped S, no reduction (`_why_not_scan`);
- never when another path runs from the producer to the consumer through an
  op outside both (the merged group would feed and read it: a cycle).

What pads and cats (`legality_cat`) and gathers, scatters and pools
(`legality_indexed`) add lives beside this module, which holds the merge
decision, the concat-group decision and the limits both apply.
"""

from __future__ import annotations

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.alias import AliasAnalysis
from mlirfuse.analysis.bodies import BodyFacts, GroupBodies, body_facts
from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.analysis.shapes import ShapeAnalysis
from mlirfuse.dialect import FUSIBLE_KINDS, REDUCTION_KINDS, GroupKind, group_kind
from mlirfuse.ir import defining_op, ir, last_op, op_id, result_index, tensor_type
from mlirfuse.ops.indexing import GATHERS
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, gemm
from mlirfuse.ops.pooling import WINDOWED
from mlirfuse.ops.reductions import REDUCTIONS, Reduction, reduction
from mlirfuse.ops.scans import scan
from mlirfuse.ops.views import PADS, RESHAPES, VIEW_OPS, is_view, view_args
from mlirfuse.passes.base import body_ops
from mlirfuse.passes.legality_cat import (
    CAT,
    cat_list,
    has_computed_view,
    has_pad,
    piece_groups,
    viewed_inputs,
    why_not_remapped_producer,
    why_not_static_cat,
    why_not_viewed,
)
from mlirfuse.passes.legality_indexed import (
    INDEXED_READERS,
    has_computed_table,
    why_not_indexed,
    why_not_scatter,
    why_not_window,
)
from mlirfuse.passes.options import Limits
from mlirfuse.passes.policy import veto
from mlirfuse.passes.rewriter import FusionRewriter, merge_interface

_PADS_AND_CAT = PADS | {CAT}
_REMAPPING = VIEW_OPS | _PADS_AND_CAT  # the ops `viewed_inputs` looks for

# What every fusion pass keeps current through its rewriter (and so preserves).
FUSION_ANALYSES = (DependenceAnalysis, AliasAnalysis, ShapeAnalysis, GroupBodies)


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


def group_bodies(module: ir.Operation, am: AnalysisManager) -> GroupBodies:
    """The body facts a fusion pass hands its legality checks (`bodies=`), kept across the fusion passes."""
    return am.get(GroupBodies, module)


def is_fusible_group(op) -> bool:
    return op is not None and op.name == "fusion.group" and group_kind(op) in FUSIBLE_KINDS


def group_reduction(group) -> Reduction | str | None:
    """The (shared) reduction a reduction group computes; None for pointwise groups; why not, where its reduction
    is one fusion does not take (only in a malformed group: the verifier reports it)."""
    for op in group.regions[0].blocks[0].operations:
        if op.operation.name in REDUCTIONS:
            return reduction(op)
    return None


def absorbable_view(op, block: ir.Block):
    """`op` (the defining op of a value a group in `block` reads) if it is a view op outside any group, in `block`,
    with constant arguments; else None.

    The group reads through it by index arithmetic instead of a copy.
    """
    if not is_view(op) or op.block != block or view_args(op) is None:
        return None
    return op.opview


def why_not_sink_reshape(op) -> str | None:
    """None if reshape `op` of a group's result can be stored by that group (fusion-sink-exit-reshapes); otherwise why not.

    The group stores its value row-major, so the reshaped value is that buffer.
    While anything else reads the result too, the group would store it twice:
    a second buffer of the same bytes, where the reshape outside is a view of the one.
    """
    if op.name not in RESHAPES or view_args(op) is None:
        return "view of a computed value (only reshapes of results are stored)"
    producer = defining_op(op.operands[0])
    if not is_fusible_group(producer):
        return "not the result of a pointwise or reduction group"
    if len(list(op.operands[0].uses)) > 1:
        return "the result is read unreshaped too (the group would store it twice; the view shares the buffer)"
    return None


def broadcasts_into(shape, target) -> bool:
    if len(shape) > len(target):
        return False
    return all(d == t or d == 1 for d, t in zip(reversed(shape), reversed(target)))


def computing_ops(group, bodies: GroupBodies | None = None) -> int:
    """The torch ops of `group` that compute (views and constants do not): what max-group-size counts."""
    return _facts(group, bodies).computing


def _facts(group, bodies: GroupBodies | None) -> BodyFacts:
    """`group`'s body facts: kept by `bodies` (a fusion pass's), else walked now."""
    return bodies.of(group) if bodies is not None else body_facts(group)


def _why_not_scan(producer, consumer, p_op, c_op, red: Reduction | None, exported) -> str | None:
    """A merge with a scan group: one kernel scans one dim of one shape S (see lowering/scan.py).

    Every other op is a pointwise prologue or epilogue broadcasting into S,
    and every value the kernel stores has shape S (there is no place for
    anything else); a reduction needs a kernel of its own.
    """
    if red is not None:
        return "a scan and a reduction (a scan kernel computes no reduction)"
    if has_pad(producer) or has_pad(consumer):
        return "pad or cat in a scan group (read by pointwise kernels only)"
    if has_computed_view(producer) or has_computed_view(consumer):
        return "view of a computed value in a scan group (read by pointwise kernels only)"
    if has_computed_table(producer) or has_computed_table(consumer):
        return "gather of a computed table or reshaped index in a scan group (read by pointwise kernels only)"
    if any(op.operation.name in WINDOWED for g in (producer, consumer) for op in g.regions[0].blocks[0].operations):
        return "pool or upsampling in a scan group (windows are read by pointwise kernels only)"
    p_scan, c_scan = (scan(op) if op is not None else None for op in (p_op, c_op))
    if p_scan is not None and c_scan is not None and (p_scan.shape, p_scan.dim) != (c_scan.shape, c_scan.dim):
        return "scans over different axes"
    space = (p_scan or c_scan).shape
    pointwise = consumer if c_scan is None else producer if p_scan is None else None
    if pointwise is not None and any(not broadcasts_into(tensor_type(r.type).shape, space) for r in pointwise.results):
        return "different iteration space"
    if any(tensor_type(r.type).shape != space for r in [*exported, *consumer.results]):
        return "different iteration space (a scan kernel stores values of the scanned shape only)"
    return None


def why_not_merge(
    producer, consumer, dep: DependenceAnalysis, limits: Limits = Limits(), bodies: GroupBodies | None = None
) -> str | None:
    """None if `producer` may merge into `consumer`; otherwise the reason (a rule's, or the fusion policy's veto).

    `bodies`: the pass's kept body facts (`group_bodies`); without, the two bodies are walked.
    """
    return _why_not_by_rule(producer, consumer, dep, limits, bodies) or veto(producer, consumer)


def _why_not_past_gemm_epilogue(producer, exported: list) -> str | None:
    """Why pointwise `producer`, a result of which is read beyond the consumer it would join, stays a group of its
    own: it computes on a GEMM's result over that result's shape, so fusion-fuse-matmul makes it the GEMM's epilogue
    (storing what else reads it); None if it does not.

    A pre-norm block's residual `h = x + o_proj(a)` feeds the next norm and
    the next residual. In the norm's group it reads x and o and stores h and
    the normalized h (o stored, then loaded); as the GEMM's epilogue it reads
    x and stores h, and the norm reads h: one tensor fewer moved, and the
    norm's group yields the normalized h alone, which the next GEMM then
    computes from h as its row prologue (`legality_matmul.why_not_row_prologue`).
    """
    if not exported:
        return None
    block = producer.regions[0].blocks[0]
    gemm_args = []
    for arg, v in zip(block.arguments, producer.operands):
        op = defining_op(v)
        if op is not None and op.name in MATMUL_OPS and isinstance(found := gemm(op.opview), Gemm):
            gemm_args.append((arg, found.out))
    if not gemm_args:
        return None
    # A residual: an add of an input of the group (x) to a value of the same shape (not a backward's
    # `sub`/`mul` chain, which a normalization's backward reads whole, nor an LSTM cell's `f * c + i * g`).
    # Found from the inputs' uses, not by walking the body.
    gemm_numbers = {arg.arg_number for arg, _ in gemm_args}
    residual = any(
        use.operand_number < 2 and use.owner.operation.name == "torch.aten.add.Tensor"
        and all(tensor_type(v.type) is not None and tensor_type(v.type).shape == tensor_type(use.owner.results[0].type).shape
                for v in list(use.owner.operands)[:2])
        for arg in block.arguments if arg.arg_number not in gemm_numbers
        for use in arg.uses
    )
    for arg, space in gemm_args if residual else []:
        if all(tensor_type(r.type).shape == space for r in producer.results) and any(
            tensor_type(u.owner.results[0].type).shape == space for u in arg.uses if len(u.owner.results) == 1
        ):
            return "producer is a GEMM's residual epilogue (it adds to the GEMM's result) whose result is read elsewhere too"
    return None


def _why_not_by_rule(producer, consumer, dep: DependenceAnalysis, limits: Limits, bodies: GroupBodies | None) -> str | None:
    p_kind, c_kind = group_kind(producer), group_kind(consumer)
    if c_kind == GroupKind.ATTENTION:
        return ("the attention kernel's prologues (elementwise ops, views with an index map and cats computing q, k or v, "
                "read only by it) join it when fusion-fuse-attention groups it, not as groups")
    if p_kind == GroupKind.ATTENTION:
        return "the attention kernel fuses no epilogue (yet)"
    if dep.dependents_between(producer, consumer)[1]:
        return "cycle"
    # Each body's size, reduction, scan and op names: kept by `bodies`, or one walk each. The consumer's
    # names say whether a view, pad, cat or pool could read the producer's values at all.
    p_facts, c_facts = _facts(producer, bodies), _facts(consumer, bodies)
    viewed = viewed_inputs(consumer, producer, c_facts.names) if c_facts.names & _REMAPPING else None
    if viewed == "view" and (why := why_not_viewed(producer, consumer)):
        return why
    if viewed in ("pad", "cat") and why_not_remapped_producer(producer, viewed):
        return why_not_remapped_producer(producer, viewed)
    why = (why_not_indexed(producer, consumer) if c_facts.names & INDEXED_READERS else None) or (
        why_not_window(producer, consumer) if c_facts.names & WINDOWED else None
    )
    if why:
        return why
    if p_kind == GroupKind.SCATTER:
        return "a scatter's result is complete only after its launch"
    if c_kind == GroupKind.SCATTER:
        return why_not_scatter(producer, consumer)
    p_ops, p_first, p_scan = p_facts.computing, p_facts.first_reduction, p_facts.first_scan
    c_ops, c_first, c_scan = c_facts.computing, c_facts.first_reduction, c_facts.first_scan
    exported, inputs = merge_interface(producer, consumer)
    args = len(inputs) + len(consumer.results) + len(exported)
    if args > limits.max_args:
        return f"argument limit ({args} > {limits.max_args})"
    if limits.max_group_size and p_ops + c_ops > limits.max_group_size:
        return f"group size limit ({p_ops + c_ops} > {limits.max_group_size})"
    p_red = reduction(p_first) if p_first is not None else None
    c_red = reduction(c_first) if c_first is not None else None
    if p_scan is not None or c_scan is not None:
        return _why_not_scan(producer, consumer, p_scan, c_scan, p_red or c_red, exported)
    # Into a row normalization (or on the way to one: a pointwise consumer), not into other reductions (a bias
    # gradient's sum over rows, which its producer's kernel may then compute beside a GEMM).
    row_norm = c_red is None or (c_red.keepdim and c_red.dims == (len(c_red.shape) - 1,))
    if p_red is None and row_norm and (why := _why_not_past_gemm_epilogue(producer, exported)):
        return why
    if p_red is None and c_red is None:
        iteration = tensor_type(consumer.results[0].type).shape
        # A GEMM's results are all stored from its tile (`legality_matmul.why_not_epilogue` checks them).
        if p_kind != GroupKind.MATMUL and any(tensor_type(r.type).shape != iteration for r in exported):
            return "different iteration space"
        return None
    # The body walks below only where the op names say one could find something.
    names = p_facts.names | c_facts.names
    if names & _PADS_AND_CAT and (has_pad(producer) or has_pad(consumer)):
        return "pad or cat in a reduction group (read by pointwise kernels only)"
    if names & VIEW_OPS and (has_computed_view(producer) or has_computed_view(consumer)):
        return "view of a computed value in a reduction group (read by pointwise kernels only)"
    if names & GATHERS.keys() and (has_computed_table(producer) or has_computed_table(consumer)):
        return "gather of a computed table or reshaped index in a reduction group (read by pointwise kernels only)"
    if names & WINDOWED:
        return "pool or upsampling in a reduction group (windows are read by pointwise kernels only)"
    pointwise = consumer if c_red is None else producer if p_red is None else None
    why = why_not_reduction_space(p_red, c_red, None if pointwise is None else tensor_type(pointwise.results[0].type).shape,
                                  [*exported, *consumer.results], _is_reduction_result)
    if why:
        return why
    for r in producer.results:
        if _is_reduction_result(r) and any(u.owner.operation == consumer.operation for u in r.uses):
            owner = _yielded_op(producer, r)
            if not _keepdim(owner):
                return "reduction result used without keepdim"
    return None


def why_not_reduction_space(p_red, c_red, pointwise_shape, stored: list, from_reduction, shape_of=None) -> str | None:
    """A merge with a reduction (`p_red` or `c_red`, either may be None): one axis set of one shape S, the
    pointwise side's result (`pointwise_shape`, None if both reduce) broadcasting into S, and each of `stored`
    (the values the merged kernel stores) of S, of its keepdim shape, 0-d or a reduction's result
    (`from_reduction`). `shape_of(value)`: a stored value's shape (None: read from its type)."""
    if p_red is not None and c_red is not None and (p_red.shape, p_red.dims) != (c_red.shape, c_red.dims):
        return "reductions over different axes"
    red = p_red or c_red
    if pointwise_shape is not None and not broadcasts_into(pointwise_shape, red.shape):
        return "different iteration space"
    # A kernel writes full-space results over S, row-space results one per
    # row and 0-d ones (a counter, `why_not_scalar_store`) once: anything else
    # (a broadcast-smaller value) has no place to be stored.
    spaces = (red.shape, red.keepdim_shape, ())
    for r in stored:
        shape = tensor_type(r.type).shape if shape_of is None else shape_of(r)
        if shape not in spaces and not from_reduction(r):
            return "different iteration space"
    return None


def is_scalar_group(group) -> bool:
    """Is `group` pointwise over 0-d values only (`num_batches_tracked + 1`): the same value on every lane of any kernel?"""
    types = [tensor_type(v.type) for v in [*group.operands, *group.results]]
    return group_kind(group) == GroupKind.POINTWISE and all(t is not None and t.shape == () for t in types)


def why_not_scalar_store(scalar, host, dep: DependenceAnalysis, limits: Limits = Limits(),
                         bodies: GroupBodies | None = None) -> str | None:
    """None if 0-d pointwise group `scalar` may join reduction group `host`, which it neither feeds nor reads from.

    Every lane of the host computes the scalar's values from its 0-d inputs;
    the kernel stores them once (row 0). A kernel fewer for a batch norm's
    `num_batches_tracked += 1`, which reads nothing the batch norm computes.
    """
    if not is_scalar_group(scalar):
        return "not a group of 0-d values"
    if group_kind(host) not in REDUCTION_KINDS:
        return "host is not a reduction group"
    if dep.reaches(scalar, host) or dep.reaches(host, scalar):
        return "one reads the other"
    first, second = sorted((scalar, host), key=dep.position)
    return _why_not_by_rule(first, second, dep, limits, bodies) or veto(first, second)


def _yielded_op(group, result):
    """The op inside `group` whose value the group yields as `result`."""
    terminator = last_op(group.regions[0].blocks[0])
    return defining_op(terminator.operands[result_index(result)])


def _is_reduction_result(result) -> bool:
    group = defining_op(result).opview
    owner = _yielded_op(group, result)
    return owner is not None and owner.name in REDUCTIONS


def _keepdim(op) -> bool:
    red = reduction(op.opview)
    return isinstance(red, Reduction) and (red.keepdim or len(red.dims) == 0)


# A concat kernel writes one cat; a cat of such pieces may be a pointwise group's exit instead (`cat_exits`).
HOLDS_A_CAT = "a piece's group holds a cat of its own (a concat kernel writes one cat)"


def why_not_concat(cat, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """None if `cat` and the groups computing its pieces can become one concat group; otherwise why not."""
    reason = why_not_static_cat(cat)
    if reason:
        return reason
    items = cat_list(cat)
    groups = piece_groups(cat)
    if not groups:
        return "no piece is computed by a group"
    if any(group_kind(g) != GroupKind.POINTWISE for g in groups):
        return "cat of a reduction result"
    if any(op.operation.name == CAT for g in groups for op in body_ops(g)[0]):
        return HOLDS_A_CAT
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


def why_not_cat_exit(cat, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """None if `cat` can be the exit of a concat group (`why_not_concat`) or of a pointwise one (`cat_exits`); otherwise why neither."""
    reason = why_not_concat(cat, dep, limits)
    if reason != HOLDS_A_CAT:
        return reason
    exits = cat_exits(cat, dep, limits)
    if not isinstance(exits, str):
        return None
    return f"{reason}; nor a pointwise exit: {exits}"


def cat_exits(cat, dep: DependenceAnalysis, limits: Limits = Limits()) -> tuple[list, list] | str:
    """(cats, groups) where `cat` can be the exit of one pointwise group that evaluates it by index arithmetic; else why not.

    Where a concat kernel cannot write the cat (`why_not_concat`: a piece's
    group holds a cat of its own, as a partial rotary's `cat(rotate(x[..., :r]),
    x[..., r:])` does inside its rotation), a pointwise kernel over the cat's
    shape can: each lane evaluates the piece its coordinate falls in, at the
    piece's coordinates (`legality_cat.why_not_remapped_producer`: elementwise,
    creation and view ops, pads and cats). The pieces' groups join, and with
    them every other cat of the same shape and dtype their results feed
    (rotary q and k computed by one group, each concatenated with its
    pass-through part); each result those groups store otherwise must have
    that shape (the kernel's one iteration space).
    """
    shape = tensor_type(cat.results[0].type)
    cats, groups = [], {}
    pending = [cat]
    while pending:
        each = pending.pop()
        if any(op_id(c) == op_id(each) for c in cats):
            continue
        reason = why_not_static_cat(each)
        if reason:
            return reason
        if tensor_type(each.results[0].type) != shape:
            return "cats of different shapes or dtypes (one iteration space)"
        cats.append(each)
        for group in piece_groups(each):
            if op_id(group) in groups:
                continue
            reason = why_not_remapped_producer(group, "cat")
            if reason:
                return reason
            groups[op_id(group)] = group
            for r in group.results:
                for use in r.uses:
                    owner = use.owner.opview
                    reader = _list_cat(owner)
                    if reader is not None:
                        pending.append(reader)
                    elif tensor_type(r.type).shape != shape.shape:
                        return "a piece's group stores a value of another shape (one iteration space)"
    if not groups:
        return "no piece is computed by a group"
    members = list(groups.values())
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            if dep.reaches(a, b) or dep.reaches(b, a):
                return "cycle"
    if max(dep.position(m) for m in members) > min(dep.position(c) for c in cats):
        return "a cat comes before a piece's group (the group would run after it)"
    inside = set(groups) | {op_id(c) for c in cats}
    for c in cats:  # a piece no member computes must not be computed from one (or from another of the cats)
        for v in cat_list(c).operands:
            owner = defining_op(v)
            if owner is not None and op_id(owner) not in inside and any(dep.reaches(m, owner) for m in members + cats):
                return "cycle"
    inputs = {v for g in members for v in g.operands}
    inputs |= {v for c in cats for v in cat_list(c).operands if not _defined_by_any(v, set(groups))}
    outputs = len(cats) + sum(
        1 for g in members for r in g.results if any(_list_cat(u.owner.opview) is None for u in r.uses)
    )
    if len(inputs) + outputs > limits.max_args:
        return f"argument limit ({len(inputs) + outputs} > {limits.max_args})"
    return sorted(cats, key=dep.position), sorted(members, key=dep.position)


def _list_cat(op):
    """The cat reading `op` if `op` is a cat's list (a ListConstruct only that cat reads), else None."""
    if op.operation.name != "torch.prim.ListConstruct":
        return None
    users = [u.owner.opview for u in op.results[0].uses]
    if len(users) == 1 and users[0].operation.name == CAT and users[0].operands[0] == op.results[0]:
        return users[0]
    return None


def _defined_by_any(value: ir.Value, ids: set) -> bool:
    owner = defining_op(value)
    return owner is not None and op_id(owner) in ids
