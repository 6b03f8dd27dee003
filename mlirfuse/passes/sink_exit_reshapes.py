"""fusion-sink-exit-reshapes: a reshape of a group's result read outside any group joins the group.

The kernel stores the value in row-major order (a reduction group: over the
full space, or one element per row); the reshaped result is that buffer with
the new shape, so the reshape costs nothing. Runs after fusion: a group
whose result is reshaped can no longer merge with the reshape's readers (a
view of a computed value).
"""

from __future__ import annotations

import dataclasses

from mlirfuse.dialect import GroupKind
from mlirfuse.ir import defining_op, ir
from mlirfuse.ops.views import RESHAPES, view_args
from mlirfuse.passes.base import ModulePass, function_ops
from mlirfuse.passes.legality import FUSION_ANALYSES, fusion_rewriter, is_fusible_group


@dataclasses.dataclass(frozen=True)
class SinkExitReshapes(ModulePass):
    """Move a row-major reshape (view, reshape, squeeze, unsqueeze, flatten ...) of a pointwise or reduction group's result into the group, which stores the result in the new shape."""

    name = "fusion-sink-exit-reshapes"

    preserves = FUSION_ANALYSES

    def apply(self, module: ir.Operation, am=None) -> None:
        rewriter, dep = fusion_rewriter(module, am)
        for ops in function_ops(module):
            for op in ops:
                if op.operation.name not in RESHAPES or view_args(op) is None or not list(op.results[0].uses):
                    continue
                producer = defining_op(op.operands[0])
                if not is_fusible_group(producer):
                    continue
                if len(list(op.operands[0].uses)) > 1:
                    # Read unreshaped too: the group would store the value twice (the cost model's bytes);
                    # outside, the reshape is a view of the one stored buffer, free.
                    continue
                wrapped = rewriter.wrap([op], GroupKind.POINTWISE)
                rewriter.merge(producer.opview, wrapped, dep)
        rewriter.erase_dead_constants(module)
