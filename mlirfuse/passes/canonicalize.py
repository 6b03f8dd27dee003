"""fusion-canonicalize: put every fusion.group into its canonical form.

Inside the body: scalar constants that come in as operands are cloned in,
dead ops are erased and common subexpressions merged. On the op: duplicate
operands are merged, results yielding the same value are merged, and
results nobody uses are dropped. A result read only for its size, rank or
dtype is not needed either: those queries are answered from its type (or,
for a dynamic shape, asked of a group input of provably the same shape), so
the result loses its uses and is dropped too. Between groups: two groups
with the same operands and body are merged. The canonical form is what
deduplication compares, so two groups computing the same thing print the
same.

The shape analysis is asked for at the first size query and kept current
from there, never recomputed. The patterns run
with MLIR's walk driver to a fixpoint: unlike the greedy driver it never
erases ops behind our back, so every change to a func-level tensor goes
through code that also updates the analysis.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.shapes import SIZE_QUERIES, ShapeAnalysis
from mlirfuse.dialect import (
    REDUCTION_KINDS,
    GroupKind,
    build_group,
    build_yield,
    canonical_form,
    group_kind,
    set_group_kind,
)
from mlirfuse.ir import (
    DTYPE_CODES,
    VALUE_CONSTANTS,
    TorchBuilder,
    body_operations,
    constant_value,
    defining_op,
    ir,
    is_constant,
    op_id,
    rewrite,
)
from mlirfuse.ops.reductions import REDUCTIONS
from mlirfuse.ops.scans import SCANS
from mlirfuse.passes.base import ModulePass, pattern
from mlirfuse.passes.rewriter import FusionRewriter


def _inline_constants(block: ir.Block, inputs: list[ir.Value]) -> bool:
    """Clone constant operands into the body; their block args lose all uses."""
    changed = False
    first = block.operations[0]
    for arg, value in zip(block.arguments, inputs):
        if is_constant(value) and list(arg.uses):
            clone = defining_op(value).clone(ip=ir.InsertionPoint(first))
            arg.replace_all_uses_with(clone.results[0])
            changed = True
    return changed


def _merge_duplicate_args(block: ir.Block, inputs: list[ir.Value]) -> bool:
    changed = False
    first_arg = {}
    for arg, value in zip(block.arguments, inputs):
        if value in first_arg:
            if list(arg.uses):
                arg.replace_all_uses_with(first_arg[value])
                changed = True
        else:
            first_arg[value] = arg
    return changed


def _erase_dead_ops(ops: list) -> list:
    """Erase the ops of `ops` (a body's, in order) whose results nobody reads, last first (so what only they
    read goes too); the ops left."""
    kept = []
    for op in reversed(ops):
        results = op.results
        if len(results) == 1:  # most ops: no generator
            live = next(iter(results[0].uses), None) is not None
        else:
            live = any(next(iter(r.uses), None) is not None for r in results)
        if live:
            kept.append(op)
        else:
            op.erase()
    kept.reverse()
    return kept


def _eliminate_common_subexpressions(ops: list) -> list:
    """Merge ops with the same name, operands, attributes and result types; the ops left, in order.

    Constants (`VALUE_CONSTANTS`) are keyed by name and value at once. Other ops
    are keyed by name and operands first; attributes and result types are
    spelled out only once a second op has the same name and operands (most
    ops are unique by their operands alone).
    """
    first: dict[tuple, object] = {}  # (name, operands) -> the first op with them, until a second comes
    spelled: dict[tuple, object] = {}  # (name, operands, attributes and types) -> the first op with them
    constants: dict[tuple, object] = {}  # (name, value) -> the first such `VALUE_CONSTANTS` op holding its value alone
    kept = []
    for op in ops:
        name = op.name
        if name in VALUE_CONSTANTS:
            attributes = op.attributes
            if len(attributes) == 1:  # its `value`: with the name, all that tells two apart (the type is the name's)
                key = (name, attributes["value"])
                same = constants.get(key)
                if same is None:
                    constants[key] = op
                    kept.append(op)
                else:
                    op.results[0].replace_all_uses_with(same.results[0])
                    op.erase()
                continue
        key = (name, tuple(op.operands))
        earlier = first.get(key)
        if earlier is None:
            first[key] = op
            kept.append(op)
            continue
        if earlier is not _SPELLED:
            spelled[(*key, _attributes_and_types(earlier))] = earlier
            first[key] = _SPELLED
        full = (*key, _attributes_and_types(op))
        same = spelled.get(full)
        if same is None:
            spelled[full] = op
            kept.append(op)
            continue
        for old, new in zip(op.results, same.results):
            old.replace_all_uses_with(new)
        op.erase()
    return kept


_SPELLED = object()  # `first`'s mark: the ops of that name and operands are in `spelled`

def _attributes_and_types(op) -> tuple:
    """What besides name and operands makes two ops the same: attributes (sorted by name) and result types.

    Attributes and types are uniqued by the context, so the binding objects compare (and hash) as their
    storage does: equal exactly when they print alike, without printing them.
    """
    attributes = op.attributes
    count = len(attributes)
    if count == 1:  # most spelled ops are constants, holding a `value` alone
        name = next(iter(attributes))
        attrs = ((name, attributes[name]),)
    else:
        attrs = tuple(sorted((a, attributes[a]) for a in attributes)) if count else ()
    results = op.results
    return attrs, (results[0].type,) if len(results) == 1 else tuple(r.type for r in results)


def _merge_duplicate_results(group, terminator, rewriter: FusionRewriter) -> bool:
    """Results yielding the same value (`terminator`: the body's): users of the later ones read the first."""
    first: dict[ir.Value, int] = {}
    changed = False
    for i, v in enumerate(terminator.operands):
        if v in first:
            if list(group.results[i].uses):
                rewriter.replace_uses(group.results[i], group.results[first[v]])
                changed = True
        else:
            first[v] = i
    return changed


def _refresh_kind(group, ops: list) -> bool:
    """A reduction (concat, scan) group whose reductions (cat, scans) DCE erased, e.g. dead code fused beside live code, is pointwise now (`ops`: its body's)."""
    kind = group_kind(group)
    if kind not in REDUCTION_KINDS and kind not in (GroupKind.CONCAT, GroupKind.SCAN):
        return False
    names = {op.name for op in ops}
    if kind in REDUCTION_KINDS and not names & set(REDUCTIONS) or (
        kind == GroupKind.CONCAT and "torch.aten.cat" not in names
    ) or (kind == GroupKind.SCAN and not names & set(SCANS)):
        set_group_kind(group, GroupKind.POINTWISE)
        return True
    return False


def canonicalize_group(group, rewriter: FusionRewriter, tidy: list | None = None) -> bool:
    """Tidy one group's body, then rebuild it without dead operands and results.

    The group left is appended to `tidy` (if given) where running this again
    would change nothing: each step has done all it can, unless a result was
    dropped (which leaves dead ops in the body).
    """
    block = group.regions[0].blocks[0]
    inputs = list(group.operands)
    changed = _inline_constants(block, inputs)
    changed |= _merge_duplicate_args(block, inputs)
    ops, terminator = body_operations(group)
    count = len(ops)
    ops = _erase_dead_ops(_eliminate_common_subexpressions(ops))
    changed |= len(ops) != count
    changed |= _merge_duplicate_results(group, terminator, rewriter)
    changed |= _refresh_kind(group, ops)

    keep_args = [i for i, arg in enumerate(block.arguments) if list(arg.uses)]
    keep_results = [i for i, r in enumerate(group.results) if list(r.uses)]
    if len(keep_args) == len(inputs) and len(keep_results) == len(group.results):
        if tidy is not None:
            tidy.append(group)
        return changed
    if not keep_results:
        rewriter.erase(group)
        return True

    new = build_group(
        [inputs[i] for i in keep_args],
        [group.results[i].type for i in keep_results],
        kind=group_kind(group),
        loc=group.location,
    )
    new_block = new.regions[0].blocks[0]
    for i, arg in zip(keep_args, new_block.arguments):
        block.arguments[i].replace_all_uses_with(arg)
    new_yield = build_yield([terminator.operands[i] for i in keep_results], ip=ir.InsertionPoint(new_block))
    for op in ops:
        op.move_before(new_yield)
    rewriter.insert_before(new, group)
    for i, r in zip(keep_results, new.results):
        rewriter.replace_uses(group.results[i], r)
    rewriter.erase(group)
    if tidy is not None and len(keep_results) == len(group.results):
        tidy.append(new)
    return True


def fold_size_query(query, rewriter: FusionRewriter, shapes: ShapeAnalysis) -> bool:
    """A size, rank or dtype query on a group result read for nothing else: answer it without the result.

    From the result's type where it says; else (a dynamic size) by asking a
    group input of provably the same shape.
    """
    tensor = query.operands[0]
    group = defining_op(tensor)
    if group is None or group.name != "fusion.group" or not shapes.size_only_uses(tensor):
        return False
    answer = _answer(query, tensor, shapes)
    if answer is not None:
        builder = TorchBuilder(ir.InsertionPoint(query), query.location)
        value = builder.int_list(answer) if isinstance(answer, list) else builder.int(answer)
        rewriter.replace_uses(query.results[0], value)
        rewriter.erase(query)
        return True
    if query.operation.name == "torch.prim.dtype":
        return False  # an input of the same shape may have another dtype
    same = next((v for v in group.operands if shapes.knows(v) and shapes.same_space(tensor, v)), None)
    if same is None:
        return False
    rewriter.set_operand(query, 0, same)
    return True


def _answer(query, tensor: ir.Value, shapes: ShapeAnalysis) -> int | list[int] | None:
    """What the query returns, if the type of `tensor` says."""
    name, shape = query.operation.name, shapes.shape(tensor)
    if name == "torch.prim.dtype":
        return DTYPE_CODES.get(shapes.dtype(tensor))
    if shape is None:
        return None
    if name == "torch.aten.dim":
        return len(shape)
    if name == "torch.aten.size.int":
        dim = constant_value(query.operands[1])
        if not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
            return None
        return shape[dim]
    if None in shape:
        return None
    if name == "torch.aten.size":
        return list(shape)
    numel = 1
    for d in shape:
        numel *= d
    return numel


@dataclasses.dataclass(frozen=True)
class Canonicalize(ModulePass):
    """Canonicalize fusion.group ops: inline scalar constants, CSE and DCE in bodies, merge duplicate operands, drop unused results (and those read only for their size or dtype), merge identical groups.

    Upstream `cse` and `canonicalize` also run on modules holding groups; this
    pass adds what they do not know about group operands and results.
    """

    name = "fusion-canonicalize"

    preserves = (ShapeAnalysis,)

    def apply(self, module: ir.Operation, am=None) -> None:
        am = am or AnalysisManager()
        rewriter = FusionRewriter(am)
        changed = True

        def tracked(fn):
            @pattern
            def apply_one(op, driver):
                nonlocal changed
                with rewriter.driving(driver):
                    done = fn(op)
                changed |= done
                return done

            return apply_one

        def fold(query) -> bool:
            # The shape analysis is asked for at the first size query (most modules have none): computed then,
            # kept current from there.
            return fold_size_query(query, rewriter, am.get(ShapeAnalysis, module))

        # A group canonicalize_group left tidy stays so while it reads the same values and the same results
        # are read: a later sweep (run because other ops changed) skips it.
        settled: dict[int, tuple] = {}  # op_id -> that state

        def canonicalize_unsettled(group) -> bool:
            key = op_id(group)
            before = settled.pop(key, None)
            if before is not None:  # (the first sweep finds none settled: no state read for nothing)
                state = _outside_state(group)
                if before == state:
                    settled[key] = state
                    return False
            tidy = []
            done = canonicalize_group(group, rewriter, tidy)
            for left in tidy:
                settled[op_id(left)] = _outside_state(left)
            return done

        patterns = rewrite.RewritePatternSet()
        patterns.add("fusion.group", tracked(canonicalize_unsettled))
        for name in SIZE_QUERIES:
            patterns.add(name, tracked(fold))
        frozen = patterns.freeze()
        while changed:
            changed = False
            rewrite.walk_and_apply_patterns(module, frozen)
        merge_identical_groups(module, rewriter)
        rewriter.erase_dead_constants(module)  # constant operands inlined into bodies, answered queries


def _outside_state(group) -> tuple:
    """What `canonicalize_group` reads of a group's surroundings: its operands, and which of its results are read."""
    return tuple(group.operands), tuple(next(iter(r.uses), None) is not None for r in group.results)


def merge_identical_groups(module: ir.Operation, rewriter: FusionRewriter) -> None:
    """Groups with the same operands and the same canonical body compute the same values.

    Upstream `cse` would do this for a Pure op; the fusion ops are
    unregistered (see mlirfuse.dialect.fusion), so it is done here.
    """
    blocks = []

    def visit(op):
        if op.name == "fusion.group":
            block = op.block
            if block not in blocks:
                blocks.append(block)
            return ir.WalkResult.SKIP  # a body holds torch ops only: not walked
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    for block in blocks:
        # Groups by operands, each with its canonical form once asked: a form is built only for a group
        # reading what an earlier one reads (most groups share their operands with none).
        seen: dict[tuple, list[list]] = {}
        for op in list(block.operations):
            if op.operation.name != "fusion.group":
                continue
            same_operands = seen.setdefault(tuple(op.operands), [])
            form = canonical_form(op) if same_operands else None
            for entry in same_operands:
                if entry[1] is None:
                    entry[1] = canonical_form(entry[0])
                if entry[1] == form:
                    rewriter.replace_op(op, list(entry[0].results))
                    break
            else:
                same_operands.append([op, form])
