"""fusion.kernel -> Triton source.

The generated kernel reads like a hand-written one:

    pid -> offsets -> mask -> index per dim -> loads -> one `tmpN = ...` per op -> stores

A pointwise kernel runs over one iteration space (the shape of its results,
which are written contiguously). Every input is addressed through its own
strides in that space, so broadcasting (stride 0) and non-contiguous inputs
need no copies; a chain of views of an input is one more load site (see
`Site`). f16/bf16 values are computed in f32 and rounded on store.

A `concat` kernel ends in a cat of its values (an exit node): the iteration
space is the pieces' shape, widest along the cat dim; each piece is stored
straight into its slice of the cat's buffer, narrower pieces under a mask.

This module only writes text; it never imports triton (see
`mlirfuse.runtime.kernels` for why that matters).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from mlirfuse.elementwise import RULES, TRITON_DTYPES, compute_dtype, literal, promote
from mlirfuse.errors import MlirfuseError
from mlirfuse.ir import TensorType, constant_value, ir, is_constant_like, tensor_type
from mlirfuse.passes.base import block_ops
from mlirfuse.views import RESHAPES, VIEW_OPS, view_chain


class LoweringError(MlirfuseError):
    """A fusion.kernel holds something the Triton lowering cannot express."""


@dataclass(frozen=True)
class TritonKernel:
    """A kernel's source and what the runtime needs to launch it."""

    name: str
    source: str
    inputs: tuple[TensorType, ...]
    outputs: tuple[TensorType, ...]
    scalars: tuple[float, ...]  # values of the c0, c1 ... parameters (constants with no literal)
    params: tuple[str, ...] = ()
    kind: str = "pointwise"
    # What the kernel loads, in parameter order: inputs and views of them (see Site).
    sites: tuple["Site", ...] = ()
    # The shape every site broadcasts into: the stored values' shape
    # (pointwise) or the reduced input's (reduction); and the reduced dims.
    space: tuple[int, ...] = ()
    reduced: tuple[int, ...] = ()

    @property
    def shape(self) -> tuple[int, ...]:
        """The iteration space."""
        return self.space

    def pointer_dtype(self, param: str) -> str:
        """The element dtype behind a pointer parameter (`in3`, `in3_v0`, `out1`)."""
        if param.startswith("out"):
            return self.outputs[int(param[3:])].dtype
        return self.inputs[int(param[2:].split("_")[0])].dtype


@dataclass
class _Value:
    text: str
    dtype: str  # compute dtype name


def _cast(v: _Value, dtype: str) -> str:
    if v.dtype == dtype:
        return v.text
    if dtype == "bool":
        return f"({v.text} != 0)"
    if dtype == "bfloat16":
        # Through f32, as eager converts every dtype to bf16 (the interpreter
        # cannot convert ints or bools to bf16 at all).
        text = v.text if v.dtype == "float32" else f"{v.text}.to(tl.float32)"
        return _round_to_bf16(text)
    return f"{v.text}.to({TRITON_DTYPES[dtype]})"


# Helper functions a kernel module defines when its kernel uses them, by name.
HELPERS = {
    # f32 -> bf16 rounding to nearest even, as eager does, spelled out on the
    # bits: Triton's interpreter truncates f32 -> bf16 (even with
    # fp_downcast_rounding="rtne") while compiled code rounds. After rounding
    # the low 16 bits are zero, so the final cast is exact on both.
    "round_to_bf16": """@triton.jit
def round_to_bf16(x):
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True).to(tl.bfloat16)
""",
    # tl.reduce combine functions: product, and (value, index) pairs for
    # argmax/argmin as eager picks them (NaN wins, ties go to the first index).
    "multiply": """@triton.jit
def multiply(a, b):
    return a * b
""",
    # max/min that propagate NaN like eager (tl.max/tl.min drop NaNs).
    "maximum": """@triton.jit
def maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)
""",
    "minimum": """@triton.jit
def minimum(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)
""",
    "argmax_combine": """@triton.jit
def argmax_combine(v0, i0, v1, i1):
    nan0 = v0 != v0
    nan1 = v1 != v1
    first = (v0 > v1) | (nan0 & ~nan1) | (((v0 == v1) | (nan0 & nan1)) & (i0 < i1))
    return tl.where(first, v0, v1), tl.where(first, i0, i1)
""",
    "argmin_combine": """@triton.jit
def argmin_combine(v0, i0, v1, i1):
    nan0 = v0 != v0
    nan1 = v1 != v1
    first = (v0 < v1) | (nan0 & ~nan1) | (((v0 == v1) | (nan0 & nan1)) & (i0 < i1))
    return tl.where(first, v0, v1), tl.where(first, i0, i1)
""",
}


def _round_to_bf16(text: str) -> str:
    return f"round_to_bf16({text})"


def module_prelude(body: list[str]) -> list[str]:
    """The imports, and the helpers the body uses, that start a kernel's source file."""
    lines = ["import triton", "import triton.language as tl", "", ""]
    text = "\n".join(body)
    for name, source in HELPERS.items():
        if re.search(rf"\b{name}\b", text):
            lines += source.splitlines() + ["", ""]
    return lines


class _Emitter:
    def __init__(self, name: str, block: ir.Block):
        self.name = name
        self.block = block
        self.lines: list[str] = []
        self.env: dict[ir.Value, _Value] = {}
        self.consts: dict[ir.Value, object] = {}
        self.scalars: list[float] = []
        self.count = 0
        self.out = self.lines  # where tmp() writes; the reduction emitter redirects it into loops

    def tmp(self, expr: str, dtype: str, comment: str) -> _Value:
        name = f"tmp{self.count}"
        self.count += 1
        self.out.append(f"{name} = {expr}  # {comment}")
        return _Value(name, dtype)

    def scalar_text(self, value) -> str:
        text = literal(value)
        if text is not None:
            return text
        if isinstance(value, float):  # inf / nan: passed in as a kernel argument
            self.scalars.append(value)
            return f"c{len(self.scalars) - 1}"
        return repr(value)

    def emit_op(self, op) -> None:
        name = op.operation.name
        if name.startswith("torch.constant."):
            self.consts[op.results[0]] = constant_value(op.results[0])
            return
        if name == "torch.prim.ListConstruct":  # view sizes, reduction dims: read as constants
            return
        self.env[op.results[0]] = self.pointwise(op, self.env.get)

    def pointwise(self, op, operand_value) -> _Value:
        """One `tmpN = ...` line for an elementwise op; `operand_value(v)` gives tensor operands."""
        name = op.operation.name
        rule = RULES.get(name)
        if rule is None:
            raise LoweringError(f"kernel @{self.name}: no Triton lowering for '{name}'")
        result = tensor_type(op.results[0].type)
        consts, tensors = [], {}
        for i, operand in enumerate(op.operands):
            value = None if is_constant_like(operand) else operand_value(operand)
            if value is not None:
                tensors[i] = value
                consts.append(None)
            else:
                consts.append(self.consts.get(operand, constant_value(operand)))
        target = self._target_dtype(rule, result, tensors, consts)
        # Eager's bool arithmetic is int arithmetic tested != 0 (True + True is True).
        bool_arith = rule.kind == "arith" and target == "bool"
        if bool_arith:
            target = "int32"
        if rule.kind == "compare":
            consts = _round_scalars(consts, promote([tensor_type(op.operands[i].type).dtype for i in tensors]))
        args = []
        for i, c in enumerate(consts):
            if i in tensors:
                want = "bool" if (rule.kind == "logical" or (rule.kind == "select" and i == rule.cond)) else target
                args.append(tensors[i].text if rule.kind == "cast" else _cast(tensors[i], want))
            else:
                args.append(self.scalar_text(c))
        expr = rule.emit(args, consts)
        if bool_arith:
            expr = f"({expr}) != 0"
        out_dtype = compute_dtype(result.dtype)
        if rule.kind == "cast":
            expr = _cast(_Value(expr, tensors[0].dtype), result.dtype)
            if result.dtype != out_dtype:  # round through f16/bf16 as eager does
                expr = f"{expr}.to({TRITON_DTYPES[out_dtype]})"
        return self.tmp(expr, out_dtype, name)

    def _target_dtype(self, rule, result: TensorType, tensors: dict, consts: list) -> str:
        if rule.kind in ("arith", "bitwise", "select"):
            return compute_dtype(result.dtype)
        if rule.kind == "compare":
            dtype = promote([t.dtype for t in tensors.values()])
            if dtype not in ("float32", "float64") and any(isinstance(c, float) for c in consts):
                dtype = "float32"
            return compute_dtype(dtype)
        return result.dtype


def _round_scalars(consts: list, dtype: str) -> list:
    """Eager compares an f16/bf16 tensor with a Python float rounded to that dtype."""
    if dtype not in ("float16", "bfloat16"):
        return consts
    import torch

    return [
        float(torch.tensor(c, dtype=getattr(torch, dtype)).item()) if isinstance(c, float) else c for c in consts
    ]


def lower_kernel(kernel) -> TritonKernel:
    """Emit the Triton source of one `fusion.kernel`."""
    kind = ir.StringAttr(kernel.attributes["kind"]).value
    if kind not in POINTWISE_KINDS:
        from mlirfuse.lowering.reduction import lower_reduction

        return lower_reduction(kernel, persistent=kind == "persistent-reduction")
    name = kernel.attributes["sym_name"].value
    block = kernel.regions[0].blocks[0]
    ops, terminator = block_ops(block)
    inputs = [tensor_type(a.type) for a in block.arguments]
    outputs = [tensor_type(v.type) for v in terminator.operands]
    if any(t is None or not t.is_static for t in inputs + outputs):
        raise LoweringError(f"kernel @{name}: every argument and result must be a statically shaped tensor")
    sites = load_sites(name, block)
    # Each result is stored in row-major order; an exit reshape stores the
    # value it reshapes, so the iteration space is that value's shape.
    stored = [_stored_value(v, sites) for v in terminator.operands]
    cat = _concat(name, ops, terminator) if kind == "concat" else None
    if cat is not None:
        shape = cat.space
    else:
        shape = tensor_type(stored[0].type).shape
        if any(tensor_type(v.type).shape != shape for v in stored):
            raise LoweringError(f"kernel @{name}: results have different shapes; a pointwise kernel has one iteration space")
    rank = len(shape)

    em = _Emitter(name, block)
    index = _index_lines(rank)
    # Every load site (an input, or a chain of views of one) is loaded once at
    # the iteration coordinates, through strides that broadcast it there.
    # (In a concat kernel a piece narrower than the space is masked beyond its end.)
    for value, site in sites.items():
        offset = " + ".join(f"x{d} * {site.name}_st{d}" for d in range(rank)) or "xindex * 0"
        mask = _within("xmask", tensor_type(value.type).shape, shape)
        em.env[value] = _load(em, f"{site.name} + ({offset})", tensor_type(value.type).dtype, site.comment(), mask)
    for op in ops:
        if op.operation.name not in VIEW_OPS and op.operation.name != CAT:
            em.emit_op(op)
    stores = []
    for j, (v, t) in enumerate(zip(stored, outputs)):
        if cat is not None and v == cat.result:
            stores += cat.stores(em, j, t)
            continue
        value = em.env.get(v)
        if value is None:  # a yielded constant: fill the output with it
            text = f"tl.full([XBLOCK], {em.scalar_text(constant_value(v))}, {TRITON_DTYPES[t.dtype]})"
        else:
            text = _cast(value, t.dtype)
        own = tensor_type(v.type).shape
        if own == shape:
            stores.append(f"tl.store(out{j} + xindex, {text}, mask=xmask)")
        else:  # a piece-shaped result of a concat kernel
            stores.append(f"tl.store(out{j} + ({_row_major(own, shape)}), {text}, mask={_inside('xmask', own, shape)})")

    params = [site.name for site in sites.values()] + [f"out{j}" for j in range(len(outputs))]
    params += [f"c{k}" for k in range(len(em.scalars))]
    params += ["xnumel"] + [f"s{d}" for d in range(1, rank)]
    params += [f"{site.name}_st{d}" for site in sites.values() for d in range(rank)]
    body = ["xoffset = tl.program_id(0) * XBLOCK", "xindex = xoffset + tl.arange(0, XBLOCK)", "xmask = xindex < xnumel"]
    body += index + em.lines + stores
    source = "\n".join(
        [
            f"# Generated by mlirfuse from fusion.kernel @{name}; do not edit.",
            f"# Iteration space {list(shape)}; inputs are addressed through their strides in it.",
            *module_prelude(body),
            "@triton.jit",
            f"def {name}({', '.join(params + ['XBLOCK: tl.constexpr'])}):",
            *("    " + line for line in body),
            "",
        ]
    )
    return TritonKernel(
        name, source, tuple(inputs), tuple(outputs), tuple(em.scalars), tuple(params),
        kind=kind, sites=tuple(sites.values()), space=shape,
    )


# Kernels over one flat iteration space (no reduction loop).
POINTWISE_KINDS = ("pointwise", "concat")
CAT = "torch.aten.cat"


@dataclass
class _Concat:
    """The cat a concat kernel ends with: pieces stored into slices of one output."""

    result: ir.Value
    pieces: list  # values, in order
    dim: int
    space: tuple[int, ...]  # the pieces' common shape, widest along dim

    def stores(self, em: "_Emitter", j: int, t: TensorType) -> list[str]:
        """One masked store per piece, at its offset along the cat dim of out{j}."""
        out_shape = tensor_type(self.result.type).shape
        along = math.prod(out_shape[self.dim + 1 :])  # the cat dim's stride in the output
        lines, start = [], 0
        for piece in self.pieces:
            size = tensor_type(piece.type).shape[self.dim]
            value = em.env.get(piece)
            if value is None:
                raise LoweringError(f"kernel @{em.name}: a concat piece must be computed or loaded in the kernel")
            offset = _row_major(out_shape, self.space)
            if start:
                offset += f" + {start * along}"
            mask = _inside("xmask", tensor_type(piece.type).shape, self.space)
            lines.append(f"tl.store(out{j} + ({offset}), {_cast(value, t.dtype)}, mask={mask})  # piece at {start} along dim {self.dim}")
            start += size
        return lines


def _concat(name: str, ops: list, terminator) -> _Concat:
    """The one cat of a concat kernel; it must only be yielded (an exit node)."""
    cats = [op for op in ops if op.operation.name == CAT]
    if len(cats) != 1:
        raise LoweringError(f"kernel @{name}: a concat kernel holds exactly one torch.aten.cat")
    cat = cats[0]
    result = cat.results[0]
    if any(u.owner.operation.name != "fusion.yield" for u in result.uses):
        raise LoweringError(f"kernel @{name}: the cat result may only leave the kernel")
    items = cat.operands[0].owner
    dim = constant_value(cat.operands[1])
    rank = len(tensor_type(result.type).shape)
    if not isinstance(dim, int) or not isinstance(items, ir.OpView) or items.operation.name != "torch.prim.ListConstruct":
        raise LoweringError(f"kernel @{name}: cat needs a constant dim and a list of tensors")
    dim %= rank
    pieces = list(items.operands)
    space = list(tensor_type(pieces[0].type).shape)
    space[dim] = max(tensor_type(p.type).shape[dim] for p in pieces)
    return _Concat(result, pieces, dim, tuple(space))


def _within(mask: str, shape, space) -> str:
    """`mask`, restricted to coordinates inside `shape` where it is narrower than `space` (not broadcast)."""
    offset = len(space) - len(shape)
    terms = [f"(x{d + offset} < {n})" for d, n in enumerate(shape) if 1 < n < space[d + offset]]
    return " & ".join([mask] + terms)


def _inside(mask: str, shape, space) -> str:
    """`mask`, restricted to the coordinates of a value of `shape` stored in `space`.

    Unlike a load, a store never broadcasts: a dim of size 1 (a piece one wide
    along the cat dim) or a missing leading dim is stored at coordinate 0 only.
    """
    offset = len(space) - len(shape)
    extents = [1] * offset + list(shape)
    terms = [f"(x{d} < {n})" for d, n in enumerate(extents) if n < space[d]]
    return " & ".join([mask] + terms)


def _row_major(shape, space) -> str:
    """Flat offset of the iteration coordinates in a contiguous tensor of `shape` (its dims are the space's last)."""
    offset = len(space) - len(shape)
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    return " + ".join(f"x{d + offset} * {st}" for d, st in enumerate(strides)) or "0"


@dataclass(frozen=True)
class Site:
    """What a kernel loads: input `input` seen through `chain`, views applied in order.

    `name` is the pointer parameter (`in2`, or `in2_v0` for a view of it); the
    launcher applies the chain with torch's view functions and passes the
    resulting tensor and its strides in the iteration space.
    """

    input: int
    chain: tuple = ()  # ((op name, constant args), ...)
    name: str = ""

    def comment(self) -> str:
        def text(arg) -> str:
            return str(list(arg)) if isinstance(arg, tuple) else str(arg)

        views = "".join(f".{op.split('.')[2]}({', '.join(map(text, args))})" for op, args in self.chain)
        return f"load %arg{self.input}{views}"


def load_sites(name: str, block: ir.Block) -> dict[ir.Value, Site]:
    """Every value a kernel body reads from memory: arguments and view chains of them read by compute ops."""
    sites: dict[ir.Value, Site] = {}
    views_of: dict[int, int] = {}

    def read_by_compute(v: ir.Value) -> bool:
        return any(u.owner.operation.name not in VIEW_OPS for u in v.uses)

    for arg in block.arguments:
        if read_by_compute(arg):
            sites[arg] = Site(arg.arg_number, (), f"in{arg.arg_number}")
    for op in block_ops(block)[0]:
        if op.operation.name not in VIEW_OPS:
            continue
        result = op.results[0]
        chain = view_chain(result, block)
        if chain is None:
            if op.operation.name in RESHAPES and all(u.owner.operation.name in RESHAPES | {"fusion.yield"} for u in result.uses):
                continue  # an exit reshape: stored, not loaded
            raise LoweringError(f"kernel @{name}: '{op.operation.name}' must read a kernel input through views only")
        if read_by_compute(result):
            i, views = chain
            k = views_of.setdefault(i, 0)
            views_of[i] += 1
            sites[result] = Site(i, views, f"in{i}_v{k}")
    return dict(sorted(sites.items(), key=lambda kv: (kv[1].input, kv[1].name != f"in{kv[1].input}")))


def _stored_value(v: ir.Value, sites: dict) -> ir.Value:
    """The value a result is computed from: through exit reshapes of computed values."""
    while v not in sites and isinstance(v.owner, ir.OpView) and v.owner.operation.name in RESHAPES:
        v = v.owner.operands[0]
    return v


def _load(em: "_Emitter", address: str, dtype: str, comment: str, mask: str = "xmask") -> _Value:
    value = em.tmp(f"tl.load({address}, mask={mask})", dtype, comment)
    if compute_dtype(dtype) != dtype:
        value = em.tmp(f"{value.text}.to(tl.float32)", "float32", "compute in f32")
    return value


def _index_lines(rank: int) -> list[str]:
    """xindex -> x0 ... x{rank-1}, the row-major coordinates in the iteration space."""
    if rank == 0:
        return []
    if rank == 1:
        return ["x0 = xindex"]
    lines = []
    for d in range(rank - 1, -1, -1):
        inner = " * ".join(f"s{k}" for k in range(d + 1, rank))
        quotient = f"(xindex // ({inner}))" if inner else "xindex"
        if d == 0:
            lines.append(f"x0 = xindex // ({inner})")
        else:
            lines.append(f"x{d} = {quotient} % s{d}")
    return lines


__all__ = ["lower_kernel", "POINTWISE_KINDS", "load_sites", "Site", "TritonKernel", "LoweringError"]
