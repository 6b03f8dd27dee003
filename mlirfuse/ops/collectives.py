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



def overlap(steps: list[tuple[str, str]]) -> tuple[dict[str, int], int]:
    """For a program's (kind, op name) steps in order: the collectives issued, by name, and how many launches
    run while at least one of them is in flight (issued, not yet waited)."""
    issued: dict[str, int] = {}
    pending = overlapped = 0
    for kind, name in steps:
        if name in ISSUES:
            short = name.removeprefix(_NAMESPACE)
            issued[short] = issued.get(short, 0) + 1
            pending += 1
        elif name == WAIT:
            pending = max(pending - 1, 0)
        elif kind == "launch" and pending:
            overlapped += 1
    return issued, overlapped


__all__ = ["ISSUES", "WAIT", "overlap"]
