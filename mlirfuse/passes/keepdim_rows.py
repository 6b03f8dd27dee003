"""fusion-keepdim-rows: values computed per reduced row take the reduction's keepdim shape.

A training-mode batch norm computes per channel in two shapes: its mean and
variance as keepdim reductions (`[1, C, 1, 1]`), the running-stat updates
(`0.9 * running_mean + 0.1 * squeeze(mean)`) and the backward's per-channel
terms (`sum(g, [0, 2, 3]) * rstd`) on `[C]`, unsqueezed again where they
meet the full tensor. A `[C]` value does not broadcast into `[N, C, H, W]`,
so those ops could not join the reduction's kernel; each was a kernel of
its own. Here they are computed in the keepdim shape instead:

1. a reduction without keepdim that an elementwise op (or a unit-dims
   reshape) reads is the keepdim reduction and a view of it;
2. an elementwise op whose result is an operand's source with unit dims
   dropped (`squeeze(mean) * 0.1`) is computed in the source's shape, its
   other operands viewed to match (a broadcast `[C]` becomes `[1, C, 1, 1]`),
   and viewed back;
3. a reshape of a reshape, both only adding or dropping unit dims, is one
   view of the first's operand, or that operand itself where the shapes agree.

A value read in the smaller shape (a function result, an ATen op's operand)
is a view of the keepdim one: the same bytes, no copy. Rules 2 and 3 apply
only to a reduction's per-row values (computed from a reduction's result by
elementwise ops and unit-dims reshapes) and to values an elementwise op
combines with one (`running_mean * 0.9`): other chains (a padding mask built
from an arange) keep their shapes, which the fusion passes group better.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.ir import TorchBuilder, constant_value, defining_op, ir, parent_name, tensor_type
from mlirfuse.ops.elementwise import RULES
from mlirfuse.ops.reductions import REDUCTIONS, Reduction, reduction
from mlirfuse.ops.views import RESHAPES, view_args
from mlirfuse.passes.base import ModulePass, apply_patterns, function_level_ops, pattern


def _unit_reshape(source, result) -> bool:
    """Do static shapes `source` and `result` differ only in dims of size 1 (a view keeping every element in place)?"""
    return [d for d in source if d != 1] == [d for d in result if d != 1]


def _static_shape(value: ir.Value) -> tuple | None:
    t = tensor_type(value.type)
    return tuple(t.shape) if t is not None and t.is_static else None


def _unit_reshape_op(op) -> bool:
    """Is `op` a reshape with constant arguments that only adds or drops dims of size 1?"""
    if op is None or op.name not in RESHAPES or view_args(op) is None:
        return False
    source, result = _static_shape(op.operands[0]), _static_shape(op.results[0])
    return source is not None and result is not None and _unit_reshape(source, result)


def _unit_source(value: ir.Value, shape: tuple) -> ir.Value | None:
    """The value with the most dims that unit-dims reshapes lead from to `value` (of `shape`), if it has more dims."""
    best = None
    op = defining_op(value)
    while _unit_reshape_op(op):
        value = op.operands[0]
        if len(_static_shape(value)) > len(shape if best is None else _static_shape(best)):
            best = value
        op = defining_op(value)
    return best


def _from_reduction(value: ir.Value, depth: int = 8) -> bool:
    """Is `value` a reduction's result, or computed from one by elementwise ops and unit-dims reshapes (`depth`
    ops up at most)? Only such values are a reduction's per-row values: other chains (a mask built from an
    arange) keep their shapes, which the fusion passes group as they are."""
    op = defining_op(value)
    if op is None or depth == 0:
        return False
    if op.name in REDUCTIONS:
        return True
    if op.name not in RULES and not _unit_reshape_op(op):
        return False
    return any(tensor_type(v.type) is not None and _from_reduction(v, depth - 1) for v in op.operands)


def _meets_reduction(value: ir.Value) -> bool:
    """Is `value` read by an elementwise op (directly or through one unit-dims reshape) beside a reduction's
    per-row value: `running_mean * 0.9`, added to `squeeze(mean) * 0.1`?"""
    for use in value.uses:
        reader = use.owner
        if _unit_reshape_op(reader):
            if any(_meets_reduction_at(u.owner, reader.results[0]) for u in reader.results[0].uses):
                return True
        elif _meets_reduction_at(reader, value):
            return True
    return False


def _meets_reduction_at(reader, value: ir.Value) -> bool:
    return reader.name in RULES and any(v != value and tensor_type(v.type) is not None and _from_reduction(v)
                                        for v in reader.operands)


def _in_rows(shape: tuple, result: tuple, rows: tuple) -> tuple:
    """Where an operand of shape `shape`, broadcast into `result`, sits once `result` is laid out as `rows`.

    `result`'s dims of size above 1 map in order onto `rows`'; an operand
    broadcasts along dims of size 1 only, so it has 1 wherever `result` has.
    """
    padded = (1,) * (len(result) - len(shape)) + tuple(shape)
    placed = [1] * len(rows)
    for j, k in zip((j for j, d in enumerate(result) if d != 1), (k for k, d in enumerate(rows) if d != 1)):
        placed[k] = padded[j]
    return tuple(placed)


@pattern
def keepdim_reduction(op, rewriter) -> bool:
    """A reduction without keepdim that an elementwise op or a unit-dims reshape reads: the keepdim reduction,
    viewed to the old shape."""
    _, _, keep_at = REDUCTIONS[op.operation.name]
    if keep_at is None or constant_value(op.operands[keep_at]) is True:
        return False  # kept already (a layer norm's statistics), or never: the reduction is not asked for
    found = reduction(op)
    if parent_name(op) != "func.func" or not isinstance(found, Reduction) or found.keepdim or not found.dims:
        return False
    result = _static_shape(op.results[0])
    if not result or _static_shape(op.operands[0]) is None:
        return False  # a full reduction's 0-d value broadcasts anywhere already
    if not any(u.owner.name in RULES or _unit_reshape_op(u.owner) for u in op.results[0].uses):
        return False
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    operands = list(op.operands)
    operands[keep_at] = b.bool(True)
    kept = b.op(op.operation.name, operands, found.keepdim_shape, found.dtype)
    rewriter.replace_op(op, [b.view(kept, result, found.dtype)])
    return True


def _read_in_rows(op, result: tuple) -> tuple | None:
    """The one shape with more dims, holding the same elements, that every reader of `op` views it to; else None."""
    shapes = set()
    for use in op.results[0].uses:
        reader = use.owner
        if not _unit_reshape_op(reader):
            return None
        if list(reader.results[0].uses):  # (a dead view, left by a rewrite here, reads nothing)
            shapes.add(_static_shape(reader.results[0]))
    if len(shapes) != 1:
        return None
    rows = shapes.pop()
    return rows if len(rows) > len(result) else None


def _beside_reshape(op) -> bool:
    """Does a reshape define one of `op`'s operands, or read its result, as every reader does? What the shape with
    more dims `elementwise_in_rows` computes in comes from (`_unit_source`, `_read_in_rows`)."""
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, ir.OpView) and owner.operation.name in RESHAPES:
            return True
    readers = [use.owner.name for use in op.results[0].uses]
    return bool(readers) and all(name in RESHAPES for name in readers)


@pattern
def elementwise_in_rows(op, rewriter) -> bool:
    """An elementwise op on a unit-dims squeeze of a value, or read only through one unit-dims unsqueeze: computed
    in the shape with more dims, then viewed back."""
    if len(op.results) != 1 or parent_name(op) != "func.func":
        return False  # groups are made after this pass; an op inside one is left alone
    if not _beside_reshape(op):
        return False  # (most elementwise ops: asked by name alone)
    result = _static_shape(op.results[0])
    if not result:
        return False
    tensors = [k for k, v in enumerate(op.operands) if tensor_type(v.type) is not None]
    sources = {k: _unit_source(op.operands[k], result) for k in tensors
               if _static_shape(op.operands[k]) == result}
    rows = next((_static_shape(s) for s in sources.values() if s is not None), None) or _read_in_rows(op, result)
    if rows is None or any(_static_shape(op.operands[k]) is None for k in tensors):
        return False
    if not any(_from_reduction(op.operands[k]) for k in tensors) and not _meets_reduction(op.results[0]):
        return False  # not a reduction's per-row value, nor computed to meet one
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    operands = list(op.operands)
    for k in tensors:
        shape = _static_shape(operands[k])
        placed = _in_rows(shape, result, rows)
        if sources.get(k) is not None and _static_shape(sources[k]) == placed:
            operands[k] = sources[k]
        elif shape and placed != shape:
            operands[k] = b.view(operands[k], placed, tensor_type(operands[k].type).dtype)
    dtype = tensor_type(op.results[0].type).dtype
    computed = b.op(op.operation.name, operands, rows, dtype)
    squeezed = []  # each view once: `x * x` reads one twice, and an erased op must not be touched again
    for k in sources:
        if sources[k] is not None and not any(op.operands[k] == v for v in squeezed):
            squeezed.append(op.operands[k])
    replaced = [defining_op(v) for v in squeezed]
    rewriter.replace_op(op, [b.view(computed, result, dtype)])
    for view in replaced:
        _erase_if_dead(view, rewriter)
    return True


@pattern
def fold_unit_reshapes(op, rewriter) -> bool:
    """reshape(reshape(x)), both moving unit dims only: one view of x, or x where the shapes agree."""
    inner = defining_op(op.operands[0])
    if parent_name(op) != "func.func" or not _unit_reshape_op(inner) or not _unit_reshape_op(op):
        return False
    x, result = inner.operands[0], _static_shape(op.results[0])
    if not _from_reduction(x) and not _meets_reduction(op.results[0]):
        return False
    if _static_shape(x) != result:
        x = TorchBuilder(ir.InsertionPoint(op), op.location).view(x, result, tensor_type(x.type).dtype)
    rewriter.replace_op(op, [x])
    _erase_if_dead(inner, rewriter)
    return True


def _erase_if_dead(op, rewriter) -> None:
    """Erase unit-dims view `op`, and the ones it reads, once nothing reads them (the greedy driver leaves
    torch ops it cannot prove pure)."""
    while _unit_reshape_op(op) and not list(op.results[0].uses):
        above = defining_op(op.operands[0])
        rewriter.erase_op(op)
        op = above


_REDUCTIONS = frozenset(REDUCTIONS)
_REDUCTIONS_AND_RESHAPES = _REDUCTIONS | frozenset(RESHAPES)


def _may_match(module: ir.Operation) -> bool:
    """Does a pattern's first question hold at some function-level op? A reduction not kept (`keepdim_reduction`);
    beside a function-level reduction (what the other rules need: `_from_reduction`, `_meets_reduction`), an
    elementwise op reading a reshape or read by one (`elementwise_in_rows`' `_beside_reshape`) or a reshape of a
    reshape (`fold_unit_reshapes`). Where none does no pattern matches, nor later, as nothing is rewritten.

    Asked of the reductions and reshapes (MLIR's walk driver finds them), not of each elementwise op: GPT-32
    has 544 of those, 32 reshapes and 128 reductions, all kept (a layer norm's statistics).
    """
    reduced = beside = False
    for ops in function_level_ops(module, _REDUCTIONS_AND_RESHAPES):
        for op in ops:
            name = op.name
            if name in _REDUCTIONS:
                reduced = True
                keep_at = REDUCTIONS[name][2]
                if keep_at is not None and constant_value(op.operands[keep_at]) is not True:
                    return True
            elif not beside:
                beside = _beside_elementwise_or_reshape(op)
    return reduced and beside


def _beside_elementwise_or_reshape(reshape) -> bool:
    """Does an elementwise op or a reshape define an operand of `reshape`, or an elementwise op read its result?"""
    for v in reshape.operands:
        owner = v.owner
        if isinstance(owner, ir.OpView) and (owner.operation.name in RULES or owner.operation.name in RESHAPES):
            return True
    return any(use.owner.name in RULES for use in reshape.results[0].uses)


PATTERNS = [
    *((name, keepdim_reduction) for name in REDUCTIONS),
    *((name, elementwise_in_rows) for name in RULES),
    *((name, fold_unit_reshapes) for name in RESHAPES),
]


@dataclasses.dataclass(frozen=True)
class KeepdimRows(ModulePass):
    """Compute per-row values of a reduction in its keepdim shape, so they join its kernel.

    A reduction without keepdim read by an elementwise op becomes the keepdim
    reduction and a view; an elementwise op on a unit-dims squeeze of a value
    is computed in that value's shape and viewed back; chains of unit-dims
    reshapes fold into one view. Static shapes only.
    """

    name = "fusion-keepdim-rows"

    def apply(self, module: ir.Operation, am=None) -> None:
        # No pattern callback per elementwise op where none can match (an unrolled RNN, a GPT stack).
        if _may_match(module):
            apply_patterns(module, PATTERNS)
