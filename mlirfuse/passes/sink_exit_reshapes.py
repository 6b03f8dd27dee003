"""fusion-sink-exit-reshapes: a reshape of a group's result read outside any group joins the group.

The kernel stores the value in row-major order (a reduction group: over the
full space, or one element per row); the reshaped result is that buffer with
the new shape, so the reshape costs nothing. Runs after fusion: a group
whose result is reshaped can no longer merge with the reshape's readers (a
view of a computed value). A result also read unreshaped stays a result,
its reshape a view of it outside: storing both would be two buffers of the
same bytes (`legality.why_not_sink_reshape`).
"""

from __future__ import annotations

import dataclasses

from mlirfuse.dialect import GroupKind
from mlirfuse.ir import defining_op, ir
from mlirfuse.ops.views import RESHAPES
from mlirfuse.passes.base import ModulePass, function_level_ops
from mlirfuse.passes.legality import FUSION_ANALYSES, fusion_rewriter, why_not_sink_reshape


@dataclasses.dataclass(frozen=True)
class SinkExitReshapes(ModulePass):
    """Move a row-major reshape (view, reshape, squeeze, unsqueeze, flatten ...) of a pointwise or reduction group's result, its only reader, into the group, which stores the result in the new shape."""

    name = "fusion-sink-exit-reshapes"

    preserves = FUSION_ANALYSES

    def apply(self, module: ir.Operation, am=None) -> None:
        rewriter, dep = fusion_rewriter(module, am)
        sunk = False
        for ops in function_level_ops(module, RESHAPES):
            for op in ops:
                if why_not_sink_reshape(op.operation) is not None or not list(op.results[0].uses):
                    continue
                producer = defining_op(op.operands[0])
                wrapped = rewriter.wrap([op], GroupKind.POINTWISE)
                rewriter.merge(producer.opview, wrapped, dep)
                sunk = True
        if sunk:  # a reshape's constants, cloned into its group, may be unread outside now
            rewriter.erase_dead_constants(module)
