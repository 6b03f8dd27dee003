"""fusion-fuse-vertical: maximal producer->consumer groups of elementwise ops and reductions.

Two patterns reach a fixpoint together (MLIR's walk driver):

1. `wrap` puts each fusible torch op (see `mlirfuse.ops.elementwise` and
   `mlirfuse.ops.reductions`) alone into a `fusion.group` (kind `pointwise` or
   `reduction`), with the constants it reads cloned inside.
2. `merge_producer` merges a group into a consumer group when
   `why_not_merge` (mlirfuse.passes.legality) allows it; a producer result
   also used outside the consumer becomes an extra result. A view with
   constant arguments that the consumer reads joins it first (an absorbed
   view: the kernel reads through it by index arithmetic).

Each sweep visits ops in order; a consumer merges with its (already merged)
producer, so a chain needs one sweep to wrap and one to merge. Ops that
cannot be fused are never touched; only ops directly in a function body are
fused (ops in nested regions, e.g. prim.If arms, are left alone).
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.dialect import FUSIBLE_KINDS, GroupKind, group_kind
from mlirfuse.ir import defining_op, ir, parent_name, result_index, rewrite
from mlirfuse.log import FusionDecisions
from mlirfuse.ops import reductions, scans
from mlirfuse.ops.indexing import INDEX_LISTS, SCATTERS, scatters_into_empty
from mlirfuse.ops.registry import FUSED, fusing_family
from mlirfuse.passes.base import ModulePass, function_level_ops, pattern
from mlirfuse.passes.legality import (
    FUSION_ANALYSES,
    absorbable_view,
    fusion_rewriter,
    group_bodies,
    is_fusible_group,
    why_not_merge,
)
from mlirfuse.passes.legality_cat import CAT, MAX_RECOMPUTED_OPS, cat_list, why_not_cat_of_inputs, why_not_remapped
from mlirfuse.passes.options import Limits, option, option_group
from mlirfuse.passes.rewriter import FusionRewriter, defined_by
from mlirfuse.passes.vertical_plan import PURE, plan


class VerticalFuser:
    """The wrap and merge patterns, run to a fixpoint by `run`."""

    def __init__(
        self, module: ir.Operation, am: AnalysisManager, limits: Limits, recompute: bool = False,
        pass_name: str = "fusion-fuse-vertical",
    ):
        self.module, self.limits, self.recompute, self.am = module, limits, recompute, am
        # The dependence analysis is computed when first asked (`dep`): a fusion-fuse-horizontal that finds no
        # pair to ask about needs none (in checking mode every fusion analysis is live from the start).
        if am.verify:
            self.rewriter, self._dep = fusion_rewriter(module, am)
        else:
            self.rewriter, self._dep = FusionRewriter(am), None
        self.bodies = group_bodies(module, am)
        self.changed = False
        self.decisions = FusionDecisions(pass_name)  # MLIRFUSE_LOG=info
        self._wrap_pattern, self._merge_pattern = self._wrapping(), self._tracking(self.merge_producer)
        # torch.operator: ops torch-mlir does not define
        self.patterns = self._pattern_set(set(FUSED) | {CAT, "torch.operator"})
        self.refused: set[str] = set()  # names of the function-level ops the wrap pattern refused this sweep

    def _pattern_set(self, wrap_names):
        """The merge pattern, and the wrap pattern rooted at each of `wrap_names`."""
        patterns = rewrite.RewritePatternSet()
        for name in sorted(wrap_names):
            patterns.add(name, self._wrap_pattern)
        patterns.add("fusion.group", self._merge_pattern)
        return patterns.freeze()

    def _tracking(self, fn):
        """`fn` as a pattern run through the rewriter."""

        @pattern
        def apply(op, driver):
            with self.rewriter.driving(driver):
                done = fn(op)
            self.changed |= done
            return done

        return apply

    def _wrapping(self):
        """`wrap` as a pattern; an op in a group's body or a nested region is no match, asked first (cheap)."""

        @pattern
        def apply(op, driver):
            if _not_at_function_level(op):
                return False
            with self.rewriter.driving(driver):
                done = self.wrap(op)
            if done:
                self.changed = True
            else:
                self.refused.add(op.operation.name)
            return done

        return apply

    def run(self) -> bool:
        """Sweep until nothing changes; whether anything did.

        Only an op the wrap pattern refused can be wrapped in a later sweep (no rewrite of this pass puts
        a new op it matches at function level, nor moves one ahead of the sweep), so a sweep after the
        first roots the wrap pattern at those ops' names only: the ops in group bodies (most of them, and
        never wrapped) are not handed to it one by one.
        """
        changed = False
        patterns = self.patterns
        while True:
            self.changed = False
            self.refused = set()
            rewrite.walk_and_apply_patterns(self.module, patterns)
            if not self.changed:
                return changed
            changed = True
            patterns = self._pattern_set(self.refused)

    @property
    def dep(self) -> DependenceAnalysis:
        """The dependence analysis, computed on first use (then kept current by the rewriter)."""
        if self._dep is None:
            self._dep = self.am.get(DependenceAnalysis, self.module)
        return self._dep

    def dependence(self) -> DependenceAnalysis:
        if self.recompute:
            self.dep.refresh()
        return self.dep

    def wrap(self, op) -> bool:
        """A lone fusible op becomes a one-op group (pointwise, reduction, scan or scatter)."""
        if parent_name(op) != "func.func":
            return False  # inside a group already, or in a nested region (prim.If/Loop): not fused
        if op.operation.name == CAT:  # a cat of group inputs: read piecewise by index arithmetic
            if why_not_cat_of_inputs(op) is not None:
                return False
            self.rewriter.wrap([cat_list(op).opview, op], GroupKind.POINTWISE)
            return True
        family = fusing_family(op)
        if family is None or family.why_not(op) is not None:
            return False
        kind = (GroupKind.REDUCTION if family is reductions.FAMILY else GroupKind.SCAN if family is scans.FAMILY
                else GroupKind.SCATTER if op.operation.name in SCATTERS else GroupKind.POINTWISE)
        self.decisions.wrapped(op, kind)
        # A scatter into an `empty` only it reads: the kernel's output buffer, never copied into (no ATen call).
        target = [defining_op(op.operands[0]).opview] if kind == GroupKind.SCATTER and scatters_into_empty(op) else []
        if op.operation.name in INDEX_LISTS:  # the list of index tensors goes in with it (its items become inputs)
            items = defining_op(op.operands[1]).opview
            if any(u.owner.operation != op.operation for u in items.results[0].uses):
                items = self.rewriter.clone_before(items, op)
                self.rewriter.set_operand(op, 1, items.results[0])
            self.rewriter.wrap([*target, items, op], kind)
            return True
        if target:
            self.rewriter.wrap([*target, op], kind)
            return True
        self.rewriter.wrap([op], kind)
        return True

    def merge_producer(self, consumer) -> bool:
        """Merge the first group that feeds `consumer` into it, if legal."""
        kind = group_kind(consumer)
        if kind not in FUSIBLE_KINDS and kind != GroupKind.SCATTER:
            return False
        block = consumer.operation.block
        for operand in consumer.operands:
            producer = defining_op(operand)
            # (A scatter reads its views as strided tensors: the one it writes into is copied, not indexed.)
            view = absorbable_view(producer, block) if kind != GroupKind.SCATTER else None
            if view is not None:
                self._absorb_view(view, consumer)
                return True
            if not is_fusible_group(producer) or producer.block != block:
                continue
            producer = producer.opview
            reason = why_not_merge(producer, consumer, self.dependence(), self.limits, self.bodies)
            if reason is None:
                self.decisions.merged(producer, consumer)
                self.rewriter.merge(producer, consumer, self.dep)
                return True
            if reason == "different iteration space" and self._merge_copy(producer, consumer):
                return True
            self.decisions.refused(producer, consumer, reason)
        return False

    def _merge_copy(self, producer, consumer) -> bool:
        """Merge a copy of `producer` into `consumer`, which pads, cats or views its values, if that is legal.

        The pad evaluates the copy at its own coordinates, so a small
        elementwise producer whose values are also read elsewhere (in its own
        iteration space) is recomputed there rather than stored and reloaded;
        so is a view of position ids or a mask built from aranges, and any
        small group reading no tensor (a `scalar_tensor` two kernels select with).
        """
        reads_nothing = not list(producer.operands)  # a creation (the `0` of a threshold backward): computed anywhere
        if (why_not_remapped(producer, consumer) is not None and not reads_nothing) or _torch_ops(producer) > MAX_RECOMPUTED_OPS:
            return False
        copy = self.rewriter.clone_before(producer, consumer).opview
        reads = [(k, v) for k, v in enumerate(consumer.operands) if defined_by(v, producer)]
        for k, v in reads:
            self.rewriter.set_operand(consumer, k, copy.results[result_index(v)])
        if why_not_merge(copy, consumer, self.dependence(), self.limits, self.bodies) is not None:
            for k, v in reads:
                self.rewriter.set_operand(consumer, k, v)
            self.rewriter.erase(copy)
            return False
        self.decisions.merged(copy, consumer)
        self.rewriter.merge(copy, consumer, self.dep)
        return True

    def _absorb_view(self, view, consumer) -> None:
        """Move `view` into `consumer` (a private clone of it if others read it too: views are free)."""
        self.rewriter.wrap_into(view, consumer)


# Whether fusion-fuse-vertical plans first (tests and benchmarks compare both ways by setting it).
PLANNED = [True]


def erase_dead_code(module: ir.Operation, rewriter: FusionRewriter) -> None:
    """Erase the fusible (pure) ops nobody reads, users first.

    Export keeps some (the operand of a dropped `x.to(dtype)`). Fused beside
    live code they make groups only they justify (a reduction kernel, a
    concat exit, one iteration space) that canonicalize later strips bare.
    """
    for ops in function_level_ops(module, PURE.__contains__):
        for op in reversed(ops):
            if all(next(r.uses, None) is None for r in op.results):
                rewriter.erase(op)



def _not_at_function_level(op) -> bool:
    """Is `op` in a group's body or a nested region (after the first sweep, every op the wrap pattern is asked of)?"""
    parent = op.operation.parent
    return parent is None or parent.name != "func.func"


def _torch_ops(group) -> int:
    return sum(1 for op in group.regions[0].blocks[0].operations if op.operation.name.startswith("torch.aten."))


@dataclasses.dataclass(frozen=True)
class FuseVertical(ModulePass):
    """Group maximal producer->consumer chains of elementwise ops and reductions into fusion.group ops.

    Unary and binary math (with broadcasting and scalar operands), casts,
    comparisons, where/masked_fill, clamp and activations (relu, gelu, silu, ...);
    sum/mean/amax/amin/prod/argmax/argmin with their pointwise prologue and
    epilogue; cumsum/cumprod likewise, in `scan` groups. Views of group inputs join the group (read by index
    arithmetic). Gathers (embedding, index_select, gather, index) and
    creation ops (arange, full, zeros, ones, eye, tril/triu ...) join
    pointwise and reduction groups; scatters (scatter, scatter_add,
    index_put) end `scatter` groups (see mlirfuse/ops/indexing.py). A producer used outside the chain is exported as an extra
    group result; merges that would create a cycle are refused. Options:
    max-args (tensor arguments per kernel, default 128), max-group-size
    (torch ops per group, 0 = unlimited).
    """

    name = "fusion-fuse-vertical"

    limits: Limits = option_group(Limits)
    # Debug/benchmark: the maintained analysis's cost, measured against this.
    recompute_analyses: bool = option(
        False, "rebuild the dependence analysis before every legality check (quadratic; bench/compile_time.py)"
    )

    preserves = FUSION_ANALYSES

    def apply(self, module: ir.Operation, am=None) -> None:
        am = am or AnalysisManager()
        if PLANNED[0] and not self.recompute_analyses and not FusionDecisions(self.name).enabled:
            # The common case decided on the unwrapped ops and built once (passes/vertical_plan.py). Its sweeps ask
            # no analysis: none is computed for it (in checking mode all are, to prove their maintenance).
            rewriter = fusion_rewriter(module, am)[0] if am.verify else FusionRewriter(am)
            planned = plan(module, self.limits, rewriter)  # erases the dead code it reaches (erase_dead_code)
            if planned is not None:
                for planner in planned:
                    planner.build(rewriter)
                    planner.erase_dead_constants(rewriter)
                    planner.drop()
                return
        fuser = VerticalFuser(module, am, self.limits, self.recompute_analyses)
        erase_dead_code(module, fuser.rewriter)  # (all of it, or what the plan did not reach)
        fuser.run()
        # Constants cloned into groups and now unused outside.
        fuser.rewriter.erase_dead_constants(module)
