"""When two GEMM groups may become one back-to-back kernel (kind "matmul-chain"): the check `fusion-fuse-matmul` and `fusion-explain-unfused` share.

The first GEMM's result, after its epilogue (bias, activation, casts), must
be the second GEMM's A operand as it is and nothing else: then the kernel
computes each block of rows of it once, on chip, and multiplies it by the
second weight without writing it. Its rows (the hidden size, padded to a
power of two) must fit on chip beside the second accumulator
(`chain_max_hidden`, per operand dtype). `why_not_chain` returns None when
the merge is legal, otherwise the reason in words, as `legality` does.
"""

from __future__ import annotations

from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.dialect import GroupKind, group_kind
from mlirfuse.ir import defining_op
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, chain_max_hidden, gemm, hidden_block
from mlirfuse.ops.views import CAT, RESHAPES, VIEW_OPS, relayout_op, walk_views
from mlirfuse.passes.base import body_ops
from mlirfuse.passes.legality import why_not_merge
from mlirfuse.passes.options import Limits


def _only_gemm(ops: list):
    """(the matmul op, its Gemm) of a group whose body ops are `ops` holding exactly one GEMM, else None."""
    mms = [op for op in ops if op.operation.name in MATMUL_OPS]
    g = gemm(mms[0]) if len(mms) == 1 else None
    return (mms[0], g) if isinstance(g, Gemm) else None


def why_not_chain(first, second, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """None if matmul group `first` (its result the intermediate) may run back to back with matmul group `second` in one kernel; otherwise why not."""
    if group_kind(first) != GroupKind.MATMUL or group_kind(second) != GroupKind.MATMUL:
        return "only two GEMM groups chain (a matmul-chain kernel takes no third)"
    # Each body listed once (an OpView per op): read by the GEMM, cat and stored-layout checks.
    bodies = [body_ops(first), body_ops(second)]
    one, two = _only_gemm(bodies[0][0]), _only_gemm(bodies[1][0])
    if one is None or two is None:
        return "a grouped GEMM does not chain (one accumulator per GEMM on chip)"
    (_, g1), (mm2, g2) = one, two
    if any(op.operation.name == CAT for ops, _ in bodies for op in ops):
        return "a GEMM reads a cat piece by piece (K-split: the back-to-back template reads its operands whole)"
    if g1.batch != g2.batch or g1.out[: g1.batch] != g2.out[: g2.batch]:
        return "the GEMMs' batch dims differ (a chain's programs own rows of one batch index)"
    if len(first.results) != 1 or any(u.owner.operation != second.operation for u in first.results[0].uses):
        return "the first GEMM's result is also read elsewhere (it must be written)"
    stored = defining_op(bodies[0][1].operands[0])
    if stored is not None and stored.name in VIEW_OPS:
        return f"the first GEMM stores a '{stored.name}' of its result (a chain keeps the result itself on chip)"
    for group, (_, terminator) in zip((first, second), bodies):
        body = group.regions[0].blocks[0]
        if any(op.operation.name not in RESHAPES for v in terminator.operands
               for op in walk_views(v, body, through=relayout_op)[1]):
            return "a GEMM stores a result in another layout (a permuted copy; a chain stores tiles where they are)"
    block = second.regions[0].blocks[0]
    for arg, v in zip(block.arguments, second.operands):
        if v != first.results[0]:
            continue
        for use in arg.uses:
            if use.owner.operation != mm2.operation or use.operand_number != g2.a:
                role = "B operand" if use.owner.operation == mm2.operation else f"'{use.owner.operation.name}'"
                return f"the intermediate is read by the second GEMM's {role} (a chain feeds it to the GEMM as its A only)"
    if g1.dynamic or g2.dynamic:
        return "a GEMM over `?` rows (the back-to-back template is static)"
    if g1.out != g2.a_space():
        return "the second GEMM's rows are not the first's"
    hidden, most = hidden_block(g1.n), min(chain_max_hidden(g1.dtype), chain_max_hidden(g2.dtype))
    if hidden > most:
        return f"hidden size {g1.n} (a block of {hidden}) > {most} for {g2.dtype} (its rows would not fit on chip)"
    return why_not_merge(first, second, dep, limits)


__all__ = ["why_not_chain"]
