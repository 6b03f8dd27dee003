"""fusion-fuse-elementwise: maximal producer->consumer groups of elementwise ops and reductions.

Two patterns reach the fixpoint together:

1. `wrap_elementwise` puts each fusible torch op (see `mlirfuse.elementwise`
   and `mlirfuse.reductions`) alone into a `fusion.group` (kind `pointwise`
   or `reduction`), with the constants it reads cloned inside.
2. `merge_producer` merges a group into a consumer group. A producer result
   that is also used outside the consumer becomes an extra result of the
   merged group. A merge is refused when it would create a cycle (another
   path runs from the producer to the consumer through an op outside both),
   or when the two do not share an iteration space:

   - pointwise + pointwise: exported results must have the consumer's shape;
   - with a reduction: every reduction of the merged group reduces the same
     axes of the same shape S; every pointwise op's shape broadcasts into S
     (prologue: full shape; epilogue on reduced values: the keepdim shape);
     a reduction's result without keepdim may only leave the group.

Finally reduction groups whose rows fit one block (`persistent-max`
elements) become `persistent-reduction` groups: the kernel keeps the row in
registers instead of looping over it.

Ops that cannot be fused are never touched; only ops directly in a function
body are fused (ops in nested regions, e.g. prim.If arms, are left alone).
"""

from __future__ import annotations

import dataclasses

from mlirfuse.dialect import build_group, build_yield
from mlirfuse.elementwise import RULES, fusible, why_not_fusible
from mlirfuse.ir import constant_value, defining_op, ir, is_constant_like, op_id, parent_name, result_index, tensor_type
from mlirfuse.reductions import REDUCTIONS, Reduction, reduction
from mlirfuse.analysis.alias import AliasAnalysis
from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.analysis.shapes import ShapeAnalysis
from mlirfuse.ir import rewrite
from mlirfuse.passes.base import ModulePass, body_ops, clone_ops_into, constant_ops, erase_dead_constants, pattern, unique_ops
from mlirfuse.views import RESHAPES, VIEW_OPS, is_view, view_args


def wrap_elementwise(op, rewriter, fuser: "_Fuser") -> bool:
    """A lone fusible op becomes a one-op group (pointwise or reduction)."""
    if parent_name(op) != "func.func":
        return False  # inside a group already, or in a nested region (prim.If/Loop): not fused
    if op.operation.name in REDUCTIONS:
        if not isinstance(reduction(op), Reduction):
            return False
        kind = "reduction"
    elif fusible(op):
        kind = "pointwise"
    else:
        return False
    group = _wrap(op, kind, fuser)
    rewriter.replace_op(op, list(group.results))
    return True


def _wrap(op, kind: str, fuser: "_Fuser"):
    """A group holding `op` (and clones of the constants it reads), placed before it."""
    inputs = []
    for v in op.operands:
        if not is_constant_like(v) and v not in inputs:
            inputs.append(v)
    group = build_group(inputs, [r.type for r in op.results], kind=kind, loc=op.location, ip=ir.InsertionPoint(op))
    block = group.regions[0].blocks[0]
    mapping = dict(zip(inputs, block.arguments))
    clone_ops_into(unique_ops(constant_ops(op)) + [op], block, mapping)
    build_yield([mapping[r] for r in op.results], ip=ir.InsertionPoint(block))
    fuser.dep.insert_before(group, op)
    fuser.dep.erase(op)
    fuser.replaced([op], group, zip(op.results, group.results))
    return group


def _absorbable_view(operand, consumer):
    """A view op outside any group (constant arguments) whose result `consumer` reads.

    The group reads through it by index arithmetic instead of a copy.
    """
    op = defining_op(operand)
    if not is_view(op) or op.block != consumer.operation.block or view_args(op) is None:
        return None
    return op.opview


def _absorb_view(view, consumer, rewriter, fuser: "_Fuser") -> None:
    """Move `view` into `consumer` (a private clone of it if others read it too: views are free)."""
    if _used_outside(view.results[0], consumer):
        clone = view.operation.clone(ip=ir.InsertionPoint(consumer))
        fuser.dep.insert_before(clone, consumer)
        fuser.added(clone)
        for k, v in enumerate(consumer.operands):
            if v == view.results[0]:
                consumer.operation.operands[k] = clone.results[0]
        view = clone
    wrapped = _wrap(view, "pointwise", fuser)
    rewriter.replace_op(view, list(wrapped.results))
    _merge(wrapped, consumer, rewriter, fuser)


FUSIBLE_KINDS = ("pointwise", "reduction")


def _kind(group) -> str:
    return ir.StringAttr(group.attributes["kind"]).value


def merge_producer(consumer, rewriter, fuser: "_Fuser") -> bool:
    """Merge the first group that feeds `consumer` into it, if legal."""
    if _kind(consumer) not in FUSIBLE_KINDS:
        return False
    for operand in consumer.operands:
        view = _absorbable_view(operand, consumer)
        if view is not None:
            _absorb_view(view, consumer, rewriter, fuser)
            return True
        producer = defining_op(operand)
        if producer is None or producer.name != "fusion.group":
            continue
        producer = producer.opview
        if _kind(producer) not in FUSIBLE_KINDS or producer.operation.block != consumer.operation.block:
            continue
        if why_not_merge(producer, consumer, fuser.dependence(), fuser.limits) is None:
            _merge(producer, consumer, rewriter, fuser)
            return True
    return False


def group_reduction(group) -> Reduction | None:
    """The (shared) reduction a reduction group computes; None for pointwise groups."""
    for op in group.regions[0].blocks[0].operations:
        if op.operation.name in REDUCTIONS:
            return reduction(op)
    return None


def _broadcasts_into(shape, target) -> bool:
    if len(shape) > len(target):
        return False
    return all(d == t or d == 1 for d, t in zip(reversed(shape), reversed(target)))


@dataclasses.dataclass(frozen=True)
class Limits:
    max_args: int = 128  # kernel tensor arguments: inputs + results
    max_group_size: int = 0  # torch ops in a group; 0: no limit


def _merged_sizes(producer, consumer) -> tuple[int, int]:
    """(tensor arguments, torch ops) of the group merging the two would make."""
    inputs = {v for v in producer.operands} | {v for v in consumer.operands if not _defined_by(v, producer)}
    exported = [r for r in producer.results if _used_outside(r, consumer)]
    args = len(inputs) + len(consumer.results) + len(exported)
    ops = sum(
        1
        for g in (producer, consumer)
        for op in g.regions[0].blocks[0].operations
        if op.operation.name.startswith(("torch.aten.", "torch.prims.")) and op.operation.name not in VIEW_OPS
    )
    return args, ops


def _viewed_inputs(consumer, producer) -> bool:
    """Does `consumer` view a value `producer` computes? (Views inside a group read group inputs only.)"""
    block = consumer.regions[0].blocks[0]
    for arg, v in zip(block.arguments, consumer.operands):
        if _defined_by(v, producer) and any(u.owner.operation.name in VIEW_OPS for u in arg.uses):
            return True
    return False


def why_not_merge(producer, consumer, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """None if `producer` may merge into `consumer`; otherwise the reason."""
    if dep.dependents_between(producer, consumer)[1]:
        return "cycle"
    if _viewed_inputs(consumer, producer):
        return "view of a computed value"
    args, ops = _merged_sizes(producer, consumer)
    if args > limits.max_args:
        return f"argument limit ({args} > {limits.max_args})"
    if limits.max_group_size and ops > limits.max_group_size:
        return f"group size limit ({ops} > {limits.max_group_size})"
    p_red, c_red = group_reduction(producer), group_reduction(consumer)
    exported = [r for r in producer.results if _used_outside(r, consumer)]
    if p_red is None and c_red is None:
        iteration = tensor_type(consumer.results[0].type).shape
        if any(tensor_type(r.type).shape != iteration for r in exported):
            return "different iteration space"
        return None
    if p_red is not None and c_red is not None and (p_red.shape, p_red.dims) != (c_red.shape, c_red.dims):
        return "reductions over different axes"
    red = p_red or c_red
    pointwise = consumer if c_red is None else producer if p_red is None else None
    if pointwise is not None and not _broadcasts_into(tensor_type(pointwise.results[0].type).shape, red.shape):
        return "different iteration space"
    # A kernel writes full-space results over S and row-space results one per
    # row: anything else (a broadcast-smaller value) has no place to be stored.
    for r in list(exported) + list(consumer.results):
        shape = tensor_type(r.type).shape
        if shape not in (red.shape, red.keepdim_shape) and not _is_reduction_result(r):
            return "different iteration space"
    for r in producer.results:
        if _is_reduction_result(r) and any(u.owner.operation == consumer.operation for u in r.uses):
            owner = _yielded_op(producer, r)
            if not _keepdim(owner):
                return "reduction result used without keepdim"
    return None


def _yielded_op(group, result):
    """The op inside `group` whose value the group yields as `result`."""
    _, terminator = body_ops(group)
    return defining_op(terminator.operands[result_index(result)])


def _is_reduction_result(result) -> bool:
    group = defining_op(result).opview
    owner = _yielded_op(group, result)
    return owner is not None and owner.name in REDUCTIONS


def _keepdim(op) -> bool:
    red = reduction(op.opview)
    return isinstance(red, Reduction) and (red.keepdim or len(red.dims) == 0)


def _defined_by(value: ir.Value, op) -> bool:
    owner = defining_op(value)
    return owner is not None and owner == op.operation


def _used_outside(value: ir.Value, consumer) -> bool:
    return any(use.owner.operation != consumer.operation for use in value.uses)


def _merge(producer, consumer, rewriter, fuser: "_Fuser"):
    dep = fuser.dep
    dependents, _ = dep.dependents_between(producer, consumer)
    inputs: list[ir.Value] = []
    for v in list(producer.operands) + [v for v in consumer.operands if not _defined_by(v, producer)]:
        if v not in inputs:
            inputs.append(v)
    exported = [r for r in producer.results if _used_outside(r, consumer)]
    result_types = [r.type for r in consumer.results] + [r.type for r in exported]
    kind = "reduction" if "reduction" in (_kind(producer), _kind(consumer)) else "pointwise"
    group = build_group(inputs, result_types, kind=kind, loc=consumer.location, ip=ir.InsertionPoint(consumer))
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
    # The merged group takes the consumer's place in the dependence order.
    dep.insert_before(group, consumer)
    dep.erase(consumer)
    dep.erase(producer)
    fuser.replaced(
        [consumer, producer], group, list(zip(consumer.results, group.results)) + list(zip(exported, group.results[n:]))
    )
    for k, r in enumerate(exported):
        r.replace_all_uses_with(group.results[n + k])
    if rewriter is not None:
        rewriter.replace_op(consumer, list(group.results)[:n])
        rewriter.erase_op(producer)
    else:  # outside a pattern driver (horizontal fusion)
        for old, new in zip(consumer.results, group.results):
            old.replace_all_uses_with(new)
        consumer.operation.erase()
        producer.operation.erase()
    # Ops that read the producer but do not feed the consumer now read the
    # merged group, which sits where the consumer was: move them after it.
    anchor = group
    for op in dependents:
        op.move_after(anchor)
        dep.move_after(op, anchor)
        anchor = op
    return group


CAT = "torch.aten.cat"


def _cat_list(cat):
    """The ListConstruct op holding the cat's pieces, or None."""
    items = defining_op(cat.operands[0])
    return items if items is not None and items.name == "torch.prim.ListConstruct" else None


def _piece_groups(cat) -> list:
    """The distinct groups computing the cat's pieces, in list order."""
    groups = {}
    for v in _cat_list(cat).operands:
        owner = defining_op(v)
        if owner is not None and owner.name == "fusion.group":
            groups.setdefault(op_id(owner), owner.opview)
    return list(groups.values())


def why_not_concat(cat, dep: DependenceAnalysis, limits: Limits = Limits()) -> str | None:
    """None if `cat` and the groups computing its pieces can become one concat group; otherwise why not."""
    items = _cat_list(cat)
    result = tensor_type(cat.results[0].type)
    if items is None or not isinstance(constant_value(cat.operands[1]), int) or result is None or not result.is_static:
        return "cat with a non-constant dim or list, or a dynamic shape"
    if any(u.owner.operation != cat.operation for u in items.results[0].uses):
        return "cat's list is read by another op"
    groups = _piece_groups(cat)
    if not groups:
        return "no piece is computed by a group"
    if any(_kind(g) != "pointwise" for g in groups):
        return "cat of a reduction result"
    members = {op_id(g) for g in groups}
    for i, a in enumerate(groups):
        for b in groups[i + 1 :]:
            if dep.reaches(a, b) or dep.reaches(b, a):
                return "cycle"
    for v in items.operands:  # a piece no group computes must not be computed from one
        owner = defining_op(v)
        if owner is not None and op_id(owner) not in members and any(dep.reaches(g, owner) for g in groups):
            return "cycle"
    inputs = {v for g in groups for v in g.operands} | {v for v in items.operands if not _defined_by_any(v, members)}
    outputs = 1 + sum(1 for g in groups for r in g.results if any(u.owner.operation != items.operation for u in r.uses))
    if len(inputs) + outputs > limits.max_args:
        return f"argument limit ({len(inputs) + outputs} > {limits.max_args})"
    return None


def _defined_by_any(value: ir.Value, ids: set) -> bool:
    owner = defining_op(value)
    return owner is not None and op_id(owner) in ids


def _wrap_cat(cat, fuser: "_Fuser"):
    """A group holding `cat` and its list (pieces become the group's inputs), placed before it."""
    items = _cat_list(cat)
    inputs = list(dict.fromkeys(items.operands))
    group = build_group(inputs, [cat.results[0].type], kind="pointwise", loc=cat.location, ip=ir.InsertionPoint(cat))
    block = group.regions[0].blocks[0]
    mapping = dict(zip(inputs, block.arguments))
    clone_ops_into(constant_ops(cat) + [items.opview, cat], block, mapping)
    build_yield([mapping[cat.results[0]]], ip=ir.InsertionPoint(block))
    fuser.dep.insert_before(group, cat)
    fuser.replaced([cat], group, [(cat.results[0], group.results[0])])
    cat.results[0].replace_all_uses_with(group.results[0])
    for op in (cat, items.opview):
        fuser.dep.erase(op)
        op.operation.erase()
    return group


@dataclasses.dataclass(frozen=True)
class FuseElementwise(ModulePass):
    """Group maximal producer->consumer chains of elementwise ops and reductions into fusion.group ops.

    Unary and binary math (with broadcasting and scalar operands), casts,
    comparisons, where/masked_fill, clamp and activations (relu, gelu, silu, ...);
    sum/mean/amax/amin/prod/argmax/argmin with their pointwise prologue and
    epilogue. Views of group inputs join the group (read by index arithmetic),
    reshapes of results are stored by it, and a cat of group results becomes
    the exit of a concat group. A producer used outside the chain is exported
    as an extra group result; merges that would create a cycle are refused.
    Options: persistent-max (rows up to this many elements stay in registers),
    max-args (tensor arguments per kernel, default 128), max-group-size (torch
    ops per group, 0 = unlimited), explain (attach fusion.explain: each
    neighbour left outside a group and why), horizontal (default true: merge
    independent groups that read the same tensor).
    """

    name = "fusion-fuse-elementwise"

    persistent_max: int = 4096
    max_args: int = 128
    max_group_size: int = 0
    # Attach to each group why its neighbours were not fused (fusion.explain).
    explain: bool = False
    # Merge independent groups that read the same tensor (sibling fusion).
    horizontal: bool = True
    # Debug/benchmark: rebuild the dependence analysis before every legality
    # check instead of maintaining it (quadratic; see bench/compile_time.py).
    recompute_analyses: bool = False

    preserves = (DependenceAnalysis, AliasAnalysis, ShapeAnalysis)

    def apply(self, module: ir.Operation, am=None) -> None:
        from mlirfuse.analysis import AnalysisManager

        am = am or AnalysisManager()
        fuser = _Fuser(
            module, am, self.recompute_analyses, Limits(self.max_args, self.max_group_size), self.horizontal
        )
        fuser.run()
        if self.explain:
            fuser.explain()
        self._mark_persistent(module)

    def _mark_persistent(self, module: ir.Operation) -> None:
        def visit(op):
            if op.name == "fusion.group" and _kind(op) == "reduction":
                red = group_reduction(op.opview)
                if red.rnumel <= self.persistent_max:
                    op.attributes["kind"] = ir.StringAttr.get("persistent-reduction")
            return ir.WalkResult.ADVANCE

        module.walk(visit)


__all__ = ["FuseElementwise", "why_not_merge"]


class _Fuser:
    """Runs the two patterns to a fixpoint with MLIR's walk driver, keeping the dependence analysis.

    The walk driver (unlike the greedy one) never erases ops behind our back,
    so every change to the IR goes through code that also updates the
    analysis. Each sweep visits ops in order; a consumer merges with its
    (already merged) producer, so a chain needs one sweep to wrap and one to
    merge.
    """

    def __init__(self, module: ir.Operation, am, recompute: bool, limits: Limits, horizontal: bool = True):
        self.module = module
        self.am = am
        self.recompute = recompute
        self.limits = limits
        self.horizontal = horizontal
        self.dep = am.get(DependenceAnalysis, module)
        # Value facts kept current too: a group's results take over the facts
        # of the values they replace (storage classes, iteration spaces).
        self.values = [am.get(AliasAnalysis, module), am.get(ShapeAnalysis, module)]
        self.changed = False

    def replaced(self, old_ops, group, pairs) -> None:
        """Tell the value analyses that `group` replaces `old_ops`: (old value, group result) `pairs`."""
        pairs = list(pairs)
        for analysis in self.values:
            analysis.add_op(group)
            for old, new in pairs:
                analysis.replace_value(old, new)
            for op in old_ops:
                analysis.erase_op(op)

    def added(self, op) -> None:
        for analysis in self.values:
            analysis.add_op(op)

    def dependence(self) -> DependenceAnalysis:
        if self.recompute:
            self.dep.refresh()
        return self.dep

    def _tracking(self, fn):
        @pattern
        def apply(op, rewriter):
            done = fn(op, rewriter, self)
            self.changed |= done
            return done

        return apply

    def run(self) -> None:
        self._erase_dead_code()
        patterns = rewrite.RewritePatternSet()
        wrap, merge = self._tracking(wrap_elementwise), self._tracking(merge_producer)
        for name in list(RULES) + list(REDUCTIONS):
            patterns.add(name, wrap)
        patterns.add("fusion.group", merge)
        frozen = patterns.freeze()
        while True:
            self.changed = False
            rewrite.walk_and_apply_patterns(self.module, frozen)
            if self.changed:
                continue
            if self.horizontal and self.fuse_siblings():
                continue
            break
        self.absorb_concats()
        self.absorb_exit_reshapes()
        self._erase_dead_constants()

    def absorb_concats(self) -> None:
        """Concat as an exit node: a cat of pointwise group results joins those groups.

        The groups computing the pieces merge (they are independent) and the
        cat becomes the merged group's exit: a `concat` group whose kernel
        stores each piece straight into its slice of the cat's buffer. Pieces
        may differ in size along the cat dim; a piece no group computes (a
        group input) is copied into its slice by the same kernel.
        """
        for func in self.module.regions[0].blocks[0].operations:
            if func.operation.name != "func.func":
                continue
            for op in list(func.regions[0].blocks[0].operations):
                if op.operation.name != "torch.aten.cat" or why_not_concat(op, self.dep, self.limits) is not None:
                    continue
                groups = sorted(_piece_groups(op), key=self.dep.position)
                merged = groups[0]
                for group in groups[1:]:
                    merged = _merge(merged, group, None, self)
                merged = _merge(merged, _wrap_cat(op, self), None, self)
                merged.attributes["kind"] = ir.StringAttr.get("concat")

    def absorb_exit_reshapes(self) -> None:
        """A reshape of a group's result read outside any group joins the group.

        The kernel stores the value in row-major order (a reduction group: over
        the full space, or one element per row); the reshaped result is that
        buffer with the new shape, so the reshape costs nothing. Done
        after the fixpoint: a group whose result is reshaped can no longer
        merge with the reshape's readers (a view of a computed value).
        """
        for func in self.module.regions[0].blocks[0].operations:
            if func.operation.name != "func.func":
                continue
            for op in list(func.regions[0].blocks[0].operations):
                if op.operation.name not in RESHAPES or view_args(op) is None or not list(op.results[0].uses):
                    continue
                producer = defining_op(op.operands[0])
                if producer is None or producer.name != "fusion.group" or _kind(producer.opview) not in FUSIBLE_KINDS:
                    continue
                wrapped = _wrap(op, "pointwise", self)
                for old, new in zip(op.results, wrapped.results):
                    old.replace_all_uses_with(new)
                op.operation.erase()
                _merge(producer.opview, wrapped, None, self)

    def fuse_siblings(self) -> bool:
        """Horizontal fusion: two independent groups reading the same tensor become one.

        The merged kernel reads the shared input once and writes both groups'
        results. Legal when neither depends on the other and the usual
        iteration-space rules hold (as for a producer whose results all
        leave the group).
        """
        merged = False
        for func in self.module.regions[0].blocks[0].operations:
            if func.operation.name != "func.func":
                continue
            # Ids are taken up front: a merged (erased) op must not be touched again.
            readers: dict[ir.Value, list] = {}
            for op in func.regions[0].blocks[0].operations:
                if op.operation.name == "fusion.group" and _kind(op) in FUSIBLE_KINDS:
                    for v in dict.fromkeys(op.operands):  # ordered: deterministic merges
                        readers.setdefault(v, []).append((op_id(op), op))
            done: set[int] = set()
            for groups in readers.values():
                for (first_id, first), (second_id, second) in zip(groups, groups[1:]):
                    if first_id in done or second_id in done:
                        continue  # merged already this round; revisit next round
                    # An earlier merge may have moved `first` (a dependent) past `second`:
                    # the checks and _merge need the pair in the current order.
                    if self.dep.position(first) > self.dep.position(second):
                        first, second = second, first
                    if self.dep.reaches(first, second):
                        continue
                    if why_not_merge(first, second, self.dep, self.limits) is not None:
                        continue
                    done.update((first_id, second_id))
                    _merge(first, second, None, self)
                    merged = True
        return merged

    def _erase_dead_code(self) -> None:
        """Erase the fusible (pure) ops nobody reads, users first.

        Export keeps some (the operand of a dropped `x.to(dtype)`). Fused beside
        live code they make groups only they justify (a reduction kernel, a
        concat exit, one iteration space) that canonicalize later strips bare.
        """
        for func in self.module.regions[0].blocks[0].operations:
            if func.operation.name != "func.func":
                continue
            for op in reversed(list(func.regions[0].blocks[0].operations)):
                name = op.operation.name
                pure = name in RULES or name in REDUCTIONS or name in VIEW_OPS or name in (CAT, "torch.prim.ListConstruct")
                if pure and not any(list(r.uses) for r in op.results):
                    for analysis in self.values:
                        analysis.erase_op(op)
                    self.dep.erase(op)
                    op.operation.erase()

    def _erase_dead_constants(self) -> None:
        """Constants (and lists of them) cloned into groups and now unused outside."""
        erase_dead_constants(self.module, self.dep.erase)

    def explain(self) -> None:
        """`fusion.explain` on each group: every neighbour left outside it, and why."""
        groups = []

        def visit(op):
            if op.name == "fusion.group":
                groups.append(op.opview)
            return ir.WalkResult.ADVANCE

        self.module.walk(visit)
        for group in groups:
            reasons = []
            neighbours = [(defining_op(v), "producer") for v in group.operands]
            for use in (use for r in group.results for use in r.uses):
                owner = use.owner.operation
                if owner.name == "torch.prim.ListConstruct":  # a cat's pieces: the cat is the neighbour
                    neighbours += [(u.owner.operation, "consumer") for u in owner.results[0].uses]
                else:
                    neighbours.append((owner, "consumer"))
            seen = set()
            for op, role in neighbours:
                if op is None or op.name in ("func.return",) or op.name.startswith(("torch.constant.", "torch.prim.")):
                    continue
                key = (op_id(op), role)
                if key in seen:
                    continue
                seen.add(key)
                reasons.append(f"{role} {op.name}: {self._why_outside(op, group, role)}")
            if reasons:
                group.attributes["fusion.explain"] = ir.ArrayAttr.get([ir.StringAttr.get(r) for r in reasons])

    def _why_outside(self, op, group, role: str) -> str:
        if op.parent is None or op.parent.name != "func.func":
            return "inside a nested region (only function bodies are fused)"
        if op.name == "fusion.group":
            producer, consumer = (op.opview, group) if role == "producer" else (group, op.opview)
            return why_not_merge(producer, consumer, self.dep, self.limits) or "not merged"
        if op.name == CAT:
            return why_not_concat(op.opview, self.dep, self.limits) or "not merged"
        if op.name in VIEW_OPS:
            if view_args(op) is None:
                return "view with non-constant arguments"
            return "view of a computed value (only reshapes of results are stored)"
        if op.name in REDUCTIONS:
            red = reduction(op.opview)
            return red if isinstance(red, str) else "not merged"
        return why_not_fusible(op.opview) or "not merged"
