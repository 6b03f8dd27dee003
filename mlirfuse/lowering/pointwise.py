"""Pointwise and concat kernels: one flat iteration space, no reduction loop.

A pointwise kernel runs over one iteration space (the shape of its results,
which are written contiguously). Every input is addressed through its own
strides in that space, so broadcasting (stride 0) and non-contiguous inputs
need no copies; a chain of views of an input is one more load site (see
`Site`). f16/bf16 values are computed in f32 and rounded on store.

A `concat` kernel ends in a cat of its values (an exit node): the iteration
space is the pieces' shape, widest along the cat dim; each piece is stored
straight into its slice of the cat's buffer, narrower pieces under a mask.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlirfuse.elementwise import TRITON_DTYPES, compute_dtype
from mlirfuse.indexing import scatter, scatter_op
from mlirfuse.ir import TensorType, block_ops, constant_value, ir, tensor_type
from mlirfuse.lowering.emitter import (
    KernelEmitter,
    LoweringError,
    Site,
    TritonKernel,
    Value,
    cast,
    coords,
    load_sites,
    static_signature,
    stored_value,
)
from mlirfuse.lowering.indexing import IndexingEmitter, kernel_device
from mlirfuse.views import PADS, VIEW_OPS

CAT = "torch.aten.cat"


class _PointwiseEmitter(IndexingEmitter):
    """One flat [XBLOCK] block over the iteration space: coordinates x0, x1, ..."""

    def __init__(self, name: str, block: ir.Block, space: tuple[int, ...]):
        super().__init__(name, block)
        self.space = space

    def coordinate(self, d: int) -> str:
        return f"x{d}"

    def lane_mask(self, shape) -> str:
        return _within("xmask", shape, self.space)

    def block_shape(self) -> str:
        return "[XBLOCK]"

    def load_at(self, site: Site, shape, dtype: str) -> Value:
        offset = " + ".join(f"x{d} * {site.name}_st{d}" for d in range(len(self.space))) or "xindex * 0"
        return self.load(f"{site.name} + ({offset})", dtype, site.comment(), self.lane_mask(shape))


def lower_pointwise(kernel, kind: str) -> TritonKernel:
    """Emit the Triton source of a `pointwise` or `concat` fusion.kernel."""
    name = kernel.attributes["sym_name"].value
    block = kernel.regions[0].blocks[0]
    ops, terminator = block_ops(block)
    inputs, outputs = static_signature(name, block, terminator)
    sites = load_sites(name, block, cat_of_inputs=kind != "concat")
    # Each result is stored in row-major order; an exit reshape stores the
    # value it reshapes, so the iteration space is that value's shape.
    stored = [stored_value(v, sites) for v in terminator.operands]
    cat = _concat(name, ops) if kind == "concat" else None
    scatter, init = (scatter_op(block), ()) if kind == "scatter" else (None, ())
    if cat is not None:
        shape = cat.space
    elif scatter is not None:
        shape, init = _scatter_space(name, block, scatter, stored)
    else:
        shape = tensor_type(stored[0].type).shape
        if any(tensor_type(v.type).shape != shape for v in stored):
            raise LoweringError(f"kernel @{name}: results have different shapes; a pointwise kernel has one iteration space")
    rank = len(shape)

    em = _PointwiseEmitter(name, block, shape)
    # Every load site (an input, or a chain of views of one) is loaded once at
    # the iteration coordinates, through strides that broadcast it there.
    # (In a concat kernel a piece narrower than the space is masked beyond its end.)
    for value, site in sites.items():
        if site.pad is not None:  # a pad, or a piece of a cat of inputs padded to the cat's shape
            padded = tensor_type((value[0] if isinstance(value, tuple) else value).type).shape
            em.env[value] = _load_padded(em, site, TensorType(padded, inputs[site.input].dtype), shape)
            continue
        em.env[value] = em.load_at(site, tensor_type(value.type).shape, tensor_type(value.type).dtype)
    for op in ops:
        if op.operation.name == CAT and cat is None:
            em.env[op.results[0]] = _select_piece(em, op, shape)
        elif op.operation.name not in VIEW_OPS | PADS and op.operation.name != CAT and (scatter is None or op != scatter):
            em.emit_body_op(op)
    for j, (v, t) in enumerate(zip(stored, outputs)):
        if cat is not None and v == cat.result:
            cat.store(em, j, t)
            continue
        if scatter is not None and v == scatter.results[0]:
            em.scatter_store(scatter, j, t.dtype)
            continue
        value = em.env.get(v)
        if value is None:  # a yielded constant: fill the output with it
            value = Value(f"tl.full([XBLOCK], {em.scalar_text(constant_value(v))}, {TRITON_DTYPES[t.dtype]})", t.dtype)
        own = tensor_type(v.type).shape
        if own == shape:
            em.store(f"out{j}", "xindex", value, t.dtype, "xmask")
        else:  # a piece-shaped result of a concat kernel
            em.store(f"out{j}", f"({_row_major(own, shape)})", value, t.dtype, _inside("xmask", own, shape))

    all_sites = list(sites.values()) + list(em.indexing.values())
    params = em.params(all_sites, len(outputs), ["xnumel"] + [f"s{d}" for d in range(1, rank)], rank)
    head = ["xoffset = tl.program_id(0) * XBLOCK", "xindex = xoffset + tl.arange(0, XBLOCK)", "xmask = xindex < xnumel"]
    source = em.render(
        [f"Iteration space {list(shape)}; inputs are addressed through their strides in it."],
        params, ["XBLOCK"], head + coords("xindex", list(range(rank)), "x") + em.body,
    )
    return TritonKernel(
        name, source, tuple(inputs), tuple(outputs), tuple(em.scalars), tuple(params),
        kind=kind, sites=tuple(all_sites), space=shape, device="" if inputs else kernel_device(block), init=init,
    )


@dataclass
class _Concat:
    """The cat a concat kernel ends with: pieces stored into slices of one output."""

    result: ir.Value
    pieces: list  # values, in order
    dim: int
    space: tuple[int, ...]  # the pieces' common shape, widest along dim

    def store(self, em: KernelEmitter, j: int, t: TensorType) -> None:
        """One masked store per piece, at its offset along the cat dim of out{j}."""
        out_shape = tensor_type(self.result.type).shape
        along = math.prod(out_shape[self.dim + 1 :])  # the cat dim's stride in the output
        start = 0
        for piece in self.pieces:
            size = tensor_type(piece.type).shape[self.dim]
            value = em.env.get(piece)
            if value is None:
                raise LoweringError(f"kernel @{em.name}: a concat piece must be computed or loaded in the kernel")
            offset = _row_major(out_shape, self.space)
            if start:
                offset += f" + {start * along}"
            mask = _inside("xmask", tensor_type(piece.type).shape, self.space)
            em.store(f"out{j}", f"({offset})", value, t.dtype, mask, f"piece at {start} along dim {self.dim}")
            start += size


def _concat(name: str, ops: list) -> _Concat:
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


def _select_piece(em: KernelEmitter, cat, space) -> Value:
    """A cat of inputs read in the kernel: each coordinate takes the piece whose range along the cat dim holds it."""
    result = tensor_type(cat.results[0].type)
    dim = constant_value(cat.operands[1]) % len(result.shape)
    x = f"x{dim + len(space) - len(result.shape)}"
    pieces = list(cat.operands[0].owner.operands)
    dtype = compute_dtype(result.dtype)
    ends, start = [], 0
    for k, piece in enumerate(pieces):
        start += tensor_type(piece.type).shape[dim]
        if tensor_type(piece.type).shape[dim] or (k == len(pieces) - 1 and not ends):
            # (every piece empty: the result is too, and the last piece stands for it)
            ends.append((start, cast(em.env[(cat.results[0], k)], dtype)))
    expr = ends[-1][1]
    for end, value in reversed(ends[:-1]):
        expr = f"tl.where({x} < {end}, {value}, {expr})"
    return em.tmp(expr, dtype, CAT)


def _load_padded(em: KernelEmitter, site, padded: TensorType, space) -> Value:
    """A pad of an input: shifted coordinates, then masked (constant), mirrored (reflect) or clamped (replicate)."""
    mode, dims, value = site.pad
    offset = len(space) - len(padded.shape)
    terms, mask = [], ["xmask"]
    for d, (low, size) in enumerate(dims):
        x = f"x{d + offset}"
        if low:
            x = f"({x} - {low})" if low > 0 else f"({x} + {-low})"
        if not low and size == padded.shape[d]:  # not padded
            pass
        elif mode == "reflect":  # -1 -> 1, size -> size - 2
            x = f"({size - 1} - tl.abs({size - 1} - tl.abs({x})))"
        elif mode == "replicate":
            x = f"tl.minimum(tl.maximum({x}, 0), {size - 1})"
        else:  # constant: outside the input is the value
            mask += [f"({x} >= 0)"] if low > 0 else []
            mask += [f"({x} < {size})"] if low + size < padded.shape[d] else []
        terms.append(f"{x} * {site.name}_st{d + offset}")
    other = em.scalar_text(value) if mode == "constant" else None
    address = f"{site.name} + ({' + '.join(terms) or 'xindex * 0'})"
    return em.load(address, padded.dtype, site.comment(), " & ".join(mask), other)


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


def _scatter_space(name: str, block: ir.Block, op, stored: list) -> tuple[tuple[int, ...], tuple]:
    """A scatter kernel's iteration space (its index's), and (result, input) pairs: outputs that start as copies of inputs.

    The scattered-into tensor is copied into the output before the launch;
    every other result is stored over the iteration space.
    """
    plan = scatter(op)
    if isinstance(plan, str):
        raise LoweringError(f"kernel @{name}: '{op.operation.name}': {plan}")
    target = op.operands[0]
    if not isinstance(target.owner, ir.Block):
        raise LoweringError(f"kernel @{name}: '{op.operation.name}' scatters into a computed value; it must be a kernel input")
    init = tuple((j, ir.BlockArgument(target).arg_number) for j, v in enumerate(stored) if v == op.results[0])
    if any(v != op.results[0] and tensor_type(v.type).shape != plan.target.shape for v in stored):
        raise LoweringError(f"kernel @{name}: results other than the scatter's must have its iteration space")
    if plan.source is not None and not isinstance(plan.source.owner, ir.Block):
        if tensor_type(plan.source.type).shape != plan.target.shape:
            raise LoweringError(f"kernel @{name}: a computed scatter source must have the index's shape")
    return plan.target.shape, init


__all__ = ["lower_pointwise"]
