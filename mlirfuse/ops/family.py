"""`Family`: what one op family tells the rest of the compiler, as one record.

Each family module (elementwise, reductions, indexing, pooling, views,
matmul, attention) exports one `FAMILY`; `mlirfuse.ops.registry` gathers
them, and the frontend (what never to decompose) and fusion-fuse-vertical
(which ops start a group, which dead ones it may erase) ask the registry
rather than the modules one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


def _always(op) -> str | None:
    return None


def refusal(plan: Callable[[object], object]) -> Callable[[object], str | None]:
    """A family's `why_not` from its planner, which returns a plan or the reason (a string) it has none."""

    def why_not(op) -> str | None:
        found = plan(op)
        return found if isinstance(found, str) else None

    return why_not


@dataclass(frozen=True)
class Family:
    # The family module's `__name__` (mlirfuse.ops.matmul); `name` is its last part.
    module: str
    # Every torch op the family handles whole (by torch-mlir name): the frontend never decomposes them.
    ops: frozenset[str]
    # None if `op` (one of `fused`, or a root of the family's template) may be fused; else the reason, for reports.
    why_not: Callable[[object], str | None] = _always
    # The ops fusion-fuse-vertical starts a group with (templates have their own passes; views join a consumer).
    fused: frozenset[str] = frozenset()
    # The ops without side effects fusion-fuse-vertical erases when nothing reads them.
    pure: frozenset[str] = frozenset()
    # The module that prints the family's Triton.
    lowering: str = ""
    # What the family leaves to ATen, in words (`why_not` says it op by op).
    limits: str = ""

    @property
    def name(self) -> str:
        """The family's name, its module's: "matmul", "attention" (never written as a string, which
        would read as a group kind)."""
        return self.module.rpartition(".")[2]


__all__ = ["Family", "refusal"]
