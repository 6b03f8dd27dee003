"""Group kinds: what a `fusion.group` / `fusion.kernel` computes, and the one place that reads or writes its `kind`.

The kind is a string attribute in the IR (`kind = "pointwise"`); in Python
it is a `GroupKind`, a `StrEnum` whose values are those strings, so a
member compares, hashes, formats and prints as the string does and a
misspelt member is an `AttributeError`, not a kind nobody matches. Passes,
the lowering and the runtime ask the accessors and the sets below, never a
literal (`tests/test_kinds.py` checks it).
"""

from __future__ import annotations

from enum import StrEnum

from mlirfuse.ir import ir


class GroupKind(StrEnum):
    POINTWISE = "pointwise"  # elementwise ops over one flat iteration space
    REDUCTION = "reduction"  # [XBLOCK, RBLOCK] tiles, a loop over each row
    PERSISTENT_REDUCTION = "persistent-reduction"  # a reduction whose rows fit one block: no loop
    CONCAT = "concat"  # pointwise pieces stored into one `cat` result
    EXTERN = "extern"  # one ATen call reading strided operands, never a Triton kernel
    ATTENTION = "attention"  # flash-attention template
    MATMUL = "matmul"  # tiled GEMM template hosting a prologue and an epilogue
    MATMUL_CHAIN = "matmul-chain"  # two GEMMs back to back, the first's result rows kept on chip as the second's A
    SCATTER = "scatter"  # pointwise, writing into a copy of its input
    SCAN = "scan"  # cumsum/cumprod along one dim with a pointwise prologue and epilogue, [XBLOCK, RBLOCK] tiles
    CONV = "conv"  # implicit-GEMM convolution template hosting a prologue and an epilogue


# Every kind, in the order the verifier lists them.
GROUP_KINDS = tuple(GroupKind)
# Kernels over one flat iteration space (no reduction loop).
POINTWISE_KINDS = (GroupKind.POINTWISE, GroupKind.CONCAT, GroupKind.SCATTER)
REDUCTION_KINDS = (GroupKind.REDUCTION, GroupKind.PERSISTENT_REDUCTION)
# Kinds whose bodies are templates the lowering reads as they are (attention's softmax stays whole).
TEMPLATE_KINDS = (GroupKind.ATTENTION, GroupKind.MATMUL, GroupKind.MATMUL_CHAIN, GroupKind.CONV)
# Kinds the fusion passes grow; the others are finished.
FUSIBLE_KINDS = (GroupKind.POINTWISE, GroupKind.REDUCTION, GroupKind.SCAN)


def kind_attribute(op) -> str | None:
    """`op`'s `kind` as written, None where it has no string `kind` (the verifier's read: it may be unknown)."""
    attr = op.attributes["kind"] if "kind" in op.attributes else None
    return attr.value if isinstance(attr, ir.StringAttr) else None


def has_kind(op) -> bool:
    return "kind" in op.attributes


def group_kind(op) -> GroupKind:
    """The kind of a verified `fusion.group` or `fusion.kernel`."""
    value = ir.StringAttr(op.attributes["kind"]).value
    kind = _BY_VALUE.get(value)
    return kind if kind is not None else GroupKind(value)  # an unknown kind raises as GroupKind(...) does


# `GroupKind(value)` without the Enum machinery: passes ask for kinds hundreds of thousands of times.
_BY_VALUE = {kind.value: kind for kind in GroupKind}


def kind_attr(kind: GroupKind) -> ir.StringAttr:
    return ir.StringAttr.get(GroupKind(kind).value)


def set_group_kind(op, kind: GroupKind) -> None:
    op.attributes["kind"] = kind_attr(kind)


__all__ = [
    "FUSIBLE_KINDS", "GROUP_KINDS", "POINTWISE_KINDS", "REDUCTION_KINDS", "TEMPLATE_KINDS", "GroupKind",
    "group_kind", "has_kind", "kind_attr", "kind_attribute", "set_group_kind",
]
