"""fusion-mark-persistent: reduction groups whose rows fit one block become `persistent-reduction` groups.

The kernel then keeps a row in registers instead of looping over it. Only
the `kind` attribute changes.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.dialect import GroupKind, group_kind, set_group_kind
from mlirfuse.ir import ir
from mlirfuse.ops.reductions import Reduction
from mlirfuse.passes.base import ModulePass
from mlirfuse.passes.legality import FUSION_ANALYSES, group_reduction
from mlirfuse.passes.options import option


@dataclasses.dataclass(frozen=True)
class MarkPersistent(ModulePass):
    """Mark reduction groups whose rows have at most persistent-max elements (default 4096) `persistent-reduction`: one block per row, no loop."""

    name = "fusion-mark-persistent"

    persistent_max: int = option(4096, "longest reduction row kept in registers (a persistent-reduction kernel)")

    preserves = FUSION_ANALYSES

    def apply(self, module: ir.Operation, am=None) -> None:
        def visit(op):
            if op.name == "fusion.group" and group_kind(op) == GroupKind.REDUCTION:
                found = group_reduction(op.opview)
                # (Not one: a malformed group, which the verifier reports after the pass.)
                rnumel = found.rnumel if isinstance(found, Reduction) else None  # None also: a `?` row, looped
                if rnumel is not None and rnumel <= self.persistent_max:
                    set_group_kind(op, GroupKind.PERSISTENT_REDUCTION)
            # A group's body holds torch ops only (groups do not nest): not walked. (MLIR's walk driver, `ops_named`,
            # would enter the bodies: after fusion-fuse-matmul they hold most ops, LSTM-400 5 ms, this walk 0.5.)
            return ir.WalkResult.SKIP if op.name == "fusion.group" else ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.PRE_ORDER)
