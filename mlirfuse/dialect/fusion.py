"""The `fusion` dialect: regions of torch ops that become one kernel each.

- `fusion.group`  operands, results, one region isolated from above whose
                  block arguments stand for the operands; ends in `fusion.yield`.
- `fusion.yield`  terminator of a group or kernel body.
- `fusion.kernel` module-level symbol holding one outlined canonical region.
- `fusion.launch` calls a `fusion.kernel` with tensors, yields its results.

Ops defined through `dialects.ext` print in MLIR's generic form; the
verifiers below are what makes hand-written IR trustworthy, so each error
names the op, the position and what was expected.

Build ops with the `build_*` functions here, not the generated `__init__`:
the generated builders add `operandSegmentSizes` attributes that a dialect
with a single variadic operand list does not need, and that hand-written IR
would then have to spell.
"""



from collections.abc import Sequence
from typing import Any

from mlirfuse.ir import ext, ir

GROUP_KINDS = ("pointwise",)


class Fusion(ext.Dialect, name="fusion"):
    pass


def _error(op, message: str) -> bool:
    op.location.emit_error(f"'{op.name}' op {message}")
    return False


def _verify_body(op, region: ir.Region, operand_types, result_types, what: str) -> bool:
    """Shared checks for a group's or kernel's single-block body."""
    blocks = list(region.blocks)
    if len(blocks) != 1:
        return _error(op, f"expects a body with exactly one block, found {len(blocks)}")
    block = blocks[0]
    arg_types = [a.type for a in block.arguments]
    if operand_types is not None:
        if len(arg_types) != len(operand_types):
            return _error(
                op, f"has {len(operand_types)} {what} but its body has {len(arg_types)} block arguments"
            )
        for i, (a, o) in enumerate(zip(arg_types, operand_types)):
            if a != o:
                return _error(op, f"block argument #{i} has type {a} but {what[:-1]} #{i} has type {o}")
    ops = list(block.operations)
    if not ops or ops[-1].operation.name != "fusion.yield":
        return _error(op, "expects its body to end in 'fusion.yield'")
    yielded = [v.type for v in ops[-1].operands]
    if result_types is not None:
        if len(yielded) != len(result_types):
            return _error(op, f"yields {len(yielded)} values but has {len(result_types)} results")
        for i, (y, r) in enumerate(zip(yielded, result_types)):
            if y != r:
                return _error(op, f"yields type {y} at #{i} but result #{i} has type {r}")
    for inner in ops[:-1]:
        name = inner.operation.name
        if not name.startswith("torch."):
            return _error(op, f"body may only hold torch ops, found '{name}'")
    return True


class GroupOp(Fusion.Operation, name="group", traits=[ir.IsIsolatedFromAboveTrait, ext.Pure]):
    """A fusion region: the body computes the results from the operands."""

    inputs: Sequence[ext.Operand[Any]]
    kind: ir.StringAttr
    outputs: Sequence[ext.Result[Any]]
    body: ext.Region

    def verify_invariants(self) -> bool:
        if self.kind.value not in GROUP_KINDS:
            return _error(self, f"has unknown kind \"{self.kind.value}\"; expected one of {', '.join(GROUP_KINDS)}")
        if len(self.operation.results) == 0:
            return _error(self, "must have at least one result")
        return _verify_body(
            self,
            self.body,
            [v.type for v in self.operation.operands],
            [r.type for r in self.operation.results],
            "operands",
        )


class YieldOp(Fusion.Operation, name="yield", traits=[ir.IsTerminatorTrait, ext.Pure]):
    """Terminates a `fusion.group` or `fusion.kernel` body; operands are its results."""

    values: Sequence[ext.Operand[Any]]

    def verify_invariants(self) -> bool:
        parent = self.operation.parent
        if parent is None or parent.name not in ("fusion.group", "fusion.kernel"):
            return _error(self, "expects parent op 'fusion.group' or 'fusion.kernel'")
        return True


class KernelOp(Fusion.Operation, name="kernel", traits=[ir.IsIsolatedFromAboveTrait]):
    """One outlined, canonical fusion region; called by `fusion.launch`."""

    sym_name: ir.StringAttr
    kind: ir.StringAttr
    body: ext.Region

    def verify_invariants(self) -> bool:
        parent = self.operation.parent
        if parent is None or parent.name != "builtin.module":
            return _error(self, "must be defined at module level")
        return _verify_body(self, self.body, None, None, "arguments")

    @property
    def block(self) -> ir.Block:
        return self.body.blocks[0]

    def result_types(self) -> list[ir.Type]:
        return [v.type for v in list(self.block.operations)[-1].operands]


class LaunchOp(Fusion.Operation, name="launch", traits=[ext.Pure]):
    """Runs the kernel named by `kernel` on `inputs`."""

    inputs: Sequence[ext.Operand[Any]]
    kernel: ir.FlatSymbolRefAttr
    outputs: Sequence[ext.Result[Any]]

    def verify_invariants(self) -> bool:
        kernel = find_kernel(self.operation, self.kernel.value)
        if kernel is None:
            return _error(self, f"refers to unknown kernel @{self.kernel.value}")
        arg_types = [a.type for a in kernel.block.arguments]
        in_types = [v.type for v in self.operation.operands]
        if arg_types != in_types:
            return _error(
                self, f"operand types ({', '.join(map(str, in_types))}) do not match "
                f"@{self.kernel.value} arguments ({', '.join(map(str, arg_types))})"
            )
        if kernel.result_types() != [r.type for r in self.operation.results]:
            return _error(self, f"result types do not match what @{self.kernel.value} yields")
        return True


def find_kernel(op: ir.Operation, name: str) -> "KernelOp | None":
    """The `fusion.kernel` named `name` in the module enclosing `op`."""
    module = op
    while module is not None and module.name != "builtin.module":
        module = module.parent
    if module is None:
        return None
    for candidate in module.regions[0].blocks[0].operations:
        if candidate.operation.name == "fusion.kernel" and candidate.attributes["sym_name"].value == name:
            return candidate
    return None


def load_fusion_dialect(ctx: ir.Context) -> None:
    """Load the fusion dialect into `ctx` (a no-op when it is already there)."""
    if ctx.is_dialect_loaded(Fusion.DIALECT_NAMESPACE):
        return
    with ctx, ir.Location.unknown():
        Fusion.load()


def _build(name: str, operands, result_types, attributes: dict, regions: int, loc=None, ip=None):
    return ir.Operation.create(
        name,
        results=list(result_types),
        operands=list(operands),
        attributes=attributes,
        regions=regions,
        loc=loc,
        ip=ip,
    ).opview


def build_group(inputs, result_types, kind: str = "pointwise", loc=None, ip=None) -> GroupOp:
    """An empty-bodied `fusion.group`; the caller fills its single block."""
    group = _build("fusion.group", inputs, result_types, {"kind": ir.StringAttr.get(kind)}, 1, loc, ip)
    group.regions[0].blocks.append(*[v.type for v in inputs])
    return group


def build_yield(values, loc=None, ip=None) -> YieldOp:
    return _build("fusion.yield", values, [], {}, 0, loc, ip)


def build_kernel(name: str, kind: str, loc=None, ip=None) -> KernelOp:
    """A `fusion.kernel` with an empty region; the caller moves a body in."""
    return _build(
        "fusion.kernel", [], [], {"sym_name": ir.StringAttr.get(name), "kind": ir.StringAttr.get(kind)}, 1, loc, ip
    )


def build_launch(kernel: str, inputs, result_types, loc=None, ip=None) -> LaunchOp:
    return _build("fusion.launch", inputs, result_types, {"kernel": ir.FlatSymbolRefAttr.get(kernel)}, 0, loc, ip)
