"""fusion.kernel -> Triton source.

The generated kernel reads like a hand-written one:

    pid -> offsets -> mask -> index per dim -> loads -> one `tmpN = ...` per op -> stores

A pointwise kernel runs over one iteration space (the shape of its results,
which are written contiguously). Every input is addressed through its own
strides in that space, so broadcasting (stride 0) and non-contiguous inputs
need no copies. f16/bf16 values are computed in f32 and rounded on store.

This module only writes text; it never imports triton (see
`mlirfuse.runtime.kernels` for why that matters).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlirfuse.elementwise import RULES, TRITON_DTYPES, compute_dtype, literal, promote
from mlirfuse.errors import MlirfuseError
from mlirfuse.ir import TensorType, constant_value, ir, tensor_type
from mlirfuse.passes.base import block_ops


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
    # Per input: addressed with its own strides through slices (True), or
    # broadcast into the iteration space (False).
    views: tuple[bool, ...] = ()
    # Reduction kernels: the shape every input broadcasts into, and the reduced dims.
    space: tuple[int, ...] = ()
    reduced: tuple[int, ...] = ()

    @property
    def shape(self) -> tuple[int, ...]:
        """The iteration space: the results' shape (pointwise) or the reduced input's (reduction)."""
        return self.space if self.kind != "pointwise" else self.outputs[0].shape


@dataclass
class _Value:
    text: str
    dtype: str  # compute dtype name


def _cast(v: _Value, dtype: str) -> str:
    if v.dtype == dtype:
        return v.text
    if dtype == "bool":
        return f"({v.text} != 0)"
    return f"{v.text}.to({TRITON_DTYPES[dtype]})"


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
            value = None if _is_constant_like(operand) else operand_value(operand)
            if value is not None:
                tensors[i] = value
                consts.append(None)
            else:
                consts.append(self.consts.get(operand, constant_value(operand)))
        target = self._target_dtype(rule, result, tensors, consts)
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
        out_dtype = compute_dtype(result.dtype)
        if rule.kind == "cast":
            expr = _cast(_Value(expr, tensors[0].dtype), result.dtype)
            if result.dtype != out_dtype:  # round through f16/bf16 as eager does
                expr = f"{expr}.to({TRITON_DTYPES[out_dtype]})"
        return self.tmp(expr, out_dtype, name)

    def _target_dtype(self, rule, result: TensorType, tensors: dict, consts: list) -> str:
        if rule.kind in ("arith", "select"):
            return compute_dtype(result.dtype)
        if rule.kind == "compare":
            dtype = promote([t.dtype for t in tensors.values()])
            if dtype not in ("float32", "float64") and any(isinstance(c, float) for c in consts):
                dtype = "float32"
            return compute_dtype(dtype)
        return result.dtype


def _is_constant_like(value: ir.Value) -> bool:
    owner = value.owner
    return isinstance(owner, ir.OpView) and owner.operation.name.startswith(("torch.constant.", "torch.prim.ListConstruct"))


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
    if kind != "pointwise":
        from mlirfuse.lowering.reduction import lower_reduction

        return lower_reduction(kernel, persistent=kind == "persistent-reduction")
    name = kernel.attributes["sym_name"].value
    block = kernel.regions[0].blocks[0]
    ops, terminator = block_ops(block)
    inputs = [tensor_type(a.type) for a in block.arguments]
    outputs = [tensor_type(v.type) for v in terminator.operands]
    if any(t is None or not t.is_static for t in inputs + outputs):
        raise LoweringError(f"kernel @{name}: every argument and result must be a statically shaped tensor")
    shape = outputs[0].shape
    if any(t.shape != shape for t in outputs):
        raise LoweringError(f"kernel @{name}: results have different shapes; a pointwise kernel has one iteration space")
    rank = len(shape)

    em = _Emitter(name, block)
    index = _index_lines(rank)
    # An input read only through slices is addressed with its own strides at
    # the sliced coordinates (a view, never a copy); the others are loaded
    # once at the iteration coordinates, broadcast by their strides.
    viewed = [bool(list(a.uses)) and all(u.owner.operation.name == SLICE for u in a.uses) for a in block.arguments]
    for i, (arg, t) in enumerate(zip(block.arguments, inputs)):
        if not viewed[i]:
            offset = " + ".join(f"x{d} * in{i}_st{d}" for d in range(len(shape))) or "xindex * 0"
            em.env[arg] = _load(em, f"in{i} + ({offset})", t.dtype, f"load %arg{i}")
    for op in ops:
        if op.operation.name == SLICE:
            em.env[op.results[0]] = _load_slice(em, op, block, shape)
        else:
            em.emit_op(op)
    stores = []
    for j, (v, t) in enumerate(zip(terminator.operands, outputs)):
        value = em.env.get(v)
        if value is None:  # a yielded constant: fill the output with it
            text = f"tl.full([XBLOCK], {em.scalar_text(constant_value(v))}, {TRITON_DTYPES[t.dtype]})"
        else:
            text = _cast(value, t.dtype)
        stores.append(f"tl.store(out{j} + xindex, {text}, mask=xmask)")

    params = [f"in{i}" for i in range(len(inputs))] + [f"out{j}" for j in range(len(outputs))]
    params += [f"c{k}" for k in range(len(em.scalars))]
    params += ["xnumel"] + [f"s{d}" for d in range(1, rank)]
    params += [
        f"in{i}_st{d}" for i, t in enumerate(inputs) for d in range(len(t.shape) if viewed[i] else rank)
    ]
    body = ["xoffset = tl.program_id(0) * XBLOCK", "xindex = xoffset + tl.arange(0, XBLOCK)", "xmask = xindex < xnumel"]
    body += index + em.lines + stores
    source = "\n".join(
        [
            f"# Generated by mlirfuse from fusion.kernel @{name}; do not edit.",
            f"# Iteration space {list(shape)}; inputs are addressed through their strides in it.",
            "import triton",
            "import triton.language as tl",
            "",
            "",
            "@triton.jit",
            f"def {name}({', '.join(params + ['XBLOCK: tl.constexpr'])}):",
            *("    " + line for line in body),
            "",
        ]
    )
    return TritonKernel(
        name, source, tuple(inputs), tuple(outputs), tuple(em.scalars), tuple(params), views=tuple(viewed)
    )


SLICE = "torch.aten.slice.Tensor"


def _load(em: "_Emitter", address: str, dtype: str, comment: str) -> _Value:
    value = em.tmp(f"tl.load({address}, mask=xmask)", dtype, comment)
    if compute_dtype(dtype) != dtype:
        value = em.tmp(f"{value.text}.to(tl.float32)", "float32", "compute in f32")
    return value


def _load_slice(em: "_Emitter", op, block: ir.Block, shape) -> _Value:
    """Load `x[..., start:end:step, ...]` at the iteration coordinates, x a kernel input."""
    from mlirfuse.passes.chunk_motion import slice_args

    source = op.operands[0]
    if source not in list(block.arguments) or slice_args(op) is None:
        raise LoweringError(f"kernel @{em.name}: a slice must read a kernel input with constant bounds")
    i = list(block.arguments).index(source)
    dim, start, _, step = slice_args(op)
    out = tensor_type(op.results[0].type).shape
    offset = len(shape) - len(out)
    coords = []
    for d, size in enumerate(out):
        c = f"x{d + offset}" if size == shape[d + offset] else "0"
        if d == dim:
            c = f"({start} + {c} * {step})" if step != 1 else f"({start} + {c})"
        coords.append(f"{c} * in{i}_st{d}")
    address = f"in{i} + ({' + '.join(coords) or '0'})"
    return _load(em, address, tensor_type(source.type).dtype, f"load %arg{i}[{start}:{_}:{step}] along dim {dim}")


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


__all__ = ["lower_kernel", "TritonKernel", "LoweringError"]
