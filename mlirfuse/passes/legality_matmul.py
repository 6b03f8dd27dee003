"""When a pointwise group may join a GEMM group: the prologue and epilogue checks `fusion-fuse-matmul` and `fusion-explain-unfused` share.

Each `why_not_*` returns None when the merge is legal, otherwise the reason
in words, as in `legality`: a prologue is recomputed on every operand tile
(pointwise, small, read by this GEMM alone), an epilogue runs on the
result tile (pointwise over the GEMM's result shape). A cat along a GEMM
operand's K dim is a prologue too (`why_not_ksplit`): the template reads
it piece by piece, one K loop per piece, and nothing is copied. So is a
row normalization over A's K dim (RMSNorm, LayerNorm: `why_not_row_prologue`):
the template sums A's rows in loops of its own before the GEMM's.
"""

from __future__ import annotations

from mlirfuse.analysis.bodies import counts_as_computing
from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.dialect import REDUCTION_KINDS, TEMPLATE_KINDS, GroupKind, group_kind
from mlirfuse.ir import computes, defining_op, ir, last_op, op_id, tensor_type
from mlirfuse.ops.conv import CONV_OPS, Conv, conv
from mlirfuse.ops.indexing import EMBEDS, GATHERS, INDEXING_OPS, reads_shape_only
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, KSplit, computed_from_cat, gemm, k_split, why_not_k_sum
from mlirfuse.ops.pooling import WINDOWED
from mlirfuse.ops.reductions import REDUCTIONS, Reduction, reduction
from mlirfuse.ops.views import CAT, PADS, RESHAPES, VIEW_OPS, relayout_op, relayout_strides, walk_views
from mlirfuse.passes.base import body_ops
from mlirfuse.passes.legality import computing_ops, why_not_merge
from mlirfuse.passes.legality_cat import cat_list, has_computed_view, why_not_static_cat
from mlirfuse.passes.legality_chain import why_not_chain
from mlirfuse.passes.options import Limits
from mlirfuse.passes.policy import veto
from mlirfuse.passes.rewriter import merged_inputs


def group_gemm(group) -> Gemm | None:
    """The GEMM a matmul group computes."""
    found = group_matmul(group)
    return found[1] if found is not None else None


def group_matmul(group) -> tuple[object, Gemm] | None:
    """The op computing a matmul group's (first) GEMM and the GEMM, found in one walk of the body."""
    for op in group.regions[0].blocks[0].operations:
        if op.operation.name in MATMUL_OPS:
            found = gemm(op)
            return (op, found) if isinstance(found, Gemm) else None
    return None


def group_conv(group) -> Conv | None:
    """The convolution a conv group computes."""
    for op in group.regions[0].blocks[0].operations:
        if op.operation.name in CONV_OPS:
            found = conv(op)
            return found if isinstance(found, Conv) else None
    return None


def _result_space(group) -> tuple[int, ...]:
    """The space a template group's epilogue runs over: its GEMM's or convolution's result."""
    found = group_conv(group) if group_kind(group) == GroupKind.CONV else group_gemm(group)
    return found.out


def _tile_refused(cats: bool) -> frozenset:
    return _TILE_REFUSED_BUT_CATS if cats else _TILE_REFUSED


_TILE_REFUSED_BUT_CATS = frozenset(INDEXING_OPS | PADS)
_TILE_REFUSED = _TILE_REFUSED_BUT_CATS | {CAT}


def _tile_only(group, cats: bool = False) -> str | None:
    """Why `group`'s body cannot be emitted on a GEMM's tiles (indexing, creation, pads, cats unless `cats`), or None."""
    ops, _ = body_ops(group)
    refused = _tile_refused(cats)
    name = next((op.operation.name for op in ops if op.operation.name in refused), None)
    return f"holds '{name}' (indexing, creation, pads and cats are not emitted on GEMM tiles)" if name else None


def _why_not_on_tiles(group, role: str, pointwise_only: str, cats: bool = False, bodies=None) -> str | None:
    """Why `group` (the GEMM's `role`) cannot be computed on a GEMM's tiles: not pointwise, or a tile-only op.

    `cats`: the group's cats are K-split operands (`why_not_ksplit`); a concat group's exit cat is one.
    `bodies`: the pass's kept body facts, whose op names spare the walks where no such op is there.
    """
    kind = group_kind(group)
    if kind != GroupKind.POINTWISE and not (cats and kind == GroupKind.CONCAT):
        return f"{role} is a {kind} group ({pointwise_only})"
    names = bodies.of(group).names if bodies is not None else None
    why = _tile_only(group, cats) if names is None or names & _tile_refused(cats) else None
    if why is None and (names is None or names & VIEW_OPS) and has_computed_view(group):
        why = "views a computed value (read at the view's coordinates by pointwise kernels only)"
    return f"{role} {why}" if why else None


def why_not_ksplit(producer, mm) -> str | None:
    """None if every cat of `producer` may be read by `mm`'s GEMMs piece by piece along K; otherwise why not.

    `cat([x, h], -1) @ W` is no copy: the template runs one K loop per piece,
    each reading its piece (and the matching rows of W) through the piece's
    own pointer. So a cat may join a GEMM when, with the elementwise ops
    after it (a cast, an activation: evaluated per piece, `k_split`), it
    is the whole of an operand, along that operand's K dim (A's last, B's
    K), read by the GEMMs as nothing else; its pieces are inputs or
    pointwise values of them, computed on the pieces' tiles as any
    prologue is.
    """
    ops, terminator = body_ops(producer)
    block = mm.regions[0].blocks[0]
    split = set()
    for result, v in zip(producer.results, terminator.operands):
        if not computed_from_cat(v):
            continue  # an ordinary prologue value (a cast of the weight)
        for arg, operand in zip(block.arguments, mm.operands):
            if operand == result:
                why, cats = _why_not_k_operand(arg, v)
                if why:
                    return why
                split.update(op_id(cat.operation) for cat in cats)
    for cat in (op for op in ops if op.operation.name == CAT):
        if op_id(cat.operation) not in split:
            return "the cat is computed on further inside its group (only a cat that is a GEMM operand is read by K-split)"
        if why := why_not_static_cat(cat):
            return why
    return None


def left_to_gemm(cat) -> str | None:
    """Why `cat` (outside groups) is no concat exit: GEMMs the template takes read it, as an operand along
    their K dim, and fusion-fuse-matmul reads it piece by piece; None if it is not such a cat."""
    if why_not_static_cat(cat) or _why_not_k_operand(cat.results[0], cat.results[0])[0]:
        return None
    return "GEMMs read the cat along K: fusion-fuse-matmul reads it piece by piece (K-split), it is never stored"


def _why_not_k_operand(read, value) -> tuple[str | None, list]:
    """(Why not, None if so; the cats) for `read` (`value`, computed from a cat, or a block argument standing for it)
    being read only as GEMM operands along their K dim, through `k_split`."""
    cats = []
    rank = len(tensor_type(value.type).shape)
    for use in read.uses:
        user = use.owner
        g = gemm(user) if user.operation.name in MATMUL_OPS else None
        k = g.k_dim(use.operand_number, rank) if isinstance(g, Gemm) else None
        found = k_split(value, k) if k is not None else None
        if not isinstance(found, KSplit):
            return found or "the cat is read by more than a GEMM's operand (only an operand is read by K-split)", []
        cats.append(found.cat)
    return None, cats


def why_not_epilogue(mm, consumer, dep: DependenceAnalysis, limits: Limits = Limits(), bodies=None) -> str | None:
    """None if group `consumer` may become part of matmul group `mm`'s epilogue; otherwise why not (`bodies`: as `why_not_merge`'s)."""
    why = _why_not_on_tiles(consumer, "consumer", "a GEMM epilogue is pointwise over the GEMM's result", bodies=bodies)
    if why:
        return why
    g = group_gemm(mm) if group_kind(mm) == GroupKind.MATMUL else None
    space = g.out if g is not None else _result_space(mm)
    terminator = last_op(consumer.regions[0].blocks[0])
    from_mm = mm.operation
    for stored in terminator.operands:
        if why := _why_not_stored(lambda v: defining_op(v) == from_mm, consumer, stored, space, g):
            return why
    return why_not_merge(mm, consumer, dep, limits, bodies)


def epilogue_certain(consumer, produced: set, g: Gemm, inputs: list, computing: int, limits: Limits, bodies) -> bool:
    """Would `why_not_epilogue(mm, consumer)` let `consumer` join `mm`, a GEMM group not built yet? False where unsure.

    `mm` would compute the values `produced` (its results), read by
    `consumer` alone; its first GEMM is `g`, its inputs `inputs` and its
    computing ops (as max-group-size counts them) `computing`. Read by the
    consumer alone, `mm` has no result read elsewhere (`why_not_merge`
    exports none) and nothing between the two reads it (no cycle, nothing
    moves); what is left is asked of the consumer (`bodies`: the pass's
    body facts): its body on tiles, its stores, how it reads `produced`
    (as an elementwise op's operand, not a view's, an index's or a shape's),
    no reduction, scan, pad, cat or window, and the limits.
    """
    if group_kind(consumer) != GroupKind.POINTWISE or _why_not_on_tiles(consumer, "consumer", "", bodies=bodies):
        return False
    facts = bodies.of(consumer)
    if facts.first_reduction is not None or facts.first_scan is not None or facts.names & _NOT_CERTAIN:
        return False
    block = consumer.regions[0].blocks[0]
    c_operands = list(consumer.operands)
    for arg, v in zip(block.arguments, c_operands):
        if v in produced:
            reads = [(u.owner.operation.name, u.operand_number) for u in arg.uses]  # each reader's op asked once
            if any(name in _NOT_CERTAIN_READERS for name, _ in reads) or (
                    reads and all(reads_shape_only(name, number) for name, number in reads)):
                return False
    if any(_why_not_stored(produced.__contains__, consumer, stored, g.out, g) for stored in last_op(block).operands):
        return False
    args = len(dict.fromkeys(inputs + [v for v in c_operands if v not in produced])) + len(consumer.results)
    return args <= limits.max_args and not (limits.max_group_size and computing + facts.computing > limits.max_group_size)


# Consumer ops `epilogue_certain` leaves to `why_not_merge`: what reads a producer's values elsewhere than at the
# tile's coordinates (`legality_cat.viewed_inputs`, `legality_indexed.why_not_indexed`, windows).
_NOT_CERTAIN = frozenset(PADS) | {CAT} | WINDOWED
_NOT_CERTAIN_READERS = VIEW_OPS | {"torch.prim.ListConstruct"} | frozenset(EMBEDS) | frozenset(GATHERS)


def never_on_tiles(group, bodies) -> bool:
    """Is `group` refused as any GEMM's prologue and as any GEMM's epilogue by its body or kind alone (`_why_not_on_tiles`)?"""
    kind = group_kind(group)
    cats = kind in (GroupKind.POINTWISE, GroupKind.CONCAT) and CAT in bodies.of(group).names
    return bool(_why_not_on_tiles(group, "producer", "", cats, bodies) and _why_not_on_tiles(group, "consumer", "", bodies=bodies))


def _why_not_stored(from_mm, consumer, stored, space, g: Gemm | None) -> str | None:
    """Why `mm`'s epilogue cannot store `consumer`'s result `stored` (None: it can).

    A value over the result tile is stored where the tile is. So is a
    relayout (reshapes, permutes, same-shape expands, copies:
    `ops.views.relayout_op`) of such a value, computed there or the GEMM's
    result itself, where its elements' places in the stored result are
    strides per dim (`relayout_strides`): a reshape of the result, or a
    q/k/v head split `y.view(b, t, h, d).transpose(1, 2).clone()`, stored
    straight into the split layout instead of copied by a kernel of its own.
    `g`: `mm`'s GEMM (None for a convolution); `from_mm(v)`: is the consumer's operand `v` a result of `mm`?
    """
    different = "different iteration space (the epilogue runs over the GEMM's result tile)"
    source, ops = walk_views(stored, consumer.regions[0].blocks[0], through=relayout_op) if g else (stored, [])
    computed = not isinstance(source.owner, ir.Block) or from_mm(consumer.operands[ir.BlockArgument(source).arg_number])
    if not ops or not computed:  # another input, copied: read at the tile's coordinates as any epilogue input
        return None if tensor_type(stored.type).shape == space else different
    if g.dynamic or tensor_type(source.type).shape != space:
        return different
    if relayout_strides(space, ops) is None:
        return f"{different}: a reshape regroups dims whose sizes do not divide each other (no stride per dim)"
    return None


def why_not_prologue(
    producer, mm, dep: DependenceAnalysis, limits: Limits = Limits(), max_ops: int = 4, bodies=None
) -> str | None:
    """None if group `producer` may be recomputed on `mm`'s operand tiles; otherwise why not (`bodies`: as `why_not_merge`'s)."""
    # Only a pointwise or concat group can pass: only its body is walked for a cat (a GEMM group's is long).
    kind = group_kind(producer)
    names = bodies.of(producer).names if bodies is not None and kind in (GroupKind.POINTWISE, GroupKind.CONCAT) else None
    cats = kind in (GroupKind.POINTWISE, GroupKind.CONCAT) and (
        CAT in names if names is not None else any(op.operation.name == CAT for op in body_ops(producer)[0]))
    why = _why_not_on_tiles(producer, "producer", "a prologue is recomputed per tile: pointwise only", cats, bodies)
    if why:
        return why
    if any(u.owner.operation != mm.operation for r in producer.results for u in r.uses):
        return "producer's result is also read elsewhere"
    if cats and group_kind(mm) == GroupKind.CONV:
        return "producer holds a cat (a convolution reads no cat piece by piece)"
    if cats and (why := why_not_ksplit(producer, mm)):
        return why
    terminator = last_op(producer.regions[0].blocks[0])
    if any(defining_op(v) is not None and defining_op(v).name in VIEW_OPS for v in terminator.operands):
        return "producer stores a reshape of a computed value (a copy, not recomputed per tile)"
    if (count := _ops_per_tile(producer, bodies)) > max_ops:
        return f"prologue of {count} ops > {max_ops} (recomputed on every tile)"
    return why_not_merge(producer, mm, dep, limits, bodies)


# A row normalization a GEMM computes before its K loop: its sums (each its own loop over K) and ops.
ROW_PROLOGUE_SUMS = 2
ROW_PROLOGUE_OPS = 16


def why_not_row_prologue(producer, mm, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """None if reduction group `producer` (a row normalization: RMSNorm, LayerNorm) may be computed by matmul group
    `mm`'s kernel from the A tiles it loads; otherwise why not.

    The normalized A is never stored: each program first runs one loop
    over K per sum (the mean of x, then of its squares or deviations),
    reading its BLOCK_M rows of A, then the GEMM's K loop applies the
    normalization to each A tile before the dot. So `producer` yields one
    value, the A operand of every GEMM of `mm` (a grouped q/k/v reads it
    once), and nothing else reads it; its sums and means are over A's last
    dim, the GEMM's K, with keepdim, and its other ops are over A's shape or
    its rows (`[..., 1]`), with inputs broadcast along rows (a weight and
    bias of shape `[K]`).
    """
    if group_kind(mm) != GroupKind.MATMUL:
        return f"a {group_kind(mm)} group computes no row normalization before its GEMM"
    if group_kind(producer) not in REDUCTION_KINDS:
        return f"producer is a {group_kind(producer)} group (a row prologue is a reduction group)"
    if why := _tile_only(producer):
        return f"producer {why}"
    if has_computed_view(producer):
        return "producer views a computed value (read at the view's coordinates by pointwise kernels only)"
    if len(producer.results) != 1 or any(u.owner.operation != mm.operation for u in producer.results[0].uses):
        return "producer's result is also read elsewhere (a row prologue yields the GEMM's A only)"
    g = group_gemm(mm)
    if g is None or g.batch or g.dynamic:
        return "the GEMM is batched or over `?` rows (a row prologue needs one static A)"
    ops, terminator = body_ops(producer)
    a = tensor_type(terminator.operands[0].type).shape
    block = mm.regions[0].blocks[0]
    arg = next(b for b, o in zip(block.arguments, mm.operands) if o == producer.results[0])
    readers = _view_users(arg)
    for user, position in readers:
        found = gemm(user) if user.operation.name in MATMUL_OPS else None
        if not isinstance(found, Gemm) or position != found.a:
            return "the GEMM kernel reads the normalized value other than as its A operand"
        if found.k != a[-1]:
            return "the normalized dim is not the GEMM's K"
    sums, count = 0, 0
    for op in ops:
        if not computes(op.operation) or op.operation.name in VIEW_OPS:
            continue
        count += 1
        if op.operation.name in REDUCTIONS:
            r = reduction(op)
            if not isinstance(r, Reduction) or r.combine not in ("sum", "mean") or r.dims != (len(a) - 1,) \
                    or not r.keepdim or tuple(r.shape) != tuple(a):
                return f"'{op.operation.name}' is not a sum or mean over A's rows with keepdim (the GEMM's K)"
            sums += 1
            continue
        for v in op.results:
            shape = tuple(tensor_type(v.type).shape) if tensor_type(v.type) is not None else ()
            if shape not in (tuple(a), tuple(a[:-1]) + (1,)):
                return f"'{op.operation.name}' computes a {list(shape)} value (a row prologue computes over A or its rows)"
    if sums > ROW_PROLOGUE_SUMS or count > ROW_PROLOGUE_OPS:
        return f"row prologue of {sums} sums and {count} ops > {ROW_PROLOGUE_SUMS} and {ROW_PROLOGUE_OPS}"
    # why_not_merge's iteration-space rules are a reduction kernel's; the template's are above.
    if dep.dependents_between(producer, mm)[1]:
        return "cycle"
    args = len(merged_inputs(producer, mm)) + len(mm.results)
    if args > limits.max_args:
        return f"argument limit ({args} > {limits.max_args})"
    return veto(producer, mm)


def _view_users(value) -> list:
    """(op, operand position) of each non-view op reading `value` directly or through views."""
    found, stack = [], [value]
    while stack:
        for use in stack.pop().uses:
            if use.owner.operation.name in VIEW_OPS and use.operand_number == 0:
                stack.append(use.owner.results[0])
            else:
                found.append((use.owner, use.operand_number))
    return found


def _ops_per_tile(producer, bodies=None) -> int:
    """The computing ops of `producer` a GEMM tile evaluates: of a cat (K-split), only the ops of its widest-computed
    piece (each K loop evaluates its own piece) and not the cat itself (it computes nothing)."""
    count = computing_ops(producer, bodies)
    for cat in (op for op in body_ops(producer)[0] if op.operation.name == CAT):
        cones = [_cone_ops(piece) for piece in cat_list(cat).operands]
        count -= 1 + len(set().union(*cones)) - max(map(len, cones), default=0)
    return count


def _cone_ops(value) -> set:
    """The ids of the computing ops (views and constants do not count) computing `value` within its block."""
    found, stack = set(), [value]
    while stack:
        op = defining_op(stack.pop())
        if op is None or op_id(op) in found:
            continue
        if counts_as_computing(op.name):
            found.add(op_id(op))
        stack.extend(op.operands)
    return found


def why_not_k_sum_group(reducer, mm, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """None if reduction group `reducer` sums what matmul group `mm`'s GEMM reads as A over K, so that the GEMM's kernel
    computes it beside its result (`ops.matmul.why_not_k_sum`: a bias gradient beside its weight gradient); otherwise why not.

    `reducer` holds that sum and views only, and yields reshapes of it; the
    two groups are siblings (neither reads the other), and the GEMM group
    holds one GEMM reading A as it is stored.
    """
    if group_kind(mm) != GroupKind.MATMUL:
        return f"a {group_kind(mm)} group computes no sum beside its GEMM"
    ops, terminator = body_ops(reducer)
    computing = [op for op in ops if op.operation.name not in VIEW_OPS and op.operation.name != "torch.prim.ListConstruct"
                 and not op.operation.name.startswith("torch.constant.")]
    if len(computing) != 1 or computing[0].operation.name not in REDUCTIONS:
        return "the reduction group computes more than one sum (only a lone sum is computed beside a GEMM)"
    total = computing[0]
    if any(walk_views(v, through=lambda op: op.name in RESHAPES)[0] != total.results[0] for v in terminator.operands):
        return "the reduction group stores more than reshapes of its sum"
    matmuls = [op for op in body_ops(mm)[0] if op.operation.name in MATMUL_OPS]
    if len(matmuls) != 1:
        return "a grouped GEMM computes no sum beside it"
    if any(op.operation.name in REDUCTIONS for op in body_ops(mm)[0]):
        return "the GEMM computes a sum beside it already"

    def same_source(a_root, sum_root) -> bool:  # block arguments of the two groups standing for one tensor
        args = [isinstance(r.owner, ir.Block) for r in (a_root, sum_root)]
        return all(args) and (mm.operands[ir.BlockArgument(a_root).arg_number]
                              == reducer.operands[ir.BlockArgument(sum_root).arg_number])

    if why := why_not_k_sum(total, matmuls[0], same_source):
        return why
    first, second = (reducer, mm) if dep.position(reducer) < dep.position(mm) else (mm, reducer)
    if dep.reaches(first, second):
        return "cycle"
    args = len(merged_inputs(first, second)) + len(mm.results) + len(reducer.results)
    if args > limits.max_args:
        return f"argument limit ({args} > {limits.max_args})"
    return veto(reducer, mm)


def why_not_template(producer, consumer, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """Why two neighbouring groups, at least one a template group (matmul, matmul-chain, conv), are separate (for fusion-explain-unfused)."""
    kinds = {group_kind(producer), group_kind(consumer)}
    if GroupKind.CONV in kinds and kinds <= set(TEMPLATE_KINDS):
        return "a convolution's kernel takes no other template (a GEMM, a convolution) as its prologue or epilogue"
    if GroupKind.MATMUL_CHAIN in (group_kind(producer), group_kind(consumer)):
        return "a matmul-chain kernel takes no further prologue, epilogue or GEMM (yet)"
    if group_kind(producer) == GroupKind.MATMUL and group_kind(consumer) == GroupKind.MATMUL:
        return why_not_chain(producer, consumer, dep, limits)
    if group_kind(producer) in (GroupKind.MATMUL, GroupKind.CONV):
        return why_not_epilogue(producer, consumer, dep, limits)
    if group_kind(producer) in REDUCTION_KINDS and group_kind(consumer) == GroupKind.MATMUL:
        return why_not_row_prologue(producer, consumer, dep, limits)
    return why_not_prologue(producer, consumer, dep, limits)
