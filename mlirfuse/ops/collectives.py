"""torch.distributed's functional collectives, as the FX importer spells them (`torch.operator`).

A tensor-parallel graph issues a collective (`all_reduce` and its kin
return a tensor the collective is still writing) and waits for it
(`wait_tensor` returns that tensor, complete). mlirfuse never fuses them:
they run as ATen calls, and fusion-schedule-collectives moves each issue as
early and each wait as late as the values allow.
"""

from __future__ import annotations

_NAMESPACE = "torch._c10d_functional."

# Ops that start a collective and return its (not yet complete) result.
ISSUES = frozenset(
    _NAMESPACE + name
    for name in (
        "all_reduce", "all_reduce_coalesced", "all_gather_into_tensor", "all_gather_into_tensor_coalesced",
        "reduce_scatter_tensor", "reduce_scatter_tensor_coalesced", "all_to_all_single", "broadcast",
    )
)
# The op that waits for a collective's result.
WAIT = _NAMESPACE + "wait_tensor"

__all__ = ["ISSUES", "WAIT"]
