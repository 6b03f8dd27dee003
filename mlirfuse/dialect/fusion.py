"""The `fusion` dialect: regions of torch ops that become one kernel each.

- `fusion.group`  operands, results, one region isolated from above whose
                  block arguments stand for the operands; ends in `fusion.yield`.
- `fusion.yield`  terminator of a group or kernel body.
- `fusion.kernel` module-level symbol holding one outlined canonical region.
- `fusion.launch` calls a `fusion.kernel` with tensors, yields its results.

Scalar arguments. A kernel shared by groups that differ only in float
constants (fusion-outline's `lift-constants`) marks each such constant of its
body `torch.constant.float 5.0e-01 {fusion.scalar = 0 : i64}`: argument #0,
its value there only a representative; each launch passes its own values as
`scalars = array<f64: ...>`, in argument order. An attribute rather than
`!torch.float` operands: a kernel's block arguments and a launch's operands
stay tensors (what every lowering, the liveness plan and the cost model
read), the kernel body stays a complete torch program the lowering can
print on its own, and the values are in the launch, where they differ.

Why these are not `dialects.ext` (IRDL) ops: IRDL verifies every element of
a variadic operand or result list against one constraint *variable*, and a
variable binds to the first type it sees, so an IRDL op cannot take
`(!torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>)` - the very operand
list a broadcasting group has ("expected '...[4,16],f32>' but got
'...[16],f32>'"; see mlir/lib/Dialect/IRDL/IRDLLoading.cpp, irdlOpVerifier).
Until IRDL grows non-binding constraints, the ops live in an unregistered
`fusion` namespace and `verify_fusion_ops` below is their verifier: the
driver runs it after parsing and after every pass, and each error names the
op, the position and what was expected. The ops print in MLIR's generic
form either way.
"""

from __future__ import annotations

import functools

from mlirfuse.dialect.kinds import GROUP_KINDS, REDUCTION_KINDS, GroupKind, group_kind, kind_attr, kind_attribute
from mlirfuse.ir import VALUE_CONSTANTS, add_dialect_search_prefix, asm, body_operations, ir, last_op, op_id
from mlirfuse.ops.attention import MATMULS, SDPA, SOFTMAXES
from mlirfuse.ops.conv import CONV_OPS, Conv, conv
from mlirfuse.ops.elementwise import liftable_constants
from mlirfuse.ops.indexing import scatter_op
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, gemm, row_sum_of_a, why_not_k_sum
from mlirfuse.ops.reductions import REDUCTIONS, Reduction, reduction
from mlirfuse.ops.scans import SCANS, Scan, scan


class _Failed(Exception):
    pass


def _error(op, message: str):
    op.location.emit_error(f"'{op.name}' op {message}")
    raise _Failed


def _verify_body(op, region: ir.Region, operand_types, result_types, what: str) -> list:
    """Shared checks for a group's or kernel's single-block body; its ops."""
    blocks = list(region.blocks)
    if len(blocks) != 1:
        _error(op, f"expects a body with exactly one block, found {len(blocks)}")
    block = blocks[0]
    arg_types = [a.type for a in block.arguments]
    if operand_types is not None:
        if len(arg_types) != len(operand_types):
            _error(op, f"has {len(operand_types)} {what} but its body has {len(arg_types)} block arguments")
        for i, (a, o) in enumerate(zip(arg_types, operand_types)):
            if a != o:
                _error(op, f"block argument #{i} has type {a} but {what[:-1]} #{i} has type {o}")
    ops = list(block.operations)
    if not ops or ops[-1].operation.name != "fusion.yield":
        _error(op, "expects its body to end in 'fusion.yield'")
    _verify_yield(ops[-1])  # the walk does not enter bodies
    yielded = [v.type for v in ops[-1].operands]
    if result_types is not None:
        if len(yielded) != len(result_types):
            _error(op, f"yields {len(yielded)} values but has {len(result_types)} results")
        for i, (y, r) in enumerate(zip(yielded, result_types)):
            if y != r:
                _error(op, f"yields type {y} at #{i} but result #{i} has type {r}")
    # The values defined in the block: a set lookup per operand, not an owner (an OpView built) per operand.
    defined = set(block.arguments)
    for inner in ops:
        defined.update(inner.results)
    for inner in ops[:-1]:
        name = inner.operation.name
        if not name.startswith("torch."):
            _error(op, f"body may only hold torch ops, found '{name}'")
        for v in inner.operands:
            if v not in defined:
                _error(op, "body uses a value defined outside it; groups are isolated from above")
    return ops


def _kind(op) -> GroupKind:
    kind = kind_attribute(op)
    if kind is None:
        _error(op, "requires a string attribute 'kind'")
    if kind not in GROUP_KINDS:
        _error(op, f"has unknown kind \"{kind}\"; expected one of {', '.join(GROUP_KINDS)}")
    return GroupKind(kind)


def _verify_kind_matches_body(op, kind: GroupKind, ops: list) -> None:
    """A reduction (scan) group computes a reduction (scan) mlirfuse fuses; a concat group ends in one cat; a matmul group holds GEMMs.

    `ops`: the body's. Passes and the Triton lowering read the kind and rely on the body to match.
    """
    reductions = [o for o in ops if o.operation.name in REDUCTIONS]
    if kind in REDUCTION_KINDS:
        if not reductions:
            _error(op, f"of kind \"{kind}\" holds no reduction")
        for r in reductions:
            why = reduction(r)
            if not isinstance(why, Reduction):
                _error(op, f"of kind \"{kind}\" holds a '{r.operation.name}' that is not fused: {why}")
    elif kind in (GroupKind.POINTWISE, GroupKind.CONCAT, GroupKind.ATTENTION) and reductions:
        _error(op, f"of kind \"{kind}\" holds a reduction '{reductions[0].operation.name}'")
    scans = [o for o in ops if o.operation.name in SCANS]
    if kind == GroupKind.SCAN:
        if not scans or reductions:
            _error(op, "of kind \"scan\" must hold a scan and no reduction")
        for s in scans:
            why = scan(s)
            if not isinstance(why, Scan):
                _error(op, f"of kind \"scan\" holds a '{s.operation.name}' that is not fused: {why}")
    elif scans and kind in (GroupKind.POINTWISE, GroupKind.CONCAT, *REDUCTION_KINDS):
        _error(op, f"of kind \"{kind}\" holds a scan '{scans[0].operation.name}'")
    if kind == GroupKind.ATTENTION:
        names = [o.operation.name for o in ops]
        explicit = sum(n in SOFTMAXES for n in names) == 1 and sum(n in MATMULS for n in names) == 2
        if not (names.count(SDPA) == 1 and not any(n in SOFTMAXES or n in MATMULS for n in names)) and not (
            explicit and SDPA not in names
        ):
            _error(op, "of kind \"attention\" holds neither one 'torch.aten.scaled_dot_product_attention' "
                   "nor matmul -> softmax -> matmul")
    if kind == GroupKind.MATMUL:
        matmuls = [o for o in ops if o.operation.name in MATMUL_OPS]
        # The reductions a GEMM's kernel computes: the row sums of a normalization of its A, before it (RMSNorm),
        # or its A summed over K, beside it (a bias gradient; one GEMM).
        others = [r for r in reductions if not row_sum_of_a(r, matmuls)]
        if others and (len(matmuls) != 1 or any(why_not_k_sum(r, matmuls[0]) for r in others)):
            _error(op, f"of kind \"matmul\" holds a reduction '{others[0].operation.name}' that is neither a row sum "
                   "of a normalization of its A nor its one GEMM's A summed over K")
        if not matmuls:
            _error(op, "of kind \"matmul\" holds no matmul op")
        for mm in matmuls:  # several: a grouped GEMM (they share A)
            why = gemm(mm)
            if not isinstance(why, Gemm):
                _error(op, f"of kind \"matmul\" holds a '{mm.operation.name}' the GEMM template does not take: {why}")
    if kind == GroupKind.MATMUL_CHAIN:
        matmuls = [o for o in ops if o.operation.name in MATMUL_OPS]
        gemms = [gemm(mm) for mm in matmuls]
        if reductions or len(matmuls) != 2 or not all(isinstance(g, Gemm) for g in gemms):
            _error(op, "of kind \"matmul-chain\" must hold two GEMMs the template takes and no reduction")
        first, second = matmuls
        if not _reaches(first.results[0], second.operands[gemms[1].a]):
            _error(op, "of kind \"matmul-chain\": the second GEMM's A must be computed from the first GEMM's result")
    if kind == GroupKind.CONV:
        convs = [o for o in ops if o.operation.name in CONV_OPS]
        if reductions or len(convs) != 1:
            _error(op, "of kind \"conv\" must hold one convolution and no reduction")
        why = conv(convs[0])
        if not isinstance(why, Conv):
            _error(op, f"of kind \"conv\" holds a '{convs[0].operation.name}' the template does not take: {why}")
    if kind == GroupKind.SCATTER and scatter_op(op.regions[0].blocks[0]) is None:
        _error(op, "of kind \"scatter\" must hold exactly one scatter op")
    if kind == GroupKind.CONCAT:
        cats = sum(o.operation.name == "torch.aten.cat" for o in ops)
        if cats != 1:
            _error(op, f"of kind \"concat\" holds {cats} 'torch.aten.cat' ops, expected exactly one")


def _reaches(source: ir.Value, target: ir.Value) -> bool:
    """Does `target` depend on `source` within one block (through the ops between them)?"""
    seen, stack = set(), [source]
    while stack:
        v = stack.pop()
        if v == target:
            return True
        for use in v.uses:
            for r in use.owner.results:
                if r not in seen:
                    seen.add(r)
                    stack.append(r)
    return False


def _verify_group(op) -> None:
    kind = _kind(op)
    if len(op.regions) != 1:
        _error(op, "expects one region")
    if len(op.results) == 0:
        _error(op, "must have at least one result")
    ops = _verify_body(op, op.regions[0], [v.type for v in op.operands], [r.type for r in op.results], "operands")
    _verify_kind_matches_body(op, kind, ops)


def _verify_yield(op) -> None:
    parent = op.parent
    if parent is None or parent.name not in ("fusion.group", "fusion.kernel"):
        _error(op, "expects parent op 'fusion.group' or 'fusion.kernel'")
    if op.results:
        _error(op, "has no results")


def _verify_kernel(op) -> None:
    kind = _kind(op)
    if "sym_name" not in op.attributes or not isinstance(op.attributes["sym_name"], ir.StringAttr):
        _error(op, "requires a string attribute 'sym_name'")
    parent = op.parent
    if parent is None or parent.name != "builtin.module":
        _error(op, "must be defined at module level")
    if len(op.regions) != 1 or op.operands or op.results:
        _error(op, "takes no operands or results and holds one region")
    ops = _verify_body(op, op.regions[0], None, None, "arguments")
    _verify_kind_matches_body(op, kind, ops)
    _verify_scalars(op, op.regions[0].blocks[0])


def _verify_scalars(op, block: ir.Block) -> None:
    """A kernel's `fusion.scalar` marks number its liftable constants 0, 1, ... in body order."""
    marked = [o for o in block.operations if SCALAR_MARK in o.attributes]
    if not marked:
        return
    liftable = set(liftable_constants(block))
    for i, const in enumerate(marked):
        mark = const.attributes[SCALAR_MARK]
        if not isinstance(mark, ir.IntegerAttr) or ir.IntegerAttr(mark).value != i:
            _error(op, f"numbers its scalar arguments in body order: expected '{SCALAR_MARK} = {i}', found {mark}")
        if const.results[0] not in liftable:
            _error(op, f"scalar argument #{i} is not a float constant every use of which prints it as a plain operand")


def kernel_scalars(kernel) -> int:
    """How many scalar arguments (`fusion.scalar` constants) a kernel takes."""
    return sum(SCALAR_MARK in o.attributes for o in kernel.regions[0].blocks[0].operations)


def launch_scalars(launch) -> tuple[float, ...]:
    """The values a launch passes for its kernel's scalar arguments."""
    if LAUNCH_SCALARS not in launch.attributes:
        return ()
    return tuple(ir.DenseF64ArrayAttr(launch.attributes[LAUNCH_SCALARS]))


def constant_merges(module) -> int:
    """Kernels saved by taking constants as arguments: per kernel, its launches' distinct `scalars` less one."""
    values: dict[str, set] = {}
    for func in module.body.operations:
        if func.operation.name != "func.func" or not len(func.regions[0].blocks):
            continue
        for op in func.regions[0].blocks[0].operations:
            if op.operation.name == "fusion.launch" and LAUNCH_SCALARS in op.attributes:
                kernel = ir.FlatSymbolRefAttr(op.attributes["kernel"]).value
                values.setdefault(kernel, set()).add(tuple(v.hex() for v in launch_scalars(op)))
    return sum(len(vectors) - 1 for vectors in values.values())


def _verify_launch(op, kernels: dict | None = None, signatures: dict | None = None) -> None:
    """`kernels`: the enclosing module's kernels by name, where the caller has them (else each is looked for);
    `signatures`: what a launch of a kernel must match, by the kernel's op_id (by `kernels`' identity and the
    name where the caller has `kernels`), filled as kernels are met (a kernel launched 400 times is read once).
    The launch's attributes are listed once."""
    attributes = op.attributes
    symbol = attributes["kernel"] if "kernel" in attributes else None
    if not isinstance(symbol, ir.FlatSymbolRefAttr):
        _error(op, "requires a symbol attribute 'kernel'")
    name = symbol.value
    kernel = find_kernel(op, name) if kernels is None else kernels.get(name)
    if kernel is None:
        _error(op, f"refers to unknown kernel @{name}")
    key = op_id(kernel) if kernels is None else (id(kernels), name)
    signature = None if signatures is None else signatures.get(key)
    if signature is None:
        signature = _signature(kernel)
        if signatures is not None:
            signatures[key] = signature
    arg_types, yielded, taken = signature
    in_types = [v.type for v in op.operands]
    if arg_types != in_types:
        _error(
            op,
            f"operand types ({', '.join(map(str, in_types))}) do not match "
            f"@{name} arguments ({', '.join(map(str, arg_types))})",
        )
    if yielded != [r.type for r in op.results]:
        _error(op, f"result types do not match what @{name} yields")
    scalars = attributes[LAUNCH_SCALARS] if LAUNCH_SCALARS in attributes else None
    if scalars is not None and not isinstance(scalars, ir.DenseF64ArrayAttr):
        _error(op, f"attribute '{LAUNCH_SCALARS}' must be an array<f64: ...>")
    passed = 0 if scalars is None else len(scalars)
    if passed != taken:
        _error(op, f"passes {passed} scalar arguments but @{name} takes {taken}")


def _signature(kernel) -> tuple[list, list, int]:
    """What a launch of `kernel` must match: its argument types, the types it yields, how many scalars it takes."""
    block = kernel.regions[0].blocks[0]
    return [a.type for a in block.arguments], [v.type for v in last_op(block).operands], kernel_scalars(kernel)


_VERIFIERS = {
    "fusion.group": _verify_group,
    "fusion.yield": _verify_yield,
    "fusion.kernel": _verify_kernel,
    "fusion.launch": _verify_launch,
}

# The ops `verify_fusion_ops` has a verifier for (it reports any other `fusion.*` op as unknown).
VERIFIED_OPS = frozenset(_VERIFIERS)


def verify_fusion_ops(root: ir.Operation) -> bool:
    """Verify every fusion op under `root`; errors go to the context's diagnostics.

    The walk does not enter group and kernel bodies: their verifiers go
    through the body once (torch ops only, isolated from above), which is
    what keeps running this after every pass cheap.
    """
    ok = True
    kernels_of: dict[int, dict] = {}  # a module's op_id -> its kernels by name: one scan per module, not per launch
    # A launch's parent's op_id -> the kernels of the module holding it (None: none does): one climb per function.
    kernels_under: dict[int, dict | None] = {}
    signatures: dict = {}  # what a kernel's launches must match (`_verify_launch`)

    def visit(op):
        nonlocal ok
        name = op.name
        verifier = _VERIFIERS.get(name)
        if verifier is None:
            if name.startswith("fusion."):
                op.location.emit_error(f"unknown operation '{name}' in the fusion dialect")
                ok = False
            return ir.WalkResult.ADVANCE
        try:
            if name == "fusion.launch":
                parent = op.parent
                under = None if parent is None else op_id(parent)
                if under in kernels_under:
                    kernels = kernels_under[under]
                else:
                    module = _enclosing_module(op)
                    kernels = None if module is None else kernels_of.get(op_id(module))
                    if module is not None and kernels is None:
                        kernels = kernels_of[op_id(module)] = _kernels(module)
                    kernels_under[under] = kernels
                _verify_launch(op, kernels, signatures)
            else:
                verifier(op)
        except _Failed:
            ok = False
        return ir.WalkResult.SKIP if name in _HAS_BODY else ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ok


_HAS_BODY = ("fusion.group", "fusion.kernel")


def _enclosing_module(op):
    module = op.operation
    while module is not None and module.name != "builtin.module":
        module = module.parent
    return module


def _kernels(module) -> dict:
    """`module`'s `fusion.kernel` ops by name (the first of a name, as `find_kernel` finds it)."""
    found = {}
    for candidate in module.regions[0].blocks[0].operations:
        if candidate.operation.name == "fusion.kernel" and "sym_name" in candidate.attributes:
            sym_name = candidate.attributes["sym_name"]
            if isinstance(sym_name, ir.StringAttr):
                found.setdefault(sym_name.value, candidate)
    return found


def find_kernel(op: ir.Operation, name: str):
    """The `fusion.kernel` named `name` in the module enclosing `op`."""
    module = _enclosing_module(op)
    if module is None:
        return None
    for candidate in module.regions[0].blocks[0].operations:
        if candidate.operation.name == "fusion.kernel" and "sym_name" in candidate.attributes:
            sym_name = candidate.attributes["sym_name"]
            if isinstance(sym_name, ir.StringAttr) and sym_name.value == name:
                return candidate
    return None


def canonical_form(region_op, lifted=(), precision: str | None = None) -> str:
    """The text two groups/kernels share exactly when they compute the same thing.

    Built from the body alone: block arguments and values numbered in order
    of appearance, attributes sorted (so constants compare by value), types
    spelled out; the op's own name and symbol do not enter. (Printing the op
    would number values across the whole module: the fusion ops are not
    registered as isolated from above, so every print costs the module.)
    A scalar argument's value (a `fusion.scalar` constant) prints as `?`:
    launches pass it. Constants in `lifted` do not print at all, each use
    of one printing `?`: the form of a class of bodies equal up to those
    constants, however each shares its constants among uses. `precision`:
    as `BodyForm` takes it.
    """
    form = BodyForm(region_op, precision)
    return form.text({form.serials[v] for v in lifted if v in form.serials})


@functools.lru_cache(maxsize=8192)
def _constant_call(name: str, value: ir.Attribute) -> tuple[str, str]:
    """`BodyForm`'s ("name(", ") {attributes}") of a constant whose one attribute is `value`."""
    return f"{name}(", f") {{value = {asm(value)}}}"


@functools.lru_cache(maxsize=1024)
def _bare_call(name: str) -> tuple[str, str]:
    """`BodyForm`'s ("name(", ") {attributes}") of an op without attributes."""
    return f"{name}(", ") {}"


class BodyForm:
    """A group's or kernel's body read once, to print `canonical_form`s from without asking the bindings again.

    Reading asks for every op's operands, attributes and result types (a few
    µs an op: what a form costs); printing is Python alone. Values are
    numbered by serial: the block's arguments, then each op's results in
    order; ops by their index in the body (the terminator last).
    fusion-outline reads each kernel once: its class form with the views'
    indices open, then, once the views moved out (`move_out`), its own.
    """

    def __init__(self, region_op, precision: str | None = None):
        """`precision`: the `precision` attribute of the kernel a group's body will move into, read as that
        kernel's would be (None: `region_op`'s own, if any)."""
        block = region_op.regions[0].blocks[0]
        self.head = [group_kind(region_op).value]
        if precision is not None:
            self.head.append(precision)
        elif "precision" in region_op.attributes:  # fusion-outline{precision=eager}: another kernel
            self.head.append(ir.StringAttr(region_op.attributes["precision"]).value)
        # Does a `fusion.scalar` constant's value print `?`? Then equal keys do not say that values are equal.
        self.hidden = False
        serials: dict[ir.Value, int] = {}
        values: list[ir.Value] = list(block.arguments)  # serial -> value
        self.args: list[tuple[int, str]] = []  # (serial, type) of each argument, in order
        for serial, arg in enumerate(values):
            serials[arg] = serial
            self.args.append((serial, asm(arg.type)))
        self._arguments = len(values)  # the first op's first result's serial
        ops, terminator = body_operations(region_op)
        ops.append(terminator)
        self.operations = ops  # the body's ir.Operations, by index
        self.ops: list[tuple[str, tuple, tuple[str, str], tuple]] = []  # (name, operand serials, ("name(", ") {attributes}"), ((serial, type), ...))
        defined_by = [-1] * len(values)  # serial -> the index of the op defining it (-1: an argument)
        keys = []  # per op, what `key` holds of it while values are numbered by serial
        serial_of = serials.__getitem__
        add_value, add_op, add_key, add_definer = values.append, self.ops.append, keys.append, defined_by.append
        last = len(ops) - 1
        for index, op in enumerate(ops):
            operands = tuple(map(serial_of, op.operands))
            name = op.name
            attributes = op.attributes
            count = len(attributes)
            if count == 1 and name in VALUE_CONSTANTS:  # half of an unrolled RNN's body ops
                call = _constant_call(name, attributes["value"])
            elif count:
                hidden = "value" if SCALAR_MARK in attributes else None
                if hidden:
                    self.hidden = True
                attrs = ", ".join(sorted([f"{name} = {'?' if name == hidden else asm(attr)}" for name, attr in attributes.items()]))
                call = (f"{name}(", f") {{{attrs}}}")
            else:
                call = _bare_call(name)
            try:  # most ops have one result: `op.result` builds no result list
                result = op.result if index != last else None
            except ValueError:  # none or several
                result = None
            if result is not None:
                serials[result] = serial = len(values)
                add_value(result)
                add_definer(index)
                type_ = asm(result.type)
                add_op((name, operands, call, ((serial, type_),)))
                add_key((call, operands, (type_,)))
                continue
            results, types = [], []
            for r in op.results:
                serials[r] = serial = len(values)
                add_value(r)
                add_definer(index)
                type_ = asm(r.type)
                results.append((serial, type_))
                types.append(type_)
            add_op((name, operands, call, tuple(results)))
            add_key((call, operands, tuple(types)))
        self.defined_by = defined_by
        self.names = {name for name, _, _, _ in self.ops}  # of every op read, gone since or not
        self.serials = serials
        self.values = values
        self.gone: set[int] = set()  # ops no longer in the body (`move_out`)
        # `key()` as read: values numbered by serial, as `text` numbers them while no op or argument has moved out.
        self._key = (tuple(self.head), tuple([type_ for _, type_ in self.args]), tuple(keys))
        self._keys = keys

    def text(self, lifted=frozenset(), holes: dict | None = None) -> str:
        """`canonical_form`'s text: constants whose serial is in `lifted` left out, each use printing `?`; `holes`
        (op index -> operand numbers): those operands print `?` (fusion-outline's hoist-views: a view's index)."""
        ids: dict[int, str] = {}
        parts = list(self.head)
        for i, (serial, type_) in enumerate(self.args):
            ids[serial] = f"%a{i}"
            parts.append(f"%a{i}: {type_}")
        gone = self.gone
        for index, (_, operands, (call, attrs), results) in enumerate(self.ops):
            if index in gone or (lifted and len(results) == 1 and results[0][0] in lifted):
                continue
            if lifted or holes:
                open_operands = holes.get(index, ()) if holes else ()
                operand_text = ", ".join(["?" if v in lifted or k in open_operands else ids[v] for k, v in enumerate(operands)])
            else:
                operand_text = ", ".join([ids[v] for v in operands])
            if len(results) == 1:
                (serial, type_), = results
                ids[serial] = value = f"%v{len(ids)}"
                parts.append(f"{value}: {type_} = {call}{operand_text}{attrs}")
                continue
            printed = []
            for serial, type_ in results:
                ids[serial] = value = f"%v{len(ids)}"
                printed.append(f"{value}: {type_}")
            parts.append(f"{', '.join(printed)} = {call}{operand_text}{attrs}")
        return "\n".join(parts)

    def key(self, lifted=frozenset(), holes: dict | None = None, memo: dict | None = None) -> tuple:
        """What `text(lifted, holes)` spells, as a tuple of the parts it is printed from: equal exactly where the
        texts are, without printing them (a key for grouping forms, not for storing).

        `memo` (a dict the caller keeps across forms): keys by what they are numbered from (`_layout`), so a
        form laid out as one asked before (an unrolled loop's bodies, equal but for the indices of their views)
        is not numbered again."""
        if not lifted and not holes and self._key is not None:
            return self._key
        if memo is None:
            key = self._numbered(lifted, holes)
        else:
            layout = self._layout(lifted, holes)
            key = memo.get(layout)
            if key is None:
                key = memo[layout] = self._numbered(lifted, holes)
        if not lifted and not holes:
            self._key = key  # until the body changes again (`move_out`)
        return key

    def _layout(self, lifted, holes: dict | None) -> tuple:
        """What `key(lifted, holes)` is numbered from, values still by serial: forms of one layout have one key.

        Per op index: the op's (call, operand serials, result types) as read, an open operand -1; the number of
        its results where the key leaves it out (gone, or a constant in `lifted`). With the arguments (serials
        and types), the number of values before the first op's results, `lifted`, `holes` and the ops gone, that
        is everything the numbering reads: the serials it renumbers are laid out alike."""
        entries = list(self._keys)
        ops, gone = self.ops, self.gone
        for index in gone:
            entries[index] = len(ops[index][3])
        defined_by = self.defined_by
        for serial in lifted:
            index = defined_by[serial]
            if index >= 0 and index not in gone and len(ops[index][3]) == 1:
                entries[index] = 1
        if holes:
            for index, positions in holes.items():
                if index not in gone and entries[index].__class__ is tuple:
                    call, operands, types = entries[index]
                    entries[index] = (call, tuple([-1 if k in positions else v for k, v in enumerate(operands)]), types)
        return (tuple(self.head), self._arguments, tuple(self.args), frozenset(gone), frozenset(lifted),
                tuple(sorted(holes.items())) if holes else (), tuple(entries))

    def _numbered(self, lifted, holes: dict | None) -> tuple:
        """`key(lifted, holes)`, numbered afresh."""
        ids = [-1] * len(self.values)  # serial -> the value's number in the key
        for i, (serial, _) in enumerate(self.args):
            ids[serial] = i
        count = len(self.args)
        id_of = ids.__getitem__
        gone, ops, out = self.gone, self.ops, []
        for index, (call, operands, types) in enumerate(self._keys):
            if index in gone:
                continue
            results = ops[index][3]
            if len(results) == 1:
                serial = results[0][0]
                if lifted and serial in lifted:
                    continue
            open_operands = holes.get(index, ()) if holes else ()
            if (lifted and not lifted.isdisjoint(operands)) or open_operands:
                numbered = tuple([-1 if v in lifted or k in open_operands else ids[v] for k, v in enumerate(operands)])
            else:
                numbered = tuple(map(id_of, operands))
            if len(results) == 1:
                ids[serial] = count
                count += 1
            else:
                for serial, _ in results:
                    ids[serial] = count
                    count += 1
            out.append((call, numbered, types))
        return tuple(self.head), tuple([type_ for _, type_ in self.args]), tuple(out)

    def move_out(self, views: list[int], erased: list[int], dropped: set[int]) -> None:
        """The body after ops `views` left it, each result read through a new argument appended in that order,
        ops `erased` were erased and the arguments numbered in `dropped` were erased."""
        self.gone.update(views)
        self.gone.update(erased)
        kept = [arg for i, arg in enumerate(self.args) if i not in dropped]
        self.args = kept + [self.ops[view][3][0] for view in views]
        self._key = None  # values are numbered anew


def load_fusion_dialect(ctx: ir.Context) -> None:
    """Make `ctx` accept fusion ops (see the module docstring for why unregistered)."""
    ctx.allow_unregistered_dialects = True
    _register_python_namespace()


def _register_python_namespace() -> None:
    """Give the `fusion` namespace an (empty) Python module the bindings can find.

    Otherwise every `value.owner` on a fusion op tries, and fails, to import
    `torch_mlir.dialects.fusion`: an import-system lookup per IR access, which
    was most of the fusion pass's time.
    """
    global _NAMESPACE_REGISTERED
    if _NAMESPACE_REGISTERED:
        return
    add_dialect_search_prefix("mlirfuse.dialect._bindings")
    _NAMESPACE_REGISTERED = True


_NAMESPACE_REGISTERED = False


def _build(name: str, operands, result_types, attributes: dict, regions: int, loc=None, ip=None):
    return ir.Operation.create(
        name,
        results=list(result_types),
        operands=list(operands),
        attributes=attributes,
        regions=regions,
        loc=loc,
        ip=ip,
    )


def build_group(inputs, result_types, kind: GroupKind = GroupKind.POINTWISE, loc=None, ip=None, body: bool = True):
    """An empty-bodied `fusion.group`; the caller fills its single block (`body=False`: moves a block in)."""
    group = _build("fusion.group", inputs, result_types, {"kind": kind_attr(kind)}, 1, loc, ip)
    if body:
        group.regions[0].blocks.append(*[v.type for v in inputs])
    return group


def build_yield(values, loc=None, ip=None):
    return _build("fusion.yield", values, [], {}, 0, loc, ip)


def build_kernel(name: str, kind: GroupKind, loc=None, ip=None):
    """A `fusion.kernel` with an empty region; the caller moves a body in."""
    return _build("fusion.kernel", [], [], {"sym_name": ir.StringAttr.get(name), "kind": kind_attr(kind)}, 1, loc, ip)


def build_launch(kernel: str, inputs, result_types, scalars=(), loc=None, ip=None):
    """A `fusion.launch` of `kernel`; `scalars`: the values of its scalar arguments, if it takes any."""
    attributes = {"kernel": ir.FlatSymbolRefAttr.get(kernel)}
    if scalars:
        attributes[LAUNCH_SCALARS] = ir.DenseF64ArrayAttr.get(list(scalars))
    return _build("fusion.launch", inputs, result_types, attributes, 0, loc, ip)


# A kernel's scalar arguments: the mark on a body constant (its argument number), the launch's values.
SCALAR_MARK = "fusion.scalar"
LAUNCH_SCALARS = "scalars"
