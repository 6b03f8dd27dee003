"""fusion-outline: deduplicate groups into module-level kernels.

Each `fusion.group` becomes a `fusion.launch` of a `fusion.kernel` symbol
holding its body. Two groups whose bodies print the same once values are
renumbered (canonical form: generic, local scope, no locations) share one
kernel, so each structural class is compiled once: the first group's body
moves into it, the others' go with their groups.

Groups that print the same except for float constants the lowering emits as
plain operands (`x * 0.5` and `x * 0.25`, two layer norms' eps; see
`liftable_constants`) share one kernel too (`lift-constants`, on by
default): the constants whose values differ within the class become the
kernel's scalar arguments (`fusion.scalar` marks) and each launch passes its
own values (`scalars`). Lifted only where it merges kernels: a constant all
the class agrees on stays a literal. The kernel body holds the smallest of
the class's value vectors, so neither SSA names nor the groups' order
change the output.
"""

from __future__ import annotations

import dataclasses
import math

from mlirfuse.analysis import AnalysisManager
from mlirfuse.dialect import SCALAR_MARK, BodyForm, GroupKind, build_kernel, build_launch, canonical_form, group_kind
from mlirfuse.errors import PipelineError
from mlirfuse.ir import constant_op_value, constant_value, ir
from mlirfuse.ops.elementwise import liftable_constants
from mlirfuse.passes.base import ModulePass
from mlirfuse.passes.options import option
from mlirfuse.passes.rewriter import FusionRewriter

# fusion-outline's precision option: what a kernel's lowering does with f16/bf16 intermediates.
PRECISIONS = ("fast", "eager")


def kernel_name(kernel, index: int) -> str:
    """fused_<first ops>_<n>, like Inductor's names: readable in traces.

    The stem holds whole op names only, as many as fit in 40 characters
    (the first one always): a name is never cut mid-op.
    """
    ops = [op.operation.name.split(".")[2] for op in kernel.regions[0].blocks[0].operations if op.operation.name.startswith("torch.aten.")]
    stem = ""
    for op in dict.fromkeys(ops):
        longer = f"{stem}_{op}" if stem else op
        if stem and len(longer) > 40:
            break
        stem = longer
    return f"fused_{stem.strip('_') or 'copy'}_{index}"


@dataclasses.dataclass(frozen=True)
class Outline(ModulePass):
    """Outline each fusion.group into a fusion.kernel symbol and call it with fusion.launch; structurally identical groups share one kernel."""

    name = "fusion-outline"

    precision: str = option(
        "fast", "fast: a kernel keeps f16/bf16 intermediates in f32; eager: each op's f16/bf16 result is "
        "rounded to its dtype, as eager stores it (pointwise chains then equal eager's bit for bit)",
    )
    lift_constants: bool = option(
        True, "groups differing only in float constants the lowering prints as plain operands (x * 0.5 vs "
        "x * 0.25, another eps) share one kernel taking the differing ones as scalar arguments",
    )

    hoist_views: bool = option(
        True, "groups differing only in which piece of an operand they read (a select's index, a slice's start: "
        "the steps of an unrolled RNN reading x[t]) share one kernel taking the piece as its operand, the view "
        "taken before each launch",
    )

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise PipelineError(f"option 'precision' of pass '{self.name}' is one of {', '.join(PRECISIONS)}, "
                                f"got '{self.precision}'", option="precision")

    def apply(self, module: ir.Operation, am=None) -> None:
        am = am or AnalysisManager()
        rewriter = FusionRewriter(am)
        body = module.regions[0].blocks[0]
        # Extern groups are ATen calls, not Triton kernels: they stay in place.
        groups = [op for op in _groups(module) if group_kind(op) != GroupKind.EXTERN]
        if not groups:
            return
        anchor = body.operations[0]
        existing = [op for op in body.operations if op.operation.name == "fusion.kernel"]
        # Forms compared as `BodyForm.key`s: what `canonical_form` spells, not printed.
        by_form = {BodyForm(k).key(): k.attributes["sym_name"].value for k in existing}
        count = len(existing)
        # What a kernel's `precision` attribute will say: part of its form (fusion-outline{precision=eager}).
        precision = None if self.precision == "fast" else self.precision
        # Each body read once, in its group: hoist-views' class forms and the kernels' forms are printed from that.
        # A body moves into a kernel of its own only where its form is new (GPT-32: 6 of 224).
        forms = [BodyForm(group, precision) for group in groups]
        # Per group, the arguments hoist-views dropped and the views it appended (a group's operands are read
        # as its launch is built: earlier launches replace the groups they read).
        # Keys by layout (`BodyForm.key`'s memo): the bodies hoist-views moved views out of are laid out alike.
        memo: dict = {}
        hoisted = _hoist_views(groups, forms, rewriter, memo) if self.hoist_views else {}
        lifted = _lift(groups, forms, rewriter) if self.lift_constants else [()] * len(groups)
        for i, (group, scalars) in enumerate(zip(groups, lifted)):
            # lift-constants rewrote it: read again
            form = BodyForm(group, precision).key() if scalars else forms[i].key(memo=memo)
            if am.verify and not scalars and forms[i].text() != canonical_form(group, precision=precision):
                raise AssertionError(f"the form printed for group #{i} after hoist-views is not its body's")
            name = by_form.get(form)
            if name is None:
                kernel = build_kernel("", group_kind(group), loc=group.location, ip=ir.InsertionPoint(anchor))
                group.regions[0].blocks[0].append_to(kernel.regions[0])  # move, not copy
                if precision is not None:
                    kernel.attributes["precision"] = ir.StringAttr.get(precision)
                name = kernel_name(kernel, count)
                count += 1
                kernel.attributes["sym_name"] = ir.StringAttr.get(name)
                by_form[form] = name
            dropped, views = hoisted.get(i, ((), []))
            reads = [v for k, v in enumerate(group.operands) if k not in dropped] + views
            launch = build_launch(name, reads, [r.type for r in group.results], scalars, loc=group.location)
            if "fusion.explain" in group.attributes:  # per call site, so not part of the kernel
                launch.attributes["fusion.explain"] = group.attributes["fusion.explain"]
            rewriter.insert_before(launch, group)
            rewriter.replace_op(group, list(launch.results))


# The view ops hoist-views moves out of a kernel, and their operands that may differ within a class: a select's
# index, a slice's start and end (its length is the result type's, which the form prints).
_VIEW_INDICES = {"torch.aten.select.int": (2,), "torch.aten.slice.Tensor": (2, 3)}


def _hoistable_views(form: BodyForm) -> tuple[list, tuple, tuple]:
    """The body's selects and slices of a kernel argument with constant int operands (None for a slice's open
    ends): views a launch can take of its operand instead, by op index in body order; the values of their
    operands that may differ within a class (`_VIEW_INDICES`), per view; and the body's op names but
    constants' (a class's members have the same)."""
    names = []  # an index's own constant does not enter the form
    views = []
    arguments = len(form.args)  # serials below it are the block's arguments
    for index, (name, operands, _, _) in enumerate(form.ops):
        if not name.startswith("torch.constant."):
            names.append(name)
            if name in _VIEW_INDICES and operands[0] < arguments:
                views.append((index, name, operands))
    found, indices = [], []
    constants: dict[int, object] = {}  # serial -> its constant value, asked once (views share their dims and steps)
    for index, name, operands in views:
        for v in operands[1:]:
            if v not in constants:
                constants[v] = _constant(form, v)
        values = [constants[v] for v in operands[1:]]
        if all(type(v) is int or (v is None and k >= 2) for k, v in enumerate(values, 1)):
            found.append(index)
            indices.append(tuple(values[k - 1] for k in _VIEW_INDICES[name]))
    return found, tuple(indices), tuple(names)


def _constant(form: BodyForm, serial: int):
    """`constant_value` of the value `serial` of `form`, asked of its op as the form read it."""
    index = form.defined_by[serial]
    return constant_value(form.values[serial]) if index < 0 else constant_op_value(form.operations[index])


def _hoist_views(groups: list, forms: list, rewriter: FusionRewriter, memo: dict) -> dict[int, tuple[set, list]]:
    """Groups equal but for the indices of views of their arguments (`_hoistable_views`) take the views as
    operands instead: each view, and the constants it reads, cloned before its group at function level.

    A class: the bodies printing the same with those indices open (`BodyForm.key`'s holes; constants only
    they read do not print). Hoisted only the views whose indices differ within the class, as lift-constants
    lifts: elsewhere kernels keep reading their pieces by index arithmetic. An argument left
    unread (x whose x[t] moved out) is dropped from the body (the kernel's arguments) and the launch. Returns,
    per group moved out of, (its dropped argument numbers, the views its launch reads after its other
    operands); `forms` (each body as read) follow. Class forms are printed only for bodies holding the same
    ops as one reading other indices (a 32-layer stack's layers read the same pieces: none is).
    """
    candidates: dict[tuple, list] = {}  # (op names but constants', sorted; how many views) -> [(kernel index, views, index vector)]
    alike: dict[tuple, int] = {}  # a form's key -> its number among the keys (each hashed once)
    found: list = []  # by that number: the form's `_hoistable_views`, the same for every form of its key
    for i, form in enumerate(forms):
        if form.hidden:  # (equal keys do not say that a `fusion.scalar` value is)
            views, vector, names = _hoistable_views(form)
        else:
            number = alike.setdefault(form.key(), len(alike))
            if number == len(found):
                found.append(_hoistable_views(form))
            views, vector, names = found[number]
        if views:
            candidates.setdefault((tuple(sorted(names)), len(views)), []).append((i, views, vector))
    classes: dict[str, list] = {}
    for members in candidates.values():
        if len({vector for _, _, vector in members}) < 2:
            continue
        for i, views, vector in members:
            form = forms[i]
            holes = {view: _VIEW_INDICES[form.ops[view][0]] for view in views}
            constants = {form.ops[view][1][k] for view, positions in holes.items() for k in positions}
            classes.setdefault(form.key(_only_indices(form, constants, holes), holes, memo), []).append((i, views, vector))
    hoisted = {}
    for members in classes.values():
        differ = [p for p in range(len(members[0][2])) if len({vector[p] for _, _, vector in members}) > 1]
        if not differ:
            continue
        for i, views, _ in members:
            hoisted[i] = _views_to_operands(groups[i], forms[i], [views[p] for p in differ], rewriter)
    return hoisted


def _only_indices(form: BodyForm, constants: set, holes: dict) -> set:
    """The serials of `constants` read at `holes` (op index -> operand numbers) and nowhere else.

    Asked of a form as read (no op gone): each body op's read is a use, so a constant read nowhere else is one
    whose uses (in ops' regions too, which the form does not read) are its reads at the holes."""
    reads = dict.fromkeys(constants, 0)  # how often the body's ops read each at a hole
    ops = form.ops
    for index, positions in holes.items():
        operands = ops[index][1]
        for k in positions:
            v = operands[k]
            if v in reads:
                reads[v] += 1
    return {v for v, n in reads.items() if _used(form.values[v], n)}


def _used(value: ir.Value, n: int) -> bool:
    """Has `value` exactly `n` uses? (Its uses asked only up to the one past `n`.)"""
    count = 0
    for _ in value.uses:
        count += 1
        if count > n:
            return False
    return count == n


def _views_to_operands(group, form: BodyForm, views: list, rewriter: FusionRewriter) -> tuple[set, list]:
    """Move the ops `views` (indices in `form`) out of `group`'s body: each taken before `group` of the operand
    its argument stands for, read through a new argument; (the argument numbers left unread and dropped, the
    views in argument order). `form` follows (`BodyForm.move_out`). The body's arguments are the kernel's it
    becomes: the group, replaced by a launch, is not read again."""
    block = group.regions[0].blocks[0]
    first_new = len(block.arguments)
    dead, sources, outside_views = {}, set(), []
    for index in views:
        view = form.operations[index]
        source = ir.BlockArgument(view.operands[0]).arg_number
        sources.add(source)
        outside = rewriter.clone_before(view, group)
        rewriter.set_operand(outside, 0, group.operands[source])
        for k in range(1, len(view.operands)):
            rewriter.set_operand(outside, k, rewriter.clone_before(view.operands[k].owner, outside).results[0])
        outside_views.append(outside.results[0])
        view.results[0].replace_all_uses_with(block.add_argument(view.results[0].type, view.location))
        dead.update((form.defined_by[v], None) for v in form.ops[index][1][1:])
        view.erase()
    erased = []
    for index in dead:
        constant = form.operations[index]
        if not any(True for r in constant.results for _ in r.uses):
            constant.erase()
            erased.append(index)
    dropped = {index for index in sources if not any(True for _ in block.arguments[index].uses)}
    for index in sorted(dropped, reverse=True):
        block.erase_argument(index)
    assert len(block.arguments) == first_new - len(dropped) + len(outside_views)
    form.move_out(views, erased, dropped)
    return dropped, outside_views


def _lift(groups: list, forms: list, rewriter: FusionRewriter) -> list[tuple[float, ...]]:
    """The values each group's launch passes: () unless its class shares one kernel modulo constants.

    A class: the bodies printing the same once each use of a liftable constant stands for a value of its
    own. Where the class has several vectors of those values, each member gets one constant per such use,
    right before its user (so members agree however they shared constants), and the uses where the values
    differ become scalar arguments (`fusion.scalar`, holding the smallest vector's values).
    """
    classes: dict[tuple, list] = {}  # the form with the liftable constants open -> [(kernel index, its form's key)]
    known: dict[tuple, tuple] = {}  # a form's key -> (its liftable constants' serials, its class): one per body
    for i, (group, form) in enumerate(zip(groups, forms)):
        if "torch.constant.float" not in form.names:
            continue  # (most kernels: no float constant to lift)
        # Forms of one key are one body, constants and all (unless a `fusion.scalar` value prints `?`).
        key = None if form.hidden else form.key()
        constants, class_key = known.get(key) or (None, None)
        if constants is None:
            constants = _liftable(group, form)
            class_key = form.key(constants) if constants else None
            if key is not None:
                known[key] = constants, class_key
        if constants:
            classes.setdefault(class_key, []).append((i, key))
    lifted = [()] * len(groups)
    for members in classes.values():
        if members[0][1] is not None and all(key == members[0][1] for _, key in members):
            continue  # one body: its values agree
        members = [(i, _uses(forms[i], _liftable(groups[i], forms[i]) if key is None else known[key][0]))
                   for i, key in members]
        vectors = [[constant_value(op.operands[k]) for op, k in uses] for _, uses in members]
        # By bits: 0.0 and -0.0 are different literals.
        differ = [p for p in range(len(vectors[0])) if len({v[p].hex() for v in vectors}) > 1]
        if not differ:
            continue
        smallest = min(([v[p] for p in differ] for v in vectors), key=lambda v: [(x, math.copysign(1, x)) for x in v])
        for (i, uses), vector in zip(members, vectors):
            _one_constant_per_use(uses, {p: (n, smallest[n]) for n, p in enumerate(differ)}, rewriter)
            lifted[i] = tuple(vector[p] for p in differ)
    return lifted


def _liftable(group, form: BodyForm) -> set:
    """The serials of the liftable constants (`liftable_constants`) of `group`'s body, read as `form`."""
    floats = [form.operations[index] for index, (name, _, _, _) in enumerate(form.ops)
              if name == "torch.constant.float" and index not in form.gone]
    return {form.serials[v] for v in liftable_constants(group.regions[0].blocks[0], floats)}


def _uses(form: BodyForm, constants: set) -> list:
    """The uses of `constants` (serials) in `form`'s body: (user, operand number), in body order."""
    return [(form.operations[index], k) for index, (_, operands, _, _) in enumerate(form.ops) if index not in form.gone
            for k, v in enumerate(operands) if v in constants]


def _one_constant_per_use(uses: list, marks: dict, rewriter: FusionRewriter) -> None:
    """A fresh constant before each of `uses` (user, operand number); the `p`th marked `fusion.scalar = n`
    with value `v` where `marks[p] == (n, v)`; the constants they replace, now unused, go."""
    old = {op.operands[k].owner for op, k in uses}
    for p, (op, k) in enumerate(uses):
        constant = rewriter.clone_before(op.operands[k].owner, op)
        if p in marks:
            n, value = marks[p]
            constant.attributes[SCALAR_MARK] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), n)
            constant.attributes["value"] = ir.FloatAttr.get_f64(value)
        rewriter.set_operand(op, k, constant.results[0])
    for constant in old:
        rewriter.erase(constant)


def _groups(op: ir.Operation) -> list:
    """The fusion.group ops under `op`, in order; no body is entered (groups do not nest: a kernel's worth of
    torch ops each, not visited)."""
    found = []

    def visit(o):
        if o.name == "fusion.group":
            found.append(o.opview)
            return ir.WalkResult.SKIP
        return ir.WalkResult.SKIP if o.name == "fusion.kernel" else ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found
