"""fusion-explain-unfused: `fusion.explain` on each group, naming every neighbour left outside it and why.

An annotator: it runs the same checks the fusion passes act on
(`why_not_merge`, `why_not_concat`, the elementwise, reduction and scan rules) and
writes their answers as a string array attribute, so lit can check why two
ops were not fused. Run it after the fusion passes, with their limits.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.dialect import GroupKind, group_kind
from mlirfuse.ir import defining_op, ir, op_id, torch_name
from mlirfuse.ops.conv import FAMILY as CONV_FAMILY
from mlirfuse.ops.conv import conv
from mlirfuse.ops.elementwise import why_not_fusible
from mlirfuse.ops.indexing import EMPTIES, INDEXING_OPS, LIBRARY_CALLS
from mlirfuse.ops.indexing import why_not_fusible as why_not_indexing
from mlirfuse.ops.matmul import MATMUL_OPS, gemm
from mlirfuse.ops.reductions import REDUCTIONS
from mlirfuse.ops.registry import FUSED
from mlirfuse.ops.scans import SCANS
from mlirfuse.ops.views import PADS, VIEW_OPS, pad_args, view_args
from mlirfuse.passes.base import ModulePass
from mlirfuse.passes.decompositions.indexing import why_not_histc
from mlirfuse.passes.legality import FUSION_ANALYSES, why_not_cat_exit, why_not_merge, why_not_sink_reshape
from mlirfuse.passes.legality_cat import CAT
from mlirfuse.passes.legality_matmul import left_to_gemm, why_not_template
from mlirfuse.passes.options import Limits, option_group


def neighbours(group, dep: DependenceAnalysis) -> list:
    """(op, "producer" | "consumer") for each op next to `group` (a cat, for a cat's pieces): the producers in operand
    order, then the consumers in block order (not in use-list order, which is the history of the rewrites)."""
    found = [(defining_op(v), "producer") for v in group.operands]
    consumers = []
    for use in (use for r in group.results for use in r.uses):
        owner = use.owner.operation
        if owner.name == "torch.prim.ListConstruct":  # a cat's pieces: the cat is the neighbour
            consumers += [u.owner.operation for u in owner.results[0].uses]
        else:
            consumers.append(owner)
    # An op in a nested region has no position of its own: its ancestor's, after the ops of the body.
    return found + [(op, "consumer") for op in sorted(consumers, key=lambda op: _position(op, dep))]


def _position(op, dep: DependenceAnalysis) -> tuple:
    depth = 0
    while op is not None and op_id(op) not in dep.pos:
        op, depth = op.parent, depth + 1
    return (dep.position(op) if op is not None else float("inf"), depth)


def why_outside(op, group, role: str, dep: DependenceAnalysis, limits: Limits) -> str:
    """Why `op` (a `role` of `group`) is not in the group."""
    if op.parent is None or op.parent.name != "func.func":
        return "inside a nested region (only function bodies are fused)"
    if op.name == "fusion.group":
        producer, consumer = (op.opview, group) if role == "producer" else (group, op.opview)
        if {GroupKind.MATMUL, GroupKind.MATMUL_CHAIN, GroupKind.CONV} & {group_kind(producer), group_kind(consumer)}:
            return why_not_template(producer, consumer, dep, limits) or "not merged"
        return why_not_merge(producer, consumer, dep, limits) or "not merged"
    if op.name in MATMUL_OPS and isinstance(gemm(op.opview), str):
        return f"not a GEMM the template takes: {gemm(op.opview)}"
    if op.name in CONV_FAMILY.ops and isinstance(conv(op.opview), str):
        return f"not a convolution the template takes: {conv(op.opview)}"
    if op.name == CAT:
        return why_not_cat_exit(op.opview, dep, limits) or left_to_gemm(op.opview) or "not merged"
    if op.name in VIEW_OPS:
        if view_args(op) is None:
            return "view with non-constant arguments"
        if role == "producer" and group_kind(group) == GroupKind.SCATTER:
            return "a scatter reads the views of its operands as strided tensors (no copy)"
        if role == "consumer":
            return why_not_sink_reshape(op) or "not merged"
        return "view of a computed value (only reshapes of results are stored)"
    if op.name in REDUCTIONS or op.name in SCANS:
        return FUSED[op.name].why_not(op.opview) or "not merged"
    if op.name in PADS:
        return "pad by non-constant or dynamic sizes" if pad_args(op) is None else "not merged"
    if op.name in INDEXING_OPS:
        return why_not_indexing(op.opview) or "not merged"
    if op.name in EMPTIES and role == "producer" and group_kind(group) == GroupKind.SCATTER:
        return "an empty read elsewhere too (the scatter copies it into its output, as any input)"
    if torch_name(op) in LIBRARY_CALLS:
        return LIBRARY_CALLS[torch_name(op)]
    if torch_name(op) == "torch.aten.histc":
        return why_not_histc(op.opview) or "not merged"
    return why_not_fusible(op.opview) or "not merged"


@dataclasses.dataclass(frozen=True)
class ExplainUnfused(ModulePass):
    """Attach `fusion.explain` to each fusion.group: every neighbour left outside it and why. Options: max-args, max-group-size (the limits fusion ran with)."""

    name = "fusion-explain-unfused"

    limits: Limits = option_group(Limits)

    preserves = FUSION_ANALYSES

    def apply(self, module: ir.Operation, am=None) -> None:
        dep = (am or AnalysisManager()).get(DependenceAnalysis, module)
        limits = self.limits
        groups = []

        def visit(op):
            if op.name == "fusion.group":
                groups.append(op.opview)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        for group in groups:
            # Reasons the pass making the group recorded (an attention's prologue left out) come first.
            reasons = [ir.StringAttr(a).value for a in ir.ArrayAttr(group.attributes["fusion.explain"])] \
                if "fusion.explain" in group.attributes else []
            seen = set()
            for op, role in neighbours(group, dep):
                if op is None or op.name == "func.return" or op.name.startswith(("torch.constant.", "torch.prim.")):
                    continue
                key = (op_id(op), role)
                if key in seen:
                    continue
                seen.add(key)
                reasons.append(f"{role} {torch_name(op)}: {why_outside(op, group, role, dep, limits)}")
            if reasons:
                group.attributes["fusion.explain"] = ir.ArrayAttr.get([ir.StringAttr.get(r) for r in reasons])
