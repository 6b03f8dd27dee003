"""fusion-fuse-concat: concat as an exit node; a cat of pointwise group results joins those groups.

The groups computing the pieces merge (they are independent) and the cat
becomes the merged group's exit: a `concat` group whose kernel stores each
piece straight into its slice of the cat's buffer. Pieces may differ in size
along the cat dim; a piece no group computes (a group input) is copied into
its slice by the same kernel.

Where a concat kernel cannot write the cat (a piece's group holds a cat of
its own: a partial rotary embedding's `cat(rotated, pass-through)`), the cat
is instead the exit of a `pointwise` group over its shape that evaluates each
piece at the piece's coordinates, together with the other cats of that shape
its pieces' groups feed (`cat_exits`). Refusals are `why_not_cat_exit`'s.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.dialect import GroupKind, set_group_kind
from mlirfuse.ir import ir, op_id, parent_name
from mlirfuse.log import FusionDecisions
from mlirfuse.passes.base import ModulePass, function_level_ops
from mlirfuse.passes.legality import (
    FUSION_ANALYSES,
    HOLDS_A_CAT,
    cat_exits,
    fusion_rewriter,
    why_not_cat_exit,
    why_not_concat,
)
from mlirfuse.passes.legality_cat import CAT, cat_list, piece_groups
from mlirfuse.passes.legality_matmul import left_to_gemm
from mlirfuse.passes.options import Limits, option, option_of


@dataclasses.dataclass(frozen=True)
class FuseConcat(ModulePass):
    """Make a cat of pointwise group results the exit of one `concat` group that writes every piece into its slice.

    Where a piece's group holds a cat of its own (one concat kernel writes one
    cat), the cat and the other cats of its shape those groups feed are the
    results of one `pointwise` group over that shape instead, each lane
    evaluating its piece at the piece's coordinates.

    A cat that only GEMMs read, along their K dim (an LSTM's `cat([x_t, h])`
    before its Linear), is left to fusion-fuse-matmul, which reads it piece
    by piece and never stores it (option ksplit, off where matmuls stay ATen
    calls). Options: ksplit, max-args.
    """

    name = "fusion-fuse-concat"

    ksplit: bool = option(True, "leave a cat that GEMMs read along their K dim to fusion-fuse-matmul (read piece by piece)")
    max_args: int = option_of(Limits, "max_args")

    preserves = FUSION_ANALYSES

    def apply(self, module: ir.Operation, am=None) -> None:
        rewriter, dep = fusion_rewriter(module, am)
        limits = Limits(max_args=self.max_args)
        decisions = FusionDecisions(self.name)
        changed = False
        for ops in function_level_ops(module, frozenset((CAT,))):
            # The cats, named before any rewrite: a cat an earlier cat's pointwise exit takes in is erased from the
            # function by the merge, and its handle must not be read again (a use after free: an abort, not an
            # exception; seen in test_zoo once the merges landed together).
            cats = [(op, op_id(op)) for op in ops]
            taken: set[int] = set()
            for op, ident in cats:
                if ident in taken or parent_name(op) != "func.func":
                    continue
                reason = why_not_cat_exit(op, dep, limits) or (left_to_gemm(op) if self.ksplit else None)
                if reason is not None:
                    decisions.refused(op, None, reason, how="with its pieces")
                    continue
                if why_not_concat(op, dep, limits) == HOLDS_A_CAT:
                    exits, groups = cat_exits(op, dep, limits)
                    taken.update(op_id(c) for c in exits)
                    self._pointwise_exits(exits, groups, rewriter, dep, decisions)
                    changed = True
                    continue
                groups = sorted(piece_groups(op), key=dep.position)
                decisions.merged(op, None, how="with its pieces")
                merged = groups[0]
                for group in groups[1:]:
                    merged = rewriter.merge(merged, group, dep)
                cat = rewriter.wrap([cat_list(op).opview, op], GroupKind.POINTWISE)
                merged = rewriter.merge(merged, cat, dep)
                set_group_kind(merged, GroupKind.CONCAT)
                changed = True
        if changed:  # the cats' lists and constants, cloned into groups, may be unread outside now
            rewriter.erase_dead_constants(module)

    @staticmethod
    def _pointwise_exits(cats: list, groups: list, rewriter, dep, decisions) -> None:
        """The pieces' groups and the cats as one pointwise group over the cats' shape: the cats are its results."""
        merged = groups[0]
        for group in groups[1:]:
            merged = rewriter.merge(merged, group, dep)
        for cat in cats:
            decisions.merged(cat, None, how="with its pieces, evaluated at their coordinates")
            wrapped = rewriter.wrap([cat_list(cat).opview, cat], GroupKind.POINTWISE)
            merged = rewriter.merge(merged, wrapped, dep)
