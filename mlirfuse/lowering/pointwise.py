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

import dataclasses
import math
from dataclasses import dataclass

from mlirfuse.dialect import GroupKind
from mlirfuse.ir import TensorType, block_ops, constant_value, ir, is_constant_like, tensor_type
from mlirfuse.lowering.dynamic import dynamic_sizes, format_shape
from mlirfuse.lowering.emitter import (
    WIDE,
    KernelEmitter,
    LoweringError,
    Site,
    TritonKernel,
    Value,
    as_declared,
    cast,
    coords,
    load_sites,
    program_offset,
    static_signature,
    stored_value,
)
from mlirfuse.lowering.indexing import IndexingEmitter, kernel_device
from mlirfuse.ops.dtypes import TRITON_DTYPES, round_to
from mlirfuse.ops.elementwise import compute_dtype
from mlirfuse.ops.indexing import (
    CREATIONS,
    EMPTIES,
    GATHERS,
    INDEXING_OPS,
    TRIANGLES,
    gather,
    scatter,
    scatter_op,
    scatters_into_empty,
)
from mlirfuse.ops.views import CAT, PADS, RESHAPES, VIEW_OPS, is_identity_view, pad_args, view_chain, view_coords


@dataclass(frozen=True)
class _Place:
    """Where a value is evaluated: a coordinate expression per dim of `shape`, and mask terms for lanes outside it.

    A kernel evaluates its values at its own coordinates (x0, x1, ...); the
    operand of a pad, or a piece of a cat, is evaluated at the pad's shifted,
    mirrored or clamped coordinates (a constant pad masks the lanes outside
    its operand: they load nothing and take the pad value), the operand of a
    view of a computed value at the view's (`view_coords`). Places compose:
    a pad inside a pad's operand shifts the shifted coordinates.
    """

    shape: tuple[int, ...]
    coords: tuple[str, ...]
    masks: tuple[str, ...] = ()

    def at(self, shape) -> list[str]:
        """The coordinates of a value of `shape` broadcast into this place's shape ("0" along broadcast dims)."""
        offset = len(self.shape) - len(shape)
        return ["0" if n == 1 and self.shape[d + offset] != 1 else self.coords[d + offset] for d, n in enumerate(shape)]

    def padded(self, pad, shape) -> tuple[_Place, list[str]]:
        """The place of a pad's operand when the pad (of `shape`) is evaluated here, and the mask terms the pad adds."""
        mode, dims, _ = pad
        coords, inside = [], []
        # Lanes past a pad narrower than the place (a concat kernel's shorter piece) read nothing.
        offset = len(self.shape) - len(shape)
        beyond = [f"({x} < {n})" for d, (n, x) in enumerate(zip(shape, self.at(shape))) if 1 < n < self.shape[d + offset]]
        for d, ((low, size), x) in enumerate(zip(dims, self.at(shape))):
            if low:
                x = f"({x} - {low})" if low > 0 else f"({x} + {-low})"
            if not low and size == shape[d]:  # not padded
                pass
            elif mode == "reflect":  # -1 -> 1, size -> size - 2
                x = f"({size - 1} - tl.abs({size - 1} - tl.abs({x})))"
            elif mode == "replicate":
                x = f"tl.minimum(tl.maximum({x}, 0), {size - 1})"
            elif mode == "circular":  # x > -size (pads are at most the size): wrap with a non-negative remainder
                x = f"(({x} + {size}) % {size})"
            else:  # constant: outside the operand is the value
                inside += [f"({x} >= 0)"] if low > 0 else []
                inside += [f"({x} < {size})"] if low + size < shape[d] else []
            coords.append(x)
        return _Place(tuple(size for _, size in dims), tuple(coords), self.masks + tuple(beyond + inside)), inside


class _PointwiseEmitter(IndexingEmitter):
    """One flat [XBLOCK] block over the iteration space: coordinates x0, x1, ..."""

    computed_tables = True

    def __init__(self, name: str, block: ir.Block, space: tuple[int, ...], sites: dict):
        super().__init__(name, block)
        self.space, self.sites = space, sites
        self.here = _Place(space, tuple(f"x{d}" for d in range(len(space))))
        self.placed: dict[tuple[ir.Value, _Place], Value | None] = {}  # values evaluated at other places

    def coordinate(self, d: int) -> str:
        return f"x{d}"

    def lane_mask(self, shape) -> str:
        return _within("xmask", shape, self.space)

    def block_shape(self) -> str:
        return "[XBLOCK]"

    def load_at(self, site: Site, shape, dtype: str) -> Value:
        offset = " + ".join(f"x{d} * {site.name}_st{d}" for d in range(len(self.space))) or "xindex * 0"
        return self.load(f"{site.name} + ({offset})", dtype, site.comment(), self.lane_mask(shape))

    def load_in(self, site: Site, shape, dtype: str, place: _Place, other=None) -> Value:
        """A load of `site` (a value of `shape`) at `place`, masked outside it (`other` there)."""
        # A site addressed through its own strides (`_own_strides`) or through its strides in the space.
        offset = 0 if site.table_rank else len(self.space) - len(shape)
        terms = [f"{x} * {site.name}_st{d + offset}" for d, x in enumerate(place.at(shape)) if x != "0"]
        address = f"{site.name} + ({' + '.join(terms) or 'xindex * 0'})"
        other = None if other is None else self.scalar_text(other)
        return self.load(address, dtype, site.comment(), " & ".join(["xmask", *place.masks]), other)

    def value_in(self, v: ir.Value, place: _Place) -> Value | None:
        """`v` evaluated at `place`: loads, pads, cats and elementwise ops, once per place (None: a constant)."""
        if place == self.here and v in self.env:
            return self.env[v]
        # (Not yet emitted here: a value read only through a pad that pads by nothing, F.pad(sgn(x), [0, 0]),
        # is evaluated lazily like any other place; fuzz seed 2610451 "'torch.aten.pad' of a constant".)
        if is_constant_like(v):
            return None
        key = (v, place)
        if key not in self.placed:
            site = self.sites.get(v)
            t = tensor_type(v.type)
            op = v.owner
            if site is not None and site.pad is None:
                value = self.load_in(site, t.shape, t.dtype, place)
            elif op.operation.name in PADS:
                value = self.pad_in(op, place)
            elif op.operation.name == CAT:
                value = self.cat_in(op, place)
            elif op.operation.name in VIEW_OPS:
                value = self.view_in(op, place)
            elif op.operation.name in CREATIONS:
                value = self._creation(op, self.coordinate_in(place))
            elif op.operation.name in TRIANGLES:
                value = self._triangle(op, lambda u: self.value_in(u, place), self.coordinate_in(place))
            elif op.operation.name in INDEXING_OPS:  # gathers and pools read tables at the kernel's own coordinates
                raise LoweringError(f"kernel @{self.name}: '{op.operation.name}' cannot be evaluated at a pad's or cat piece's coordinates")
            else:
                value = KernelEmitter.emit_op(self, op, lambda u: self.value_in(u, place))
            self.placed[key] = value
        return self.placed[key]

    def _computed_index(self, v: ir.Value, plan, operand_value) -> Value:
        """A computed index, evaluated where the result's index dims put it (an embedding of computed position ids)."""
        if not plan.trailing:
            return operand_value(v)
        shape = tensor_type(v.type).shape
        at = self.here.at(plan.shape)
        first = plan.start + plan.width - len(shape)
        coords = tuple("0" if n == 1 else at[first + i] for i, n in enumerate(shape))
        value = self.value_in(v, _Place(tuple(shape), coords))
        if value is None:
            raise LoweringError(f"kernel @{self.name}: a gather's index is a constant")
        return value

    def _gather_computed(self, op, plan, operand_value) -> Value:
        """A gather of a computed table: the table's ops evaluated at the gathered coordinates (0 where an index is out of range)."""
        coords, mask = self._table_coords(op.results[0], plan, operand_value, op.operation.name)
        shape = tensor_type(plan.table.type).shape
        terms = tuple(t for t in mask.split(" & ") if t != "xmask")  # (every load masks xmask already)
        place = _Place(tuple(shape), tuple(coords.get(d, "0") for d in range(len(shape))), terms)
        value = self.value_in(plan.table, place)
        if value is None:
            raise LoweringError(f"kernel @{self.name}: '{op.operation.name}' of a constant")
        dtype = compute_dtype(tensor_type(op.results[0].type).dtype)
        zero = "False" if dtype == "bool" else "0"
        return self.tmp(f"tl.where({mask}, {cast(value, dtype)}, {zero})", dtype, f"{op.operation.name}: of a computed table")

    def coordinate_in(self, place: _Place):
        """`coord(shape, j)` for creation ops evaluated at `place`: dim j's coordinate of a value of `shape` there, as a block."""

        def coord(shape, j: int) -> str:
            x = place.at(shape)[j]
            return f"tl.full({self.block_shape()}, {x}, tl.int32)" if x.lstrip("-").isdigit() else x

        return coord

    def view_in(self, op, place: _Place) -> Value | None:
        """A view of a computed value evaluated at `place`: its operand at the coordinates the view reads."""
        result = tensor_type(op.results[0].type).shape
        inner = view_coords(op.operation, place.at(result))
        if inner is None:
            raise LoweringError(f"kernel @{self.name}: '{op.operation.name}' of a computed value has no index map")
        source = tensor_type(op.operands[0].type).shape
        return self.value_in(op.operands[0], _Place(tuple(source), tuple(inner), place.masks))

    def pad_in(self, op, place: _Place) -> Value:
        """A pad evaluated at `place`: its operand at the pad's coordinates; a constant pad's value outside them."""
        result = tensor_type(op.results[0].type)
        site = self.sites.get(op.results[0])
        pad = site.pad if site is not None else pad_args(op)
        if pad is None:
            raise LoweringError(f"kernel @{self.name}: '{op.operation.name}' must pad by constants")
        mode, _, fill = pad
        inner, inside = place.padded(pad, result.shape)
        if site is not None:  # a pad of an input: one load, the pad value as `other`
            source = tensor_type(op.operands[0].type).shape
            return self.load_in(site, source, result.dtype, inner, fill if mode == "constant" else None)
        value = self.value_in(op.operands[0], inner)
        if value is None:
            raise LoweringError(f"kernel @{self.name}: '{op.operation.name}' of a constant")
        if mode != "constant" or not inside:
            return value
        dtype = compute_dtype(result.dtype)
        fill = round_to(fill, result.dtype) if isinstance(fill, float) else fill
        fill_text = repr(bool(fill)) if dtype == "bool" else self.scalar_text(fill)
        return self.tmp(f"tl.where({' & '.join(inside)}, {cast(value, dtype)}, {fill_text})", dtype, op.operation.name)

    def cat_in(self, op, place: _Place) -> Value:
        """A cat evaluated at `place`: each piece at its own coordinates (shifted along the cat dim), the one whose range holds the lane's picked."""
        result = tensor_type(op.results[0].type)
        dim = constant_value(op.operands[1]) % len(result.shape)
        x = place.at(result.shape)[dim]
        dtype = compute_dtype(result.dtype)
        ends, start = [], 0
        pieces = list(op.operands[0].owner.operands)
        for k, piece in enumerate(pieces):
            size = tensor_type(piece.type).shape
            lows = tuple((start if d == dim else 0, n) for d, n in enumerate(size))
            start += size[dim]
            if not size[dim] and not (k == len(pieces) - 1 and not ends):
                continue  # (every piece empty: the result is too, and the last piece stands for it)
            site = self.sites.get((op.results[0], k))
            if place == self.here and site is not None:
                value = self.env[(op.results[0], k)]  # loaded with the kernel's other inputs
            elif site is not None:
                value = self.load_in(site, size, tensor_type(piece.type).dtype, place.padded(site.pad, result.shape)[0], 0)
            else:
                value = self.value_in(piece, place.padded(("constant", lows, 0), result.shape)[0])
            # a computed f16/bf16 piece of a wider cat: eager widens the piece's rounded values
            ends.append((start, cast(as_declared(piece, value), dtype)))
        expr = ends[-1][1]
        for end, value in reversed(ends[:-1]):
            expr = f"tl.where({x} < {end}, {value}, {expr})"
        return self.tmp(expr, dtype, CAT)


def lower_pointwise(kernel, kind: GroupKind) -> TritonKernel:
    """Emit the Triton source of a `pointwise` or `concat` fusion.kernel."""
    name = kernel.attributes["sym_name"].value
    block = kernel.regions[0].blocks[0]
    ops, terminator = block_ops(block)
    inputs, outputs = static_signature(name, block, terminator, dynamic=kind == GroupKind.POINTWISE)
    sites = load_sites(name, block, cat_of_inputs=kind != GroupKind.CONCAT, computed_pads=True)
    # Each result is stored in row-major order; an exit reshape stores the
    # value it reshapes, so the iteration space is that value's shape.
    stored = [stored_value(v, sites) for v in terminator.operands]
    cat = _concat(name, ops) if kind == GroupKind.CONCAT else None
    scatter, init = (scatter_op(block), ()) if kind == GroupKind.SCATTER else (None, ())
    if cat is not None:
        shape = cat.space
    elif scatter is not None:
        shape, init = _scatter_space(name, block, scatter, stored)
    else:
        shape = tensor_type(stored[0].type).shape
        if any(tensor_type(v.type).shape != shape for v in stored):
            raise LoweringError(f"kernel @{name}: results have different shapes; a pointwise kernel has one iteration space")
    rank = len(shape)
    sites = {value: _own_strides(value, site, shape) for value, site in sites.items()}

    em = _PointwiseEmitter(name, block, shape, sites)
    # Every load site (an input, or a chain of views of one) read at the
    # kernel's coordinates is loaded once there, through strides that
    # broadcast it; sites read only by pads and cats are loaded at theirs.
    # (In a concat kernel a piece narrower than the space is masked beyond its end.)
    here = _read_here(ops, terminator, cat, sites)
    for value, site in sites.items():
        if site.pad is not None:  # a pad of an input, or a piece of a cat of inputs padded to the cat's shape
            padded = value[0] if isinstance(value, tuple) else value
            if padded in here:
                source = tensor_type(_padded_operand(value).type)
                mode, _, fill = site.pad
                place = em.here.padded(site.pad, tensor_type(padded.type).shape)[0]
                em.env[value] = em.load_in(site, source.shape, source.dtype, place, fill if mode == "constant" else None)
            continue
        if value in here:
            em.env[value] = em.load_at(site, tensor_type(value.type).shape, tensor_type(value.type).dtype)
    for op in ops:
        what = op.operation.name
        if not what.startswith("torch.constant.") and not any(r in here for r in op.results):
            continue  # read only at a pad's or cat piece's coordinates
        if what == CAT and cat is None:
            em.env[op.results[0]] = em.cat_in(op, em.here)
        elif what in PADS and op.results[0] not in sites:  # a pad of a computed value
            em.env[op.results[0]] = em.pad_in(op, em.here)
        elif _computed_view(op, sites):
            em.env[op.results[0]] = em.view_in(op, em.here)
        elif _identity_of_computed(op, sites):
            em.env[op.results[0]] = em.env[op.operands[0]]
        elif what not in VIEW_OPS | PADS and what != CAT and (scatter is None or op != scatter) and what not in EMPTIES:
            em.emit_body_op(op)  # (an `empty` is the scatter's output buffer: nothing to compute)
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
    dynamic = _dynamic_sizes(name, em, sites, shape, terminator, stored, outputs)
    params = em.params(all_sites, len(outputs), ["xnumel"] + [f"s{d}" for d in range(1, rank)], rank)
    offset = program_offset(inputs + outputs, shape)
    head = [f"xoffset = {offset}", "xindex = xoffset + tl.arange(0, XBLOCK)", "xmask = xindex < xnumel"]
    source = em.render(
        [f"Iteration space {format_shape(shape)}; inputs are addressed through their strides in it."],
        params, ["XBLOCK"] + ([WIDE] if WIDE in offset else []), head + coords("xindex", list(range(rank)), "x") + em.body,
    )
    return TritonKernel(
        name, source, tuple(inputs), tuple(outputs), tuple(em.scalars), tuple(params),
        kind=kind, sites=tuple(all_sites), space=shape, device="" if inputs else kernel_device(block), init=init,
        dynamic=dynamic, wide_flag=WIDE in offset,
    )


def _dynamic_sizes(name: str, em, sites: dict, shape, terminator, stored: list, outputs: list):
    """How the launcher sizes a pointwise kernel over `?` sizes (None if static); refuses what needs static sizes."""
    types = [tensor_type((v[0] if isinstance(v, tuple) else v).type) for v in sites] + list(outputs)
    if all(n is not None for n in shape) and all(t.is_static for t in types):
        return None
    # Pads, cats and gathers address their operands with sizes baked into the source.
    if em.indexing or any(site.pad is not None or isinstance(v, tuple) for v, site in sites.items()):
        raise LoweringError(f"kernel @{name}: pads, cats of inputs and gathers need static sizes")
    spans = tuple(range(len(shape)))
    return dynamic_sizes(
        name, shape, [tensor_type(v.type).shape for v in sites],
        [(t, tensor_type(s.type).shape, spans, s != v) for t, s, v in zip(outputs, stored, terminator.operands)],
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
            # an f16/bf16 piece of a wider cat: eager widens the piece's rounded values
            value = as_declared(piece, value)
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


def _own_strides(value, site: Site, space) -> Site:
    """`site`, addressed through its own strides where it has more dims than the iteration space.

    Such a site is read only where a view of a computed value reads it (a
    copy's input, evaluated at the coordinates of a reshape of the copy:
    `legality_cat.why_not_viewed`), never at the kernel's own coordinates;
    its strides in the space (`runtime.kernels.strides_in`) would have no
    place for its leading dims.
    """
    if isinstance(value, tuple) or site.pad is not None or site.table_rank:
        return site
    rank = len(tensor_type(value.type).shape)
    return dataclasses.replace(site, table_rank=rank) if rank > len(space) else site


def _padded_operand(key) -> ir.Value:
    """What a padded site pads: the pad's operand, or for key (cat result, k) the cat's piece k."""
    if isinstance(key, tuple):
        cat, k = key
        return cat.owner.operands[0].owner.operands[k]
    return key.owner.operands[0]


def _computed_view(op, sites: dict) -> bool:
    """Is `op` a view of a computed value that the kernel reads (not only stores): evaluated at the view's coordinates?"""
    if op.operation.name not in VIEW_OPS or op.results[0] in sites or view_chain(op.results[0], op.operation.block) is not None:
        return False
    return not _stored_only(op.results[0]) and not is_identity_view(op.operation)


def _identity_of_computed(op, sites: dict) -> bool:
    """Is `op` a view of a computed value that reads each element where it is (its value is its operand's)?"""
    return (op.operation.name in VIEW_OPS and op.results[0] not in sites and is_identity_view(op.operation)
            and view_chain(op.results[0], op.operation.block) is None)


def _stored_only(value) -> bool:
    """Is `value` only yielded, directly or through reshapes (an exit reshape: stored row-major, no index map)?"""
    return all(
        u.owner.operation.name == "fusion.yield" or (u.owner.operation.name in RESHAPES and _stored_only(u.owner.results[0]))
        for u in value.uses
    )


def _read_here(ops: list, terminator, concat, sites: dict) -> set:
    """The values a kernel evaluates at its own coordinates: all but those read only by pads, cat pieces and views (at theirs)."""
    here = set(terminator.operands)
    for op in reversed(ops):
        if not any(r in here for r in op.results):
            continue
        name = op.operation.name
        if name in PADS or (name == CAT and concat is None) or _computed_view(op, sites):
            continue
        if name in GATHERS:  # the table is loaded through its own site, or evaluated at the gathered coordinates
            plan = gather(op)  # (an index that does not broadcast into the result is evaluated where it is read)
            elsewhere = {op.operands[GATHERS[name][0]]} | (set(plan.indices) if not isinstance(plan, str) and plan.trailing else set())
            here.update(v for v in op.operands if v not in elsewhere)
            continue
        here.update(op.operands)
    return here


def _within(mask: str, shape, space) -> str:
    """`mask`, restricted to coordinates inside `shape` where it is narrower than `space` (not broadcast)."""
    offset = len(space) - len(shape)
    terms = [f"(x{d + offset} < {n})" for d, n in enumerate(shape) if _narrower(n, space[d + offset])]
    return " & ".join([mask] + terms)


def _narrower(n, size) -> bool:
    """Is a dim of `n` (not broadcast) narrower than the space's `size`? A `?` is as wide as the space."""
    return n is not None and size is not None and 1 < n < size


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
    if scatters_into_empty(op):  # an `empty` in the group: the output buffer as it is allocated
        init = ()
    elif not isinstance(target.owner, ir.Block):
        raise LoweringError(f"kernel @{name}: '{op.operation.name}' scatters into a computed value; it must be a kernel input")
    else:
        init = tuple((j, ir.BlockArgument(target).arg_number) for j, v in enumerate(stored) if v == op.results[0])
    if any(v != op.results[0] and tensor_type(v.type).shape != plan.target.shape for v in stored):
        raise LoweringError(f"kernel @{name}: results other than the scatter's must have its iteration space")
    if plan.source is not None and not isinstance(plan.source.owner, ir.Block):
        if tensor_type(plan.source.type).shape != plan.target.shape:
            raise LoweringError(f"kernel @{name}: a computed scatter source must have the index's shape")
    return plan.target.shape, init


__all__ = ["lower_pointwise"]
