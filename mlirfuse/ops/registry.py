"""The op families, gathered: the one place that answers "which family does this op belong to?".

The frontend keeps `NATIVE_OPS` whole (never decomposes them);
fusion-fuse-vertical starts a group with an op of `FUSED` when its family's
`why_not` allows it, and erases `PURE_OPS` nobody reads.
"""

from __future__ import annotations

from mlirfuse.ops import attention, conv, elementwise, indexing, matmul, pooling, reductions, scans, views
from mlirfuse.ops.family import Family

FAMILIES: tuple[Family, ...] = (
    elementwise.FAMILY, reductions.FAMILY, scans.FAMILY, indexing.FAMILY, pooling.FAMILY, views.FAMILY, matmul.FAMILY,
    conv.FAMILY, attention.FAMILY,
)
BY_NAME = {f.name: f for f in FAMILIES}
# torch-mlir names of the ops some family handles whole.
NATIVE_OPS = frozenset().union(*(f.ops for f in FAMILIES))
# op name -> the family whose group it starts (each such op is one family's: tests/test_ops_registry.py).
FUSED = {name: f for f in FAMILIES for name in f.fused}
PURE_OPS = frozenset().union(*(f.pure for f in FAMILIES))


def fusing_family(op) -> Family | None:
    """The family that says whether `op` starts a group, or None.

    An op torch-mlir does not define (`torch.operator "aten.foo"`) is
    elementwise's to judge, by the name it carries.
    """
    name = op.operation.name
    return elementwise.FAMILY if name == "torch.operator" else FUSED.get(name)


__all__ = ["BY_NAME", "FAMILIES", "FUSED", "Family", "NATIVE_OPS", "PURE_OPS", "fusing_family"]
