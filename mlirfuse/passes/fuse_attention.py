"""fusion-fuse-attention: attention becomes one `fusion.group {kind = "attention"}`, lowered to a flash-attention kernel.

Matched on the torch ops as imported (see `mlirfuse.ops.attention`), so this
runs before fusion-decompose turns the softmax into reductions:
`scaled_dot_product_attention`, and explicit `matmul(q, kᵀ)` -> score ops
-> `softmax` -> `matmul(·, v)`. The group holds the ops themselves: the
views and kv-head repeats reading q, k, v and the masks, the elementwise
ops on the scores and on the masks (those read only there), the softmax
and the matmuls, and the prologues computing q, k and v (RoPE, a scale, a
cast: elementwise ops, views and cats read only by the attention), which
the kernel evaluates on each tile it loads. Its inputs are what those read;
an operand left computed outside (read elsewhere too, or not pointwise over
its index space) is named in the group's `fusion.explain`.

Near misses (dropout, scores or weights read elsewhere, a mask that does
not broadcast, ...) stay as they are, with the reason in a
`fusion.explain` attribute on the sdpa op or the second matmul.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.dialect import GroupKind
from mlirfuse.ir import constant_like_ops, ir, tensor_type
from mlirfuse.ops.attention import MATMULS, SDPA, Attention, match
from mlirfuse.passes.base import ModulePass, function_level_ops
from mlirfuse.passes.legality import FUSION_ANALYSES, fusion_rewriter
from mlirfuse.passes.rewriter import FusionRewriter

EXPLAIN = "fusion.explain"

# What a match starts from: an sdpa, or the second matmul of an explicit attention.
_ROOTS = frozenset((SDPA, *MATMULS))


@dataclasses.dataclass(frozen=True)
class FuseAttention(ModulePass):
    """Group attention into one fusion.group of kind attention (one flash-attention kernel): scaled_dot_product_attention (is_causal, bool or additive attn_mask, scale, enable_gqa; dropout 0), and matmul(q, k^T) -> scale / masks / masked_fill -> softmax -> matmul(., v), with q, k, v read through views and kv-head repeats or computed by pointwise prologues (RoPE). Near misses, and prologues left out, get a fusion.explain attribute saying why."""

    name = "fusion-fuse-attention"

    preserves = FUSION_ANALYSES

    def apply(self, module: ir.Operation, am=None) -> None:
        am = am or AnalysisManager()
        rewriter = None  # made at the first attention found: most models have none
        constants: dict = {}  # the constants and lists the groups' ops read: those the wraps may leave unread
        for ops in function_level_ops(module, _ROOTS):
            for op in ops:
                op = op.opview
                found = match(op)
                if isinstance(found, Attention):
                    # Nothing here asks the dependence analysis, nor does fusion-decompose, which drops it: only
                    # the checking mode computes it (with the other fusion analyses), to prove wrap keeps it.
                    rewriter = rewriter or (fusion_rewriter(module, am)[0] if am.verify else FusionRewriter(am))
                    ops = found.ops()
                    # Each operand's constant ops asked once, here and by the wrap (the IR does not change between);
                    # a tensor is no constant (`constant_like_ops` would make its op's OpView to say so).
                    known = {v: None if tensor_type(v.type) is not None else constant_like_ops(v)
                             for read in ops for v in read.operands}
                    for read in known.values():
                        constants.update(dict.fromkeys(read or ()))
                    group = rewriter.wrap(ops, GroupKind.ATTENTION, known.__getitem__)
                    if found.refused:  # an operand read from memory though a pointwise op computes it
                        group.attributes[EXPLAIN] = ir.ArrayAttr.get(
                            [ir.StringAttr.get(f"prologue not fused: {why}") for why in found.refused]
                        )
                elif isinstance(found, str):
                    op.attributes[EXPLAIN] = ir.ArrayAttr.get([ir.StringAttr.get(f"attention not fused: {found}")])
        # The constants the groups' ops read, cloned into the groups, where nothing else reads them: lists first,
        # then their items (what `erase_dead_constants` erases, without a walk over the whole function).
        lists = [op for op in constants if op.operation.name == "torch.prim.ListConstruct"]
        for op in lists + [op for op in constants if op.operation.name != "torch.prim.ListConstruct"]:
            if next(iter(op.results[0].uses), None) is None:
                rewriter.erase(op)


__all__ = ["FuseAttention"]
