"""fusion-functionalize: in-place ops on private copies become value-semantic ops.

torch-mlir spells mutation with non-value tensors: `torch.copy.to_tensor %x`
makes storage holding %x, in-place ops (`torch.aten.add_.Tensor`,
`torch.aten.relu_` ...) and `torch.overwrite.tensor.contents` write it, and
`torch.copy.to_vtensor` reads it back as a value. Fusion only groups
value-semantic ops, so storage nothing else can observe is replaced by the
values it holds over time: an in-place op becomes its functional form
applied to the value held before it, an overwrite makes its operand the
held value, and each read becomes the value held at that point (reads
before the first write get %x itself).

Only where the alias analysis proves it safe: the storage is a fresh copy
(not the caller's: a function argument is left alone), no view names it
(its class holds the copy and the in-place results only), every op writing
it is an in-place op torch-mlir has a functional form of or an overwrite,
and every other use is a `copy.to_vtensor` read in the same block whose
type matches the value it becomes. Anything else stays exactly as it was;
on value-semantic IR (what torch.export produces) there is nothing to do.
"""

from __future__ import annotations

import dataclasses
import functools

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.alias import AliasAnalysis, is_inplace
from mlirfuse.analysis.values import is_non_value_tensor, value_key
from mlirfuse.ir import ir, op_id
from mlirfuse.passes.base import ModulePass, function_level_ops
from mlirfuse.passes.rewriter import FusionRewriter

# What a plan starts from: a copy of a value-semantic tensor into a fresh, mutable one.
_COPIES = frozenset(("torch.copy.to_tensor",))

READ, WRITE, OVERWRITE = "read", "write", "overwrite"


def _functional_name(op) -> str | None:
    """`torch.aten.add.Tensor` for `torch.aten.add_.Tensor`, if torch-mlir has it."""
    name = op.operation.name
    if not is_inplace(name):
        return None
    parts = name.split(".")
    parts[2] = parts[2][:-1]
    functional = ".".join(parts)
    return functional if op.context.is_registered_operation(functional) else None


def _value_type(t: ir.Type) -> ir.Type:
    """`!torch.tensor<[4],f32>` -> `!torch.vtensor<[4],f32>`."""
    return ir.Type.parse(str(t).replace("!torch.tensor", "!torch.vtensor", 1))


def _write(writer, position: int) -> str | None:
    """How `writer` writes the storage it gets as operand #`position`, if values can say it."""
    if writer.operation.name == "torch.overwrite.tensor.contents" and position == 1:
        return OVERWRITE
    if position == 0 and _functional_name(writer) is not None:
        return WRITE
    return None


def _before(a, b) -> int:
    return -1 if a[0].operation.is_before_in_block(b[0].operation) else 1


def plan(copy, alias: AliasAnalysis) -> list[tuple[object, str]] | None:
    """The ops using the storage `copy` makes, in order, with what each does; None unless it is safe to functionalize.

    The analysis says who writes the storage and which values name it; the
    use lists say who reads it.
    """
    storage = copy.results[0]
    writers = alias.writers(storage)
    block = copy.operation.block
    steps, names = [], [storage]
    for name in names:  # grows: an in-place op returns the storage it wrote
        for use in name.uses:
            user = use.owner
            if op_id(user) in writers:
                step = _write(user, use.operand_number)
            else:
                step = READ if user.operation.name == "torch.copy.to_vtensor" else None
            if step is None or user.operation.block != block:
                return None
            steps.append((user, step))
            if step == WRITE:
                names.append(user.results[0])
    if {value_key(v) for v in names} != set(alias.aliases(storage)):
        return None  # another name (a view) shares the storage
    if {op_id(op) for op, step in steps if step != READ} != writers:
        return None  # a writer that does not use it directly (inside a region)
    steps.sort(key=functools.cmp_to_key(_before))
    return steps if _types_agree(copy, steps) else None


def _types_agree(copy, steps) -> bool:
    """Each read's result has the type of the value it will be replaced by."""
    held = copy.operands[0].type
    for op, step in steps:
        if step == READ and op.results[0].type != held:
            return False
        if step == WRITE:
            held = _value_type(op.results[0].type)
        elif step == OVERWRITE:
            held = op.operands[0].type
    return True


def functionalize(copy, steps, rewriter: FusionRewriter) -> None:
    """Replace the storage by the values it holds."""
    held = copy.operands[0]
    for op, step in steps:
        if step == READ:
            rewriter.replace_uses(op.results[0], held)
        elif step == OVERWRITE:
            held = op.operands[0]
        else:
            held = _functional_op(op, held, rewriter).results[0]
    for op, _ in reversed(steps):  # later ops first: they read the earlier ones' results
        rewriter.erase(op)
    rewriter.erase(copy)


def _functional_op(op, held: ir.Value, rewriter: FusionRewriter):
    """`op`'s functional form on `held`, before `op`; other non-value operands are read as they are there."""
    operands = [held]
    for v in list(op.operands)[1:]:
        if is_non_value_tensor(v.type):
            read = ir.Operation.create("torch.copy.to_vtensor", results=[_value_type(v.type)], operands=[v], loc=op.location)
            v = rewriter.insert_before(read, op).results[0]
        operands.append(v)
    new = ir.Operation.create(
        _functional_name(op), results=[_value_type(op.results[0].type)], operands=operands, loc=op.location
    )
    return rewriter.insert_before(new, op)


@dataclasses.dataclass(frozen=True)
class Functionalize(ModulePass):
    """Rewrite in-place ops on fresh copies nothing else sees (no view, not a function argument) to value-semantic ops; whatever the alias analysis cannot prove safe is left alone."""

    name = "fusion-functionalize"

    preserves = (AliasAnalysis,)

    def apply(self, module: ir.Operation, am=None) -> None:
        am = am or AnalysisManager()
        alias = None  # asked for at the first copy: value-semantic IR (what torch.export produces) has none
        rewriter = FusionRewriter(am)
        # Functionalizing one storage turns its reads of another into copy.to_vtensor
        # reads, which may make that one safe: repeat until nothing changes.
        changed = True
        while changed:
            changed = False
            for copies in function_level_ops(module, _COPIES):
                for copy in [op.opview for op in copies]:
                    alias = alias or am.get(AliasAnalysis, module)
                    steps = plan(copy, alias)
                    if steps is not None:
                        functionalize(copy, steps, rewriter)
                        changed = True
