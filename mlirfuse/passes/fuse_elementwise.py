"""fusion-fuse-elementwise: maximal producer->consumer groups of elementwise ops.

Two patterns reach the fixpoint together:

1. `wrap_elementwise` puts each fusible torch op (see `mlirfuse.elementwise`)
   alone into a `fusion.group`, with the constants it reads cloned inside.
2. `merge_producer` merges a group into a consumer group. A producer result
   that is also used outside the consumer becomes an extra result of the
   merged group. A merge is refused when it would create a cycle (another
   path runs from the producer to the consumer through an op outside both)
   or when an exported result's shape differs from the consumer's iteration
   space (the kernel writes every result over one iteration space).

Ops that cannot be fused are never touched.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.dialect import build_group, build_yield
from mlirfuse.elementwise import fusible, is_tensor
from mlirfuse.elementwise import RULES
from mlirfuse.ir import defining_op, ir, is_constant, parent_name, result_index, tensor_type
from mlirfuse.passes.base import ModulePass, apply_patterns, body_ops, clone_ops_into, pattern


@pattern
def wrap_elementwise(op, rewriter) -> bool:
    """A lone fusible op becomes a one-op pointwise group."""
    if parent_name(op) in ("fusion.group", "fusion.kernel") or not fusible(op):
        return False
    inputs = []
    for v in op.operands:
        if not is_constant(v) and v not in inputs:
            inputs.append(v)
    group = build_group(inputs, [r.type for r in op.results], loc=op.location, ip=ir.InsertionPoint(op))
    block = group.regions[0].blocks[0]
    mapping = dict(zip(inputs, block.arguments))
    constants = [v.owner for v in op.operands if is_constant(v)]
    clone_ops_into(_unique(constants) + [op], block, mapping)
    build_yield([mapping[r] for r in op.results], ip=ir.InsertionPoint(block))
    rewriter.replace_op(op, list(group.results))
    return True


@pattern
def merge_producer(consumer, rewriter) -> bool:
    """Merge the first pointwise group that feeds `consumer` into it, if legal."""
    if consumer.attributes["kind"].value != "pointwise":
        return False
    for operand in consumer.operands:
        producer = defining_op(operand)
        if producer is None or producer.name != "fusion.group":
            continue
        producer = producer.opview
        if producer.attributes["kind"].value != "pointwise" or producer.operation.block != consumer.operation.block:
            continue
        if why_not_merge(producer, consumer) is None:
            _merge(producer, consumer, rewriter)
            return True
    return False


def why_not_merge(producer, consumer) -> str | None:
    """None if `producer` may merge into `consumer`; otherwise the reason."""
    iteration = tensor_type(consumer.results[0].type).shape
    for result in producer.results:
        if _used_outside(result, consumer) and tensor_type(result.type).shape != iteration:
            return "different iteration space"
    if _dependents_between(producer, consumer)[1]:
        return "cycle"
    return None


def _defined_by(value: ir.Value, op) -> bool:
    owner = defining_op(value)
    return owner is not None and owner == op.operation


def _used_outside(value: ir.Value, consumer) -> bool:
    return any(use.owner.operation != consumer.operation for use in value.uses)


def _dependents_between(producer, consumer) -> tuple[list, bool]:
    """Ops strictly between the two that depend on `producer`, and whether `consumer` does too.

    If `consumer` reads one of those ops, merging would make the merged group
    both feed and read that op: a cycle.
    """
    tainted = set(producer.results)
    dependents = []
    block = producer.operation.block
    started = False
    for op in block.operations:
        if op.operation == producer.operation:
            started = True
            continue
        if not started:
            continue
        if op.operation == consumer.operation:
            cycle = any(v in tainted and not _defined_by(v, producer) for v in consumer.operands)
            return dependents, cycle
        if any(v in tainted for v in op.operands):
            dependents.append(op)
            tainted.update(op.results)
    raise AssertionError("consumer does not follow producer in the block")


def _merge(producer, consumer, rewriter) -> None:
    dependents, _ = _dependents_between(producer, consumer)
    inputs: list[ir.Value] = []
    for v in list(producer.operands) + [v for v in consumer.operands if not _defined_by(v, producer)]:
        if v not in inputs:
            inputs.append(v)
    exported = [r for r in producer.results if _used_outside(r, consumer)]
    result_types = [r.type for r in consumer.results] + [r.type for r in exported]
    group = build_group(inputs, result_types, loc=consumer.location, ip=ir.InsertionPoint(consumer))
    block = group.regions[0].blocks[0]
    arg_of = dict(zip(inputs, block.arguments))

    p_ops, p_yield = body_ops(producer)
    mapping = {old: arg_of[v] for old, v in zip(producer.regions[0].blocks[0].arguments, producer.operands)}
    clone_ops_into(p_ops, block, mapping)
    produced = [mapping[v] for v in p_yield.operands]

    c_ops, c_yield = body_ops(consumer)
    for old, v in zip(consumer.regions[0].blocks[0].arguments, consumer.operands):
        mapping[old] = produced[result_index(v)] if _defined_by(v, producer) else arg_of[v]
    clone_ops_into(c_ops, block, mapping)
    build_yield(
        [mapping[v] for v in c_yield.operands] + [produced[result_index(r)] for r in exported],
        ip=ir.InsertionPoint(block),
    )

    n = len(consumer.results)
    rewriter.replace_op(consumer, list(group.results)[:n])
    for k, r in enumerate(exported):
        r.replace_all_uses_with(group.results[n + k])
    rewriter.erase_op(producer)
    # Ops that read the producer but do not feed the consumer now read the
    # merged group, which sits where the consumer was: move them after it.
    anchor = group
    for op in dependents:
        op.operation.move_after(anchor)
        anchor = op


def _unique(ops: list) -> list:
    seen, out = set(), []
    for op in ops:
        if op.operation not in seen:
            seen.add(op.operation)
            out.append(op)
    return out


@dataclasses.dataclass(frozen=True)
class FuseElementwise(ModulePass):
    """Group maximal producer->consumer chains of elementwise torch ops into fusion.group ops.

    Unary and binary math (with broadcasting and scalar operands), casts,
    comparisons, where/masked_fill, clamp and activations (relu, gelu, silu, ...).
    A producer used outside the chain is exported as an extra group result;
    merges that would create a cycle are refused.
    """

    name = "fusion-fuse-elementwise"

    def apply(self, module: ir.Operation) -> None:
        patterns = [(name, wrap_elementwise) for name in RULES]
        patterns.append(("fusion.group", merge_producer))
        apply_patterns(module, patterns)


__all__ = ["FuseElementwise", "why_not_merge", "is_tensor"]
