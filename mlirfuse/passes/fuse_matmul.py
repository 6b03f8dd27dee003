"""fusion-fuse-matmul: matmuls and convolutions become GEMM groups with their prologue and epilogue.

Runs after the elementwise fusion stages, on what they left:

1. each `mm` / `bmm` / `matmul` / `linear` / `addmm` / `baddbmm` the
   template takes (`mlirfuse.ops.matmul.gemm`) becomes a
   `fusion.group {kind = "matmul"}` together with the view chains feeding
   it (a transposed operand is read by strides, as extern calls read it);
2. prologue: a pointwise group whose results only this GEMM reads, over
   the operand's own shape and at most `max-prologue-ops` ops (a cast, a
   scale), merges in; the template recomputes it on every tile it loads,
   so nothing bigger and never a reduction. A cat along an operand's K dim
   (an LSTM's `cat([x_t, h])`, of inputs or of pointwise pieces) merges in
   the same way and is never stored: the template reads it piece by piece
   (K-split, `why_not_ksplit`);
3. epilogue: a pointwise group reading the GEMM's result over the result's
   shape (bias add, activation, residual add, scale, cast) merges in; a
   result also read elsewhere (the pre-activation value) stays a result.
4. a sum beside the GEMM: a reduction group summing the GEMM's A over K
   (a bias gradient `sum(g, [0])` beside its weight gradient `g.t() @ x`)
   merges in; the template adds the rows of each A tile it loads and stores
   the sums beside its result (`why_not_k_sum_group`);
5. chain: a GEMM group whose result only another GEMM reads, as its A,
   merges with it into one `fusion.group {kind = "matmul-chain"}` where the
   result's rows fit on chip (an MLP with a small hidden: the hidden
   activation is never written; `passes/legality_chain.py`).
6. row prologue: a reduction group normalizing the rows of what a GEMM
   group (not a chain) reads as A, over its K dim (RMSNorm, LayerNorm),
   whose result nothing else reads, merges in: the template sums A's rows
   in loops of their own before the GEMM's K loop, which normalizes each A
   tile as it loads it; the normalized A is never stored
   (`why_not_row_prologue`). After the chains: a chain keeps a hidden
   activation on chip, which saves more.

Convolutions (`mlirfuse.ops.conv.conv`: 1-d and 2-d, stride, padding,
dilation, groups) become `fusion.group {kind = "conv"}`, implicit GEMMs
with the same prologue and epilogue merges: conv -> batch norm (inference,
pointwise after fusion-decompose) -> relu -> residual add is one kernel.

Before 2 and 3, GEMMs become grouped GEMMs (one kernel, one accumulator
each): GEMMs reading the same A (q/k/v, SwiGLU's gate and up), then
independent GEMMs over one result space that one group reads, A or not
(`x @ W_ih + h @ W_hh`, an LSTM's four gates from fusion-chunk-motion's
matmul slices), so that group can be their common epilogue.

What is refused is named by `why_not_epilogue` / `why_not_prologue`
(`passes/legality_matmul.py`) and `why_not_chain`, which `fusion-explain-unfused` reports too.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.bodies import counts_as_computing
from mlirfuse.dialect import REDUCTION_KINDS, GroupKind, group_kind
from mlirfuse.ir import constant_like_ops, defining_op, ir, op_id
from mlirfuse.ops.conv import CONV_OPS, Conv, conv
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, gemm
from mlirfuse.ops.views import CAT, VIEW_OPS, has_constant_args, view_arg, view_args, walk_views
from mlirfuse.passes.base import ModulePass, body_ops, function_level_ops, unique_ops
from mlirfuse.passes.grouped_gemms import (
    epilogues_at_once,
    merge_for_epilogue,
    merge_siblings,
    pairs_at_once,
    shared_a,
    siblings_at_once,
    wrap_siblings_at_once,
)
from mlirfuse.passes.legality import FUSION_ANALYSES, fusion_rewriter, group_bodies
from mlirfuse.passes.legality_cat import cat_list, why_not_static_cat
from mlirfuse.passes.legality_chain import why_not_chain
from mlirfuse.passes.legality_matmul import (
    group_matmul,
    why_not_epilogue,
    why_not_k_sum_group,
    why_not_ksplit,
    why_not_prologue,
    why_not_row_prologue,
)
from mlirfuse.passes.options import Limits, option, option_group
from mlirfuse.passes.rewriter import FusionRewriter


@dataclasses.dataclass(frozen=True)
class FuseMatmul(ModulePass):
    """Turn mm/bmm/matmul/linear/addmm/baddbmm into fusion.group {kind = "matmul"} (a Triton GEMM) with the view chains feeding them, merging pointwise producer groups as a prologue and pointwise consumer groups as an epilogue.

    GEMMs reading the same A (q/k/v projections, SwiGLU's gate and up)
    become one grouped GEMM: one kernel loading each A tile once, one
    accumulator per GEMM, their epilogues fused (silu(g) * u). So do
    independent GEMMs over one result space read by one group, their
    epilogue where it can be (summed GEMMs x @ W_ih + h @ W_hh, an LSTM's
    gates: one K loop per A).

    A GEMM whose result (after its epilogue) only a second GEMM reads, as
    its A, runs back to back with it in one kernel where its rows fit on
    chip: kind "matmul-chain".

    conv1d/conv2d/convolution become fusion.group {kind = "conv"} (an
    implicit GEMM) with their prologue and epilogue (bias, batch norm,
    activation, residual) the same way.

    A sum of a GEMM's A over K (a bias gradient beside its weight
    gradient: `sum(g, [0])` and `g.t() @ x`) is computed by the GEMM's
    kernel from the A tiles it loads, and stored beside its result.

    A row normalization of A (RMSNorm, LayerNorm before q/k/v) read by
    the GEMM alone is computed by the GEMM's kernel: loops over K sum A's
    rows first, the GEMM's loop normalizes each A tile; never stored.

    Options: prologue / epilogue / grouped / k-sum / chain / conv (default true) switch the
    merges off; max-grouped (default 8) GEMMs per grouped kernel;
    max-prologue-ops (default 4) bounds what is recomputed per tile;
    max-args, max-group-size as fusion-fuse-vertical.
    """

    name = "fusion-fuse-matmul"

    prologue: bool = option(True, "merge pointwise producer groups into a GEMM as its prologue (recomputed on each tile)")
    epilogue: bool = option(True, "merge pointwise consumer groups into a GEMM as its epilogue (on its result tile)")
    grouped: bool = option(True, "make GEMMs sharing an A operand, or summed into one result, one grouped GEMM kernel")
    k_sum: bool = option(True, "compute a sum of a GEMM's A over K (a bias gradient) in the GEMM's kernel, beside its result")
    chain: bool = option(True, "run a GEMM feeding only another GEMM's A back to back with it, its result kept on chip")
    # Off by default: fewer bytes in the cost model, but each column tile's program sums its rows over K again
    # (from L2), which costs more than the round trip it saves: on an H200 in bf16 GPT2Model d=768 [8,512] took
    # 2.96 ms of GPU time per call with it and 1.85 without, LlamaModel d=1024 [4,512] 0.90 and 0.69 (.gpu/ab.py).
    row_prologue: bool = option(False, "compute a row normalization of a GEMM's A (RMSNorm, LayerNorm) in the GEMM's kernel")
    conv: bool = option(True, "make convolutions implicit-GEMM groups (kind conv) with their prologue and epilogue")
    max_grouped: int = option(8, "most GEMMs in one grouped GEMM kernel")
    max_prologue_ops: int = option(4, "most computing ops in a GEMM prologue (recomputed on every tile)")
    limits: Limits = option_group(Limits)

    preserves = FUSION_ANALYSES

    def apply(self, module: ir.Operation, am=None) -> None:
        am = am or AnalysisManager()
        rewriter, dep = fusion_rewriter(module, am)
        bodies = group_bodies(module, am)
        limits = self.limits
        # Only the ops taken, found by MLIR's walk (no Python call per op passed over: an unrolled loop's constants
        # and views are most of them).
        for ops in function_level_ops(module, _TAKEN):
            # Taken up front: merges erase pointwise groups (and cats), never a matmul, a convolution or their groups.
            matmuls = [(op, g) for op in ops if op.name in MATMUL_OPS and isinstance(g := gemm(op), Gemm)]
            convs = [op for op in ops if self.conv and op.name in CONV_OPS and isinstance(conv(op), Conv)]
            # A k-sum needs a reduction group computing one op (`why_not_k_sum_group`: a lone sum), and this pass
            # makes none and changes none but by a k-sum (its other merges and wraps are all of template or pointwise
            # kind): without one up front, no GEMM group scans its A's readers (a LayerNorm computes more).
            k_sums = any(op.name == "fusion.group" and group_kind(op) in REDUCTION_KINDS and _computes_one_op(op) for op in ops)
            # Every GEMM's view chains, walked before any wrap erases a view (a view feeding a GEMM not yet
            # wrapped is live), each view's arguments read once: an unrolled loop's weight views feed every step.
            walks = _ViewWalks()
            block = matmuls[0][0].operation.block if matmuls else None  # the function's: `ops` are its ops
            walked = [[walks.of(operand, block) for operand in op.operands] for op, _ in matmuls]
            chains = [[views for _, views in found] for found in walked]
            a_steps = [walks.steps(views[g.a]) for (_, g), views in zip(matmuls, chains)]
            a_roots = [found[g.a][0] for (_, g), found in zip(matmuls, walked)]
            # op_id -> (GEMMs, tile space) of each GEMM group, kept through the merges (not counted in bodies).
            counts = {}
            at_once = siblings_at_once(matmuls, chains, a_steps, a_roots, walks, dep, limits, self.max_grouped) if self.grouped else None
            # The merges `merge_for_epilogue` would make, where certain from the plans: each merged group built once.
            pairs = pairs_at_once(at_once, walks, dep, limits, self.max_grouped) if at_once and self.epilogue else None
            # And the epilogue each such group merges first, where certain: built in with it. (Not beside a k-sum or
            # a row prologue, whose merges would then see the epilogue's group.)
            if pairs is not None and not k_sums and not self.row_prologue:
                pairs = epilogues_at_once(at_once, pairs, dep, limits, bodies)
            if at_once is not None:
                groups = wrap_siblings_at_once(at_once, rewriter, dep, counts, pairs)
            else:
                groups = [_wrap(op, rewriter, views=[v for vs in views for v in vs]) for (op, _), views in zip(matmuls, chains)]
            if self.grouped:
                if at_once is None:
                    keys = [shared_a(group, g, steps) for group, (_, g), steps in zip(groups, matmuls, a_steps)]
                    groups = merge_siblings(groups, keys, rewriter, dep, limits, self.max_grouped, bodies, counts)
                if self.epilogue and pairs is None:
                    groups = merge_for_epilogue(groups, rewriter, dep, limits, self.max_grouped, bodies, counts)
            _wrap_operand_cats(groups, rewriter)
            finished = []
            for group in groups:
                if self.prologue:
                    group = self._absorb_prologue(group, rewriter, dep, limits, bodies)
                if self.epilogue:
                    group = self._absorb_epilogue(group, rewriter, dep, limits, bodies)
                if self.k_sum:
                    group = _absorb_k_sum(group, rewriter, dep, limits) if k_sums else group
                finished.append(group)
            if self.chain:
                finished = _merge_chains(finished, rewriter, dep, limits)
            if self.row_prologue:
                for group in finished:
                    _absorb_row_prologue(group, rewriter, dep, limits)
            for op in convs:
                group = _wrap(op, rewriter, GroupKind.CONV)
                if self.prologue:
                    group = self._absorb_prologue(group, rewriter, dep, limits, bodies, GroupKind.CONV)
                if self.epilogue:
                    self._absorb_epilogue(group, rewriter, dep, limits, bodies, GroupKind.CONV)
        rewriter.erase_dead_constants(module)

    def _absorb_prologue(
        self, group, rewriter: FusionRewriter, dep, limits: Limits, bodies, kind: GroupKind = GroupKind.MATMUL
    ):
        merged = True
        while merged:
            merged = False
            for v in group.operands:
                producer = defining_op(v)
                if producer is None or producer.name != "fusion.group" or producer.block != group.operation.block:
                    continue
                if why_not_prologue(producer.opview, group, dep, limits, self.max_prologue_ops, bodies) is None:
                    group = rewriter.merge(producer.opview, group, dep, kind=kind)
                    merged = True
                    break
        return group

    def _absorb_epilogue(
        self, group, rewriter: FusionRewriter, dep, limits: Limits, bodies, kind: GroupKind = GroupKind.MATMUL
    ):
        merged = True
        while merged:
            merged = False
            for r in group.results:
                for use in r.uses:
                    consumer = use.owner.operation
                    if consumer.name != "fusion.group" or consumer.block != group.operation.block:
                        continue
                    # Refused whatever else holds, so asked first: a consumer not pointwise (why_not_epilogue's
                    # first check) and a cycle (why_not_merge's; an unrolled loop's next step reads every step's
                    # result through its GEMMs, and the cycle was found after all the epilogue's checks).
                    if group_kind(consumer.opview) != GroupKind.POINTWISE or dep.dependents_between(group, consumer)[1]:
                        continue
                    if why_not_epilogue(group, consumer.opview, dep, limits, bodies) is None:
                        group = rewriter.merge(group, consumer.opview, dep, kind=kind)
                        merged = True
                        break
                if merged:
                    break
        return group


_TAKEN = frozenset(MATMUL_OPS) | frozenset(CONV_OPS) | {"fusion.group"}  # the function-level ops the pass starts from


def _computes_one_op(group) -> bool:
    """Does `group`'s body hold one computing op at most (`counts_as_computing`, as its body facts count them)?

    Read up to its second such op: a LayerNorm's reduction group computes a dozen, found by its seventh op.
    """
    count = 0
    for op in group.regions[0].blocks[0].operations:
        if counts_as_computing(op.operation.name):
            count += 1
            if count > 1:
                return False
    return True


def _absorb_row_prologue(group, rewriter: FusionRewriter, dep, limits: Limits):
    """`group` with the reduction group normalizing its A merged in (`why_not_row_prologue`), if there is one."""
    for v in group.operands:
        producer = defining_op(v)
        if producer is None or producer.name != "fusion.group" or producer.block != group.operation.block:
            continue
        if why_not_row_prologue(producer.opview, group, dep, limits) is None:
            return rewriter.merge(producer.opview, group, dep, kind=GroupKind.MATMUL)
    return group


def _absorb_k_sum(group, rewriter: FusionRewriter, dep, limits: Limits):
    """`group` with the first reduction group summing its GEMM's A over K merged in (`why_not_k_sum_group`).

    Only a reduction group reading A's source can pass (the sum and A read
    one tensor), so only A's readers are checked: an unrolled LSTM's weights
    are read by every step's GEMM, and scanning their readers per GEMM was quadratic.
    """
    found = group_matmul(group)
    if found is None or found[1].batch:
        return group
    mm, g = found
    block = group.regions[0].blocks[0]
    a_root, _ = walk_views(mm.operands[g.a])
    if not isinstance(a_root.owner, ir.Block) or a_root.owner != block:
        return group  # A is computed in the group (a prologue): no sum reads it as stored
    a_source = group.operands[ir.BlockArgument(a_root).arg_number]
    passing = {}
    for use in a_source.uses:
        reducer = _sibling_group(use, group)
        if reducer is not None and op_id(reducer) not in passing and group_kind(reducer) in REDUCTION_KINDS:
            if why_not_k_sum_group(reducer, group, dep, limits) is None:
                passing[op_id(reducer)] = reducer
    if not passing:
        return group
    # The first in operand-then-use order, as a scan of every operand's readers finds it.
    reducer = next(r for v in group.operands for use in v.uses
                   if (r := _sibling_group(use, group)) is not None and op_id(r) in passing)
    first, second = (reducer, group) if dep.position(reducer) < dep.position(group) else (group, reducer)
    return rewriter.merge(first, second, dep, kind=GroupKind.MATMUL)


def _sibling_group(use, group):
    """The group (another than `group`, in its block) that `use` belongs to, or None."""
    owner = use.owner.operation
    if owner.name != "fusion.group" or owner == group.operation or owner.block != group.operation.block:
        return None
    return owner.opview


def _merge_chains(groups: list, rewriter: FusionRewriter, dep, limits: Limits) -> list:
    """Each GEMM group whose result only a GEMM group reads, as its A, merged with it into one matmul-chain group;
    the GEMM groups left as they were."""
    live = {op_id(g): g for g in groups}  # erased groups leave it: their ops are not to be touched again
    for key in list(live):
        group = live.get(key)
        if group is None or len(group.results) != 1:
            continue
        users = {op_id(use.owner.operation) for use in group.results[0].uses}
        second = live.get(next(iter(users))) if len(users) == 1 else None
        if second is None or why_not_chain(group, second, dep, limits) is not None:
            continue
        del live[key], live[op_id(second)]  # before the merge erases them; a chain takes no third GEMM
        rewriter.merge(group, second, dep, kind=GroupKind.MATMUL_CHAIN)
    return list(live.values())


def _wrap_operand_cats(groups: list, rewriter: FusionRewriter) -> None:
    """Give each GEMM group reading a cat its own prologue candidate: a pointwise group holding the cat (and its pieces' views).

    fusion-fuse-concat leaves a cat of computed pieces that only GEMMs read
    alone (the pieces may be another GEMM's epilogue: an unrolled LSTM's
    h): it is wrapped here. A cat (bare, or a group holding only a cat of
    its inputs) read by several GEMM groups is copied, one per group: each
    reads the pieces (a copy recomputes nothing), no cat is stored. Whether
    a copy merges is `why_not_prologue`'s call; one that does not is a
    kernel reading its pieces, as a cat of inputs is.
    """
    for group in groups:
        block = group.operation.block
        for i, v in enumerate(list(group.operands)):
            owner = defining_op(v)
            if owner is None or owner.block != block or not _is_cat_of_inputs(owner):
                continue
            if any(u.owner.operation.name != "fusion.group" or group_kind(u.owner) != GroupKind.MATMUL for u in v.uses):
                continue
            if owner.name == CAT:
                items = cat_list(owner.opview)
                views = [op for piece in items.operands for op in walk_views(piece, block)[1]]
                owner = rewriter.wrap(unique_ops([*views, items.opview, owner.opview]), GroupKind.POINTWISE).operation
            readers = [u.owner for u in owner.results[0].uses]
            # Copied only where every reader would read it piece by piece (a cat along rows stays one kernel).
            if len(readers) > 1 and all(why_not_ksplit(owner.opview, reader) is None for reader in readers):
                rewriter.set_operand(group, i, rewriter.clone_before(owner, group).results[0])


def _is_cat_of_inputs(op) -> bool:
    """A static cat outside groups, or a pointwise group whose one result is a cat of its inputs (views aside)."""
    if op.name == CAT:
        return why_not_static_cat(op.opview) is None
    if op.name != "fusion.group" or group_kind(op.opview) != GroupKind.POINTWISE or len(op.results) != 1:
        return False
    ops, _ = body_ops(op.opview)
    names = [o.operation.name for o in ops if not o.operation.name.startswith("torch.constant.")]
    return names.count(CAT) == 1 and all(n in VIEW_OPS or n in (CAT, "torch.prim.ListConstruct") for n in names)


def _wrap(op, rewriter: FusionRewriter, kind: GroupKind = GroupKind.MATMUL, views: list | None = None):
    """`op` and the view chains feeding its tensor operands (`views`, if walked already) as one `kind` (template) group."""
    if views is None:
        block = op.operation.block
        views = [v for operand in op.operands for v in walk_views(operand, block)[1]]
    return rewriter.wrap(unique_ops([*views, op]), kind)


class _ViewWalks:
    """`walk_views` through constant views (`constant_view`, asked by `has_constant_args` once per view: a walk
    asks it of the op defining a value not walked before), and each A chain's view arguments read once, each constant once (an unrolled step's slices share theirs): valid
    while no op is erased (an address may then be reused). `constant_ops` is `constant_like_ops` so cached, for
    `wrapped_inputs` while the GEMMs are planned."""

    def __init__(self):
        self.constant_args: dict = {}  # value -> is it a constant argument (`has_constant_args`)
        self.args: dict = {}  # op_id -> view_args, of the views `steps` was asked about
        self.walks: dict = {}  # value -> walk_views' answer (within one block)
        self.reads: dict = {}  # operation -> `_reads`
        self.arg = _Cached(view_arg).__getitem__
        self.constant_ops = _Cached(constant_like_ops).__getitem__

    def _through(self, op) -> bool:
        return op.name in VIEW_OPS and has_constant_args(op, self.constant_args)

    def of(self, value: ir.Value, block: ir.Block) -> tuple[ir.Value, list]:
        """`walk_views(value, block, through=...)`, each value's walk kept: an A read by several GEMMs (an LSTM
        step's input, its h) is walked once, and so is a view several walks pass (a step's weight permute, read
        through one slice per gate): a walk stops at a value walked before and takes its answer."""
        found = self.walks.get(value)
        if found is not None:
            return found
        passed = []  # (value, the view defining it), from `value` up
        while True:
            op = defining_op(value)
            if op is None or op.block != block or not self._through(op):
                found = self.walks[value] = (value, [])
                break
            passed.append((value, op.opview))
            value = op.operands[0]
            found = self.walks.get(value)
            if found is not None:
                break
        root, chain = found
        for value, op in reversed(passed):
            chain = [*chain, op]
            self.walks[value] = (root, chain)
        return root, chain

    def wrapped(self, ops: list) -> tuple[list, list]:
        """`wrapped_inputs(ops, self.constant_ops)`, each op's operands and results asked of the bindings once (an
        unrolled step's GEMMs share their A's views and their weights' permute). `ops` are views and a GEMM: what
        they compute is no constant, so a value computed inside is not asked for its constant ops."""
        reads = [self._reads(op) for op in ops]
        inside = {r for _, results in reads for r in results}
        operands: dict = {}
        constants = []
        for op_operands, _ in reads:
            for v in op_operands:
                if v in inside:
                    continue
                read = self.constant_ops(v)
                if read is not None:
                    constants += read
                else:
                    operands.setdefault(v)
        return list(operands), constants

    def _reads(self, op) -> tuple[list, list]:
        """The operands and the results of `op`."""
        found = self.reads.get(op.operation)
        if found is None:
            found = self.reads[op.operation] = (list(op.operands), list(op.results))
        return found

    def steps(self, views: list) -> tuple:
        """((name, args), ...) of `views` (walked by `of`), as `view_chain` gives them."""
        found = []
        for v in views:
            key = op_id(v)
            args = self.args.get(key)
            if args is None:
                args = self.args[key] = view_args(v, self.arg)
            found.append((v.operation.name, args))
        return tuple(found)


class _Cached(dict):
    """`fn`'s answer for each key, computed when first asked."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def __missing__(self, key):
        value = self[key] = self.fn(key)
        return value


__all__ = ["FuseMatmul"]
