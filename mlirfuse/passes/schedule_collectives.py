"""fusion-schedule-collectives: each collective issued as early as its operands allow, waited as late as its result's first use.

A tensor-parallel graph as Dynamo traces it issues a collective and waits
for it at once (`all_reduce` then `wait_tensor`), so nothing overlaps the
communication. This pass moves, in each function body, every issue
(ops/collectives.ISSUES) up to just after the last op defining one of its
operands, and every wait down to just before the first op reading its
result; the kernels and ATen calls that depend on neither now run between
them (Inductor's reordering for compute/communication overlap does the
same). Collectives keep their order among themselves (each issue stays
after the one before it, each wait before the one after it), so every rank
issues them in one order. Nothing else moves; run it last, after
fusion-outline, so groups are whole.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.ir import ir, torch_name
from mlirfuse.ops.collectives import ISSUES, WAIT
from mlirfuse.passes.base import ModulePass, function_level_ops

# The ops collectives are (ISSUES, WAIT: ops torch-mlir does not define).
_OPERATORS = frozenset(("torch.operator",))


def _in_block(op, block) -> ir.Operation | None:
    """`op`, or its ancestor whose block is `block` (a use inside a group's region); None if outside."""
    op = op.operation
    while op is not None and op.block != block:
        op = op.parent
        op = None if op is None or op.name == "builtin.module" else op
    return op


def schedule(block: ir.Block) -> int:
    """Reorder `block`'s ops as the module docstring says; how many collectives moved."""
    ops = [op.operation for op in block.operations]
    terminator, order = ops[-1], ops[:-1]
    before = list(order)
    issues = [op for op in order if op.name == "torch.operator" and torch_name(op) in ISSUES]
    waits = [op for op in order if op.name == "torch.operator" and torch_name(op) == WAIT]
    previous = None
    for op in issues:
        order.remove(op)
        where = {o: i for i, o in enumerate(order)}
        anchors = [_in_block(v.owner, block) for v in op.operands if isinstance(v.owner, (ir.Operation, ir.OpView))]
        anchors = [where[a] for a in anchors if a is not None and a in where]
        if previous is not None:
            anchors.append(where[previous])
        order.insert(max(anchors, default=-1) + 1, op)
        previous = op
    following = None
    for op in reversed(waits):
        order.remove(op)
        where = {o: i for i, o in enumerate(order)}
        readers = [_in_block(use.owner, block) for r in op.results for use in r.uses]
        limits = [where[r] for r in readers if r is not None and r in where]
        limits += [len(order)] if any(r == terminator for r in readers) else []
        if following is not None:
            limits.append(where[following])
        position = min(limits, default=len(order))
        order.insert(position, op)
        following = op
    _pull_independent_work(order, block, set(issues) | set(waits))
    if order == before:
        return 0
    for op in order:
        op.move_before(terminator)
    return sum(1 for a, b in zip(order, before) if a != b and (a in issues or a in waits))


def _pull_independent_work(order: list, block, collectives: set) -> None:
    """Move the ops after each wait that do not read its result (directly or through each other) in front of it.

    Only ops up to the next collective move (collectives keep their places among the rest): the first reader
    of a wait's result and everything computed from it stay after the wait, the rest now overlaps the collective.
    """
    for wait in [op for op in order if op in collectives and torch_name(op) == WAIT]:
        start = order.index(wait) + 1
        end = start
        while end < len(order) and order[end] not in collectives:
            end += 1
        dependent = {wait}
        independent, after = [], []
        for op in order[start:end]:
            reads = {_in_block(v.owner, block) for v in _operands(op) if isinstance(v.owner, (ir.Operation, ir.OpView))}
            if reads & dependent:
                dependent.add(op)
                after.append(op)
            else:
                independent.append(op)
        if independent:
            order[start - 1:end] = [*independent, wait, *after]


def _operands(op) -> list:
    """The values `op` reads, inside its regions too (a group's body may read values defined outside it)."""
    values = list(op.operands)
    for region in op.regions:
        for inner_block in region.blocks:
            for inner in inner_block.operations:
                values.extend(_operands(inner.operation))
    return values


@dataclasses.dataclass(frozen=True)
class ScheduleCollectives(ModulePass):
    """Issue each functional collective as early as its operands allow and wait for it as late as its first reader, so independent work runs between them."""

    name = "fusion-schedule-collectives"

    def apply(self, module: ir.Operation, am=None) -> None:
        if not any(function_level_ops(module, _OPERATORS)):
            return  # no collective (a `torch.operator`) to move: the functions are not listed op by op
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name == "func.func" and len(op.regions[0].blocks):
                schedule(op.regions[0].blocks[0])
