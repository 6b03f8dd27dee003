"""fusion-extern-operands: views read by an unfused op become its strided operands.

An op no group can hold (matmul, linear, conv ...) runs as one ATen call.
The views that only rearrange its operands (`q.view(b, t, h, d).transpose(1, 2)`
before `q @ k.transpose(-2, -1)`) move no data: ATen reads strided
operands. This pass puts such an op and the view chains feeding it into one
`fusion.group {kind = "extern"}`: one extern call whose operands are
addressed through views, as Inductor's extern kernels read
`reinterpret_tensor` arguments. The group is never outlined into a Triton
kernel; the runtime runs its body as ATen calls.

A view also read by something else is cloned into the group (views are
free); the original stays for its other readers.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.dialect import GroupKind
from mlirfuse.ir import ir
from mlirfuse.ops.elementwise import fusible
from mlirfuse.ops.reductions import REDUCTIONS
from mlirfuse.ops.views import VIEW_OPS, walk_views
from mlirfuse.passes.base import ModulePass, function_ops, unique_ops
from mlirfuse.passes.rewriter import FusionRewriter


def _extern_candidate(op) -> bool:
    name = op.operation.name
    if not name.startswith(("torch.aten.", "torch.prims.")) or name in VIEW_OPS or name in REDUCTIONS:
        return False
    return not fusible(op)


def group_extern(op, rewriter: FusionRewriter) -> bool:
    """Wrap `op` and the view chains feeding it into an extern group; False if no operand is a view."""
    block = op.operation.block
    chains = [walk_views(v, block)[1] for v in op.operands]
    if not any(chains):
        return False
    views = [v for chain in chains for v in chain]
    rewriter.wrap(unique_ops([*views, op]), GroupKind.EXTERN)  # a view feeding two operands is one member
    return True


@dataclasses.dataclass(frozen=True)
class ExternOperands(ModulePass):
    """Put each unfused op (matmul, linear, ...) together with the view chains feeding it into a fusion.group of kind extern: one ATen call reading strided operands, no copies."""

    name = "fusion-extern-operands"

    def apply(self, module: ir.Operation, am=None) -> None:
        rewriter = FusionRewriter(am or AnalysisManager())
        for ops in function_ops(module):
            for op in ops:
                if _extern_candidate(op):
                    group_extern(op, rewriter)
        rewriter.erase_dead_constants(module)


__all__ = ["ExternOperands", "group_extern"]
