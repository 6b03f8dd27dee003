"""fusion-extern-operands: views read by an unfused op become its strided operands.

An op no group can hold (matmul, linear, conv ...) runs as one ATen call.
The views that only rearrange its operands (`q.view(b, t, h, d).transpose(1, 2)`
before `q @ k.transpose(-2, -1)`) move no data: ATen reads strided
operands. This pass puts such an op and the view chains feeding it into one
`fusion.group {kind = "extern"}`: one extern call whose operands are
addressed through views, as Inductor's extern kernels read
`reinterpret_tensor` arguments. The group is never outlined into a Triton
kernel; the runtime runs its body as ATen calls.

A view also read by something else is cloned into the group (views are
free); the original stays for its other readers.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.dialect import build_group, build_yield
from mlirfuse.elementwise import fusible
from mlirfuse.ir import defining_op, ir, is_constant_like
from mlirfuse.passes.base import ModulePass, clone_ops_into, constant_ops, erase_dead_constants, unique_ops
from mlirfuse.reductions import REDUCTIONS
from mlirfuse.views import VIEW_OPS, view_args


def _extern_candidate(op) -> bool:
    name = op.operation.name
    if not name.startswith(("torch.aten.", "torch.prims.")) or name in VIEW_OPS or name in REDUCTIONS:
        return False
    return not fusible(op)


def _view_chain_ops(value: ir.Value, block: ir.Block) -> list:
    """The view ops (outside groups, constant arguments) that compute `value`, in order."""
    chain = []
    op = defining_op(value)
    while op is not None and op.name in VIEW_OPS and op.block == block and view_args(op) is not None:
        chain.append(op.opview)
        op = defining_op(op.operands[0])
    return list(reversed(chain))


def group_extern(op) -> bool:
    """Wrap `op` and the view chains feeding it into an extern group; False if no operand is a view."""
    block = op.operation.block
    chains = [_view_chain_ops(v, block) for v in op.operands]
    if not any(chains):
        return False
    views = [v for chain in chains for v in chain]
    members = unique_ops([*views, op])  # a view feeding two operands is one member
    member_results = {r for m in members for r in m.results}
    inputs = []
    for m in members:
        for v in m.operands:
            if v not in member_results and not is_constant_like(v) and v not in inputs:
                inputs.append(v)
    group = build_group(inputs, [r.type for r in op.results], kind="extern", loc=op.location, ip=ir.InsertionPoint(op))
    body = group.regions[0].blocks[0]
    mapping = dict(zip(inputs, body.arguments))
    constants = unique_ops([c for m in members for c in constant_ops(m)])
    clone_ops_into(constants + members, body, mapping)
    build_yield([mapping[r] for r in op.results], ip=ir.InsertionPoint(body))
    for old, new in zip(op.results, group.results):
        old.replace_all_uses_with(new)
    op.operation.erase()
    # Erase the originals nobody else reads, each once: a view feeding two
    # operands appears in two chains, and touching an erased op is a use-after-free.
    for view in reversed(unique_ops(views)):
        if not any(list(r.uses) for r in view.results):
            view.operation.erase()
    return True


@dataclasses.dataclass(frozen=True)
class ExternOperands(ModulePass):
    """Put each unfused op (matmul, linear, ...) together with the view chains feeding it into a fusion.group of kind extern: one ATen call reading strided operands, no copies."""

    name = "fusion-extern-operands"

    def apply(self, module: ir.Operation, am=None) -> None:
        for func in module.regions[0].blocks[0].operations:
            if func.operation.name != "func.func":
                continue
            for op in list(func.regions[0].blocks[0].operations):
                if _extern_candidate(op):
                    group_extern(op)
        erase_dead_constants(module)


__all__ = ["ExternOperands", "group_extern"]
