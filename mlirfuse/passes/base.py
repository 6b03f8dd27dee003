"""What a pass is, and the one adapter between Python patterns and MLIR's drivers.

A pass is a small frozen dataclass: `name` is its flag, its fields are its
options (typed, their help in the field's metadata: `mlirfuse.passes.options`),
its docstring is its documentation (`mlirfuse-opt --list-passes`).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
from typing import Callable, ClassVar

from mlirfuse.dialect import TEMPLATE_KINDS, group_kind, has_kind
from mlirfuse.errors import PipelineError
from mlirfuse.ir import VALUE_CONSTANTS, block_ops, ir, rewrite
from mlirfuse.passes.options import build, declared, parse_option


@dataclasses.dataclass(frozen=True)
class ModulePass:
    name: ClassVar[str] = ""
    # Analysis classes this pass keeps valid (updating them as it rewrites);
    # the analysis manager drops every other one after the pass.
    preserves: ClassVar[tuple] = ()

    def apply(self, module: ir.Operation, am=None) -> None:
        """Run on `module`; `am` is the pipeline's AnalysisManager (None: make one)."""
        raise NotImplementedError

    @classmethod
    def from_options(cls, options: dict[str, str], parsed: dict | None = None) -> "ModulePass":
        """Build the pass from `{key=value}` pipeline options, checking each.

        `parsed` (given key -> typed value) holds values parsed already, for
        a pipeline handing one option to several stages: each is parsed once.
        """
        by_name = {d.option.name: d for d in declared(cls)}
        parsed = {} if parsed is None else parsed
        values = {}
        for given, text in options.items():
            key = given.replace("_", "-")  # fields are snake_case, flags kebab-case: both are taken
            if key not in by_name:
                raise unknown_option(f"pass '{cls.name}'", given, list(by_name))
            if given not in parsed:
                parsed[given] = parse_option(cls.name, given, by_name[key].option.type, text)
            values[by_name[key].path] = parsed[given]
        return build(cls, values)


def unknown_option(owner: str, given: str, known: list[str]) -> PipelineError:
    """The error for an option `owner` (`pass 'x'`, `pipeline 'y'`) does not have: the valid ones, the nearest named."""
    message = f"{owner} has no option '{given.replace('_', '-')}' (options: {', '.join(known) or 'none'})"
    close = difflib.get_close_matches(given.replace("_", "-"), known, n=1)
    if close:
        message += f"; did you mean '{close[0]}'?"
    return PipelineError(message, option=given)


def pattern(fn: Callable[..., bool]):
    """Adapt `fn(op, rewriter) -> bool` ("True: I rewrote it") to the bindings.

    MLIR's Python drivers read a falsy return as success and `True` as "no
    match"; patterns here read naturally instead.
    """

    @functools.wraps(fn)
    def adapted(op, rewriter):
        return not fn(op, rewriter)

    return adapted


def in_template(op) -> bool:
    """Is `op` in the body of a template group or kernel (left alone by rewrite patterns)?"""
    parent = op.operation.parent
    return (
        parent is not None and parent.name in ("fusion.group", "fusion.kernel")
        and has_kind(parent) and group_kind(parent) in TEMPLATE_KINDS
    )


def _outside_templates(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def guarded(op, rewriter):
        return True if in_template(op) else fn(op, rewriter)  # True: no match (see `pattern`)

    return guarded


def apply_patterns(op: ir.Operation, patterns: list[tuple[object, Callable]]) -> None:
    """Run `(root, fn)` patterns to a fixpoint with the greedy driver.

    Folding, constant CSE and region simplification are off so that ops the
    patterns do not match stay exactly as they were; ops in template groups
    (`TEMPLATE_KINDS`) are never matched.
    """
    patterns_set = rewrite.RewritePatternSet()
    for root, fn in patterns:
        patterns_set.add(root, _outside_templates(fn))
    config = rewrite.GreedyRewriteConfig()
    config.enable_folding = False
    config.enable_constant_cse = False
    config.region_simplification_level = rewrite.GreedySimplifyRegionLevel.DISABLED
    config.max_iterations = 1000
    rewrite.apply_patterns_and_fold_greedily(op, patterns_set.freeze(), config)


def clone_ops_into(ops, block: ir.Block, mapping: dict, before=None, shared: dict | None = None) -> None:
    """Clone `ops` to the end of `block` (or before its op `before`), rewiring operands through `mapping`.

    `mapping` (old value -> new value) is extended with each clone's results.
    `shared` (a dict kept per body, empty at first): a constant, or a list
    of constants, equal to one cloned into the body before is not cloned
    again; its result maps to the earlier clone's. That is what
    fusion-canonicalize's CSE would make of the copies (it keeps the first),
    without making them: an unrolled loop's bodies read the same few ints
    through a constant per use, as torch-mlir imports them.
    """
    ip = ir.InsertionPoint(block) if before is None else ir.InsertionPoint(before)
    key = None
    for op in ops:
        if shared is not None:
            key = _sharing_key(op, mapping)
            if key is not None:
                found = shared.get(key)
                if found is not None:
                    mapping[op.results[0]] = found
                    continue
        clone = op.clone(ip=ip)
        operands = clone.operands
        for i, operand in enumerate(operands):
            new = mapping.get(operand)
            if new is not None:
                operands[i] = new
        mapping.update(zip(op.results, clone.results))
        if key is not None:
            shared[key] = clone.results[0]


def _sharing_key(op, mapping: dict):
    """What makes two constants, or two lists of constants, one for `clone_ops_into(shared=...)`: the key
    fusion-canonicalize's CSE merges them by (a list's items as mapped into the body); None for other ops."""
    name = op.operation.name
    if name in VALUE_CONSTANTS:
        attributes = op.attributes
        return (name, attributes["value"]) if len(attributes) == 1 else None
    if name == "torch.constant.none":
        return (name,)
    if name == "torch.prim.ListConstruct":
        return (name, tuple([mapping.get(v, v) for v in op.operands]), op.results[0].type)
    return None


def unique_ops(ops: list) -> list:
    """`ops` without repeats (by operation, not Python object), in order."""
    seen, out = set(), []
    for op in ops:
        if op.operation not in seen:
            seen.add(op.operation)
            out.append(op)
    return out


def body_ops(region_op) -> tuple[list, object]:
    """The ops of a group/kernel body and its terminator, separately."""
    return block_ops(region_op.regions[0].blocks[0])


def function_ops(module: ir.Operation):
    """Each function body's ops, as a list taken up front (the pass may rewrite them).

    Declarations (`func.func private @f(...)` without a body) have none.
    """
    for func in module.regions[0].blocks[0].operations:
        if func.operation.name == "func.func" and len(func.regions[0].blocks):
            yield list(func.regions[0].blocks[0].operations)


def function_level_ops(module: ir.Operation, keep: Callable[[str], bool] | frozenset | None = None):
    """As `function_ops`, as `ir.Operation`s, only those whose name `keep` accepts (None: all).

    Listing a block makes an `OpView` per op (its class looked up by name:
    1.5 µs or so); a walk that does not enter the ops' regions hands out
    plain operations for a third of that, and only the kept ones are held.
    `keep` a set of op names: MLIR's walk driver finds them without calling
    Python on the others (about 1.5 µs per op found, nothing per op passed
    over: GPT-32's 64 matmuls among its 2,400 ops in 0.15 ms, not 2.5), at the
    price of entering the ops' regions (what it finds in a group is dropped):
    for names that are rare, not for constants.
    """
    if isinstance(keep, (frozenset, set)):
        yield from _named_function_level_ops(module, keep)
        return
    advance, skip = ir.WalkResult.ADVANCE, ir.WalkResult.SKIP
    for func in module.regions[0].blocks[0].operations:
        if func.operation.name != "func.func" or not len(func.regions[0].blocks):
            continue
        func = func.operation
        ops: list = []
        entered = []

        def visit(op, ops=ops, entered=entered):
            if not entered:  # the function itself, visited first
                entered.append(op)
                return advance
            if keep is None or keep(op.name):
                ops.append(op)
            return skip

        func.walk(visit, ir.WalkOrder.PRE_ORDER)
        yield ops


def _named_function_level_ops(module: ir.Operation, names: frozenset):
    """`function_level_ops` for a set of op names (`ops_named`, dropping what it finds below the function's ops)."""
    for func in module.regions[0].blocks[0].operations:
        if func.operation.name != "func.func" or not len(func.regions[0].blocks):
            continue
        func = func.operation
        yield [op for op in ops_named(func, names) if op.parent == func]


def ops_named(root: ir.Operation, names) -> list:
    """The `ir.Operation`s under `root` (in its regions, at any depth, in program order) whose name is in `names`.

    Found by MLIR's walk driver: no Python call per op passed over (about 1.5 µs per op found). Its walk is
    post-order; between ops without regions of their own that is program order too.
    """
    found: list = []

    def collect(op, rewriter):
        found.append(op.operation)
        return True  # no match (see `pattern`): nothing is rewritten

    patterns = rewrite.RewritePatternSet()
    for name in names:
        patterns.add(name, collect)
    rewrite.walk_and_apply_patterns(root, patterns.freeze())
    return found
