"""fusion-cost: the cost model's numbers written on the IR (issue 22).

Each `fusion.group` and `fusion.kernel` gets `fusion.cost = {bytes_read,
bytes_written, flops, time_ns}` (one launch; `time_ns` the roofline time on
`target`), and the module, when every step's sizes are static,
`fusion.cost = {bytes, bytes_lower_bound, flops, time_ns,
lower_bound_time_ns}` for one call of its function: launches plus unfused
ATen calls, against what any implementation must move
(`mlirfuse/analysis/cost.py` says what is counted). Nothing else changes;
run it last (`mlirfuse-opt --mlirfuse-pipeline --fusion-cost`).
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis.cost import TARGETS, kernel_cost, program_cost
from mlirfuse.errors import PipelineError
from mlirfuse.ir import ir
from mlirfuse.passes.base import ModulePass
from mlirfuse.passes.legality import FUSION_ANALYSES
from mlirfuse.passes.options import option


def _dict(**values: int) -> ir.Attribute:
    i64 = ir.IntegerType.get_signless(64)
    return ir.DictAttr.get({k: ir.IntegerAttr.get(i64, int(v)) for k, v in values.items()})


@dataclasses.dataclass(frozen=True)
class Cost(ModulePass):
    """Annotate every fusion.group and fusion.kernel, and the module, with bytes read and written, FLOPs and roofline time (`fusion.cost`)."""

    name = "fusion-cost"

    target: str = option("sm_90", "the GPU whose roofline gives time_ns: " + ", ".join(TARGETS))

    # Attributes only: every analysis stays valid.
    preserves = FUSION_ANALYSES

    def apply(self, module: ir.Operation, am=None) -> None:
        if self.target not in TARGETS:
            raise PipelineError(
                f"option 'target' of pass '{self.name}' expects one of {', '.join(TARGETS)}, got '{self.target}'",
                option="target",
            )
        target = TARGETS[self.target]

        def visit(op):
            if op.name in ("fusion.group", "fusion.kernel"):
                cost = kernel_cost(op)
                if cost is not None:
                    op.attributes["fusion.cost"] = _dict(
                        bytes_read=cost.bytes_read, bytes_written=cost.bytes_written, flops=cost.flops,
                        time_ns=round(cost.seconds(target) * 1e9),
                    )
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        total = program_cost(module)
        if total is not None:
            module.attributes["fusion.cost"] = _dict(
                bytes=total.total.bytes, bytes_lower_bound=total.lower_bound_bytes, flops=total.total.flops,
                time_ns=round(total.seconds(self.target) * 1e9),
                lower_bound_time_ns=round(total.lower_bound_seconds(self.target) * 1e9),
            )
