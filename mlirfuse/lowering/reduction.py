"""Reduction kernels: a reduction with its pointwise prologue and epilogue, one kernel.

Every reduction in a group reduces the same dims R of the same shape S. The
kernel works on 2D tiles: rows are the kept dims of S flattened (`xindex`),
columns the reduced dims flattened (`rindex`). Each value is either
*row-space* (constant along R: reduction results and what is computed from
them, shape [XBLOCK, 1]) or *full-space* (shape [XBLOCK, RBLOCK]). Inputs
are addressed through their strides in S, so any axes, broadcasting and
non-contiguous inputs work by index arithmetic.

- persistent (`persistent-reduction`): the whole row fits one block; every
  value is computed once, reductions are `tl.sum(..., 1)` in registers;
- looped (`reduction`): one loop over the row per reduction, accumulating in
  a [XBLOCK, RBLOCK] accumulator; full-space values a later reduction or an
  output needs are recomputed from the inputs in that loop (softmax: one
  loop for the max, one for the sum, one for the output).

f16/bf16 values are computed and accumulated in f32. This module is the
schedule only; every line is written through `KernelEmitter`
(`lowering/emitter.py`), the same per-op emitters as pointwise kernels.
"""

from __future__ import annotations

import math

from mlirfuse.dialect import GroupKind
from mlirfuse.ir import block_ops, ir, is_constant_like, tensor_type
from mlirfuse.lowering.dynamic import dynamic_sizes, format_shape
from mlirfuse.lowering.emitter import (
    WIDE,
    LoweringError,
    Site,
    TritonKernel,
    Value,
    cast,
    coords,
    load_sites,
    program_offset,
    static_signature,
    stored_value,
)
from mlirfuse.lowering.indexing import IndexingEmitter, kernel_device
from mlirfuse.ops.dtypes import TRITON_DTYPES
from mlirfuse.ops.elementwise import compute_dtype
from mlirfuse.ops.reductions import REDUCTIONS, Reduction, reduction
from mlirfuse.ops.views import RESHAPES

_IDENTITY = {
    "sum": "0", "mean": "0", "prod": "1", "max": 'float("-inf")', "min": 'float("inf")',
    "argmax": 'float("-inf")', "argmin": 'float("inf")',
}
# Combine functions for tl.reduce other than tl.sum (helpers in the kernel module).
_COMBINE = {"prod": "multiply", "max": "maximum", "min": "minimum"}
_INDEXED = ("argmax", "argmin")


class ReductionEmitter(IndexingEmitter):
    """The reduction schedule: which values are row-space or full-space, and which loop computes them."""

    def __init__(self, name: str, block: ir.Block, red: Reduction, persistent: bool):
        super().__init__(name, block)
        self.red = red
        self.persistent = persistent
        self.rank = len(red.shape)
        self.kept = [d for d in range(self.rank) if d not in red.dims]
        self.row_memo: dict[ir.Value, Value] = {}
        self.full_memo: dict[ir.Value, Value] | None = {} if persistent else None
        self.producer = {r: op for op in block_ops(block)[0] for r in op.results}
        self.sites = load_sites(name, block)
        if any(site.pad is not None for site in self.sites.values()):
            raise LoweringError(f"kernel @{name}: a pad is read by pointwise kernels only")
        self.accumulators = 0
        self.space = red.shape
        self.row = False  # is the value being emitted a row (constant along the reduced dims)?

    def coord(self, d: int) -> str:
        return f"r{d}" if d in self.red.dims else f"x{d}"

    def is_row(self, value: ir.Value) -> bool:
        op = self.producer.get(value)
        if op is not None and op.operation.name in REDUCTIONS:
            return True
        shape = tensor_type(value.type).shape
        offset = self.rank - len(shape)
        return all(shape[d - offset] == 1 for d in self.red.dims if d - offset >= 0)

    def value(self, v: ir.Value) -> Value:
        if self.is_row(v):
            if v not in self.row_memo:
                saved_out, saved_memo = self.out, self.full_memo
                self.out = self.body
                if not self.persistent:
                    self.full_memo = None
                self.row_memo[v] = self.compute(v, row=True)
                self.out, self.full_memo = saved_out, saved_memo
            return self.row_memo[v]
        if self.full_memo is None:
            raise LoweringError(f"kernel @{self.name}: full-space value needed outside a loop")
        if v not in self.full_memo:
            self.full_memo[v] = self.compute(v, row=False)
        return self.full_memo[v]

    def compute(self, v: ir.Value, row: bool) -> Value:
        if v in self.sites:
            return self.load_site(v, row)
        op = self.producer[v]
        if op.operation.name in REDUCTIONS:
            return self.reduce(op)
        saved, self.row = self.row, row
        try:
            return self.emit_op(op, self.value)
        finally:
            self.row = saved

    def load_site(self, v: ir.Value, row: bool) -> Value:
        saved, self.row = self.row, row
        try:
            return self.load_at(self.sites[v], tensor_type(v.type).shape, tensor_type(v.type).dtype)
        finally:
            self.row = saved

    # --- where a value lives (see lowering/indexing.py): a row [XBLOCK, 1] or a tile [XBLOCK, RBLOCK]

    def coordinate(self, d: int) -> str:
        return self.coord(d)

    def lane_mask(self, shape) -> str:
        return "xmask" if self.row else "xmask & rmask"

    def block_shape(self) -> str:
        return "[XBLOCK, 1]" if self.row else "[XBLOCK, RBLOCK]"

    def load_at(self, site: Site, shape, dtype: str) -> Value:
        dims = self.kept if self.row else list(range(self.rank))
        offset = " + ".join(f"{self.coord(d)} * {site.name}_st{d}" for d in dims)
        offset = offset or ("0 * xindex" if self.row else "0 * xindex + 0 * rindex")
        return self.load(f"{site.name} + ({offset})", dtype, site.comment(), self.lane_mask(shape), other="0")

    def reduce(self, op) -> Value:
        red = reduction(op)
        acc_dtype = compute_dtype(tensor_type(op.operands[0].type).dtype if red.combine in _INDEXED else red.dtype)
        identity = _IDENTITY[red.combine]
        name = op.operation.name
        if red.combine in _INDEXED:
            return self._reduce_indexed(op, red, acc_dtype)
        if self.persistent:
            x = cast(self.value(op.operands[0]), acc_dtype)
            result = _final(red.combine, f"tl.where(xmask & rmask, {x}, {identity})")
        else:
            acc = f"acc{self.accumulators}"
            self.accumulators += 1
            self.body.append(f"{acc} = tl.full([XBLOCK, RBLOCK], {identity}, {TRITON_DTYPES[acc_dtype]})")
            body = self.loop(lambda: self._accumulate(acc, op.operands[0], red, acc_dtype))
            self.body.extend(body)
            result = _final(red.combine, acc)
        if red.combine == "mean":  # a `?` row length is the rnumel argument
            result = f"{result} / {'rnumel' if red.rnumel is None else repr(float(red.rnumel))}"
        return self.tmp(result, acc_dtype, name)

    def _accumulate(self, acc: str, operand, red: Reduction, acc_dtype: str) -> None:
        x = cast(self.value(operand), acc_dtype)
        masked = f"tl.where(xmask & rmask, {x}, {_IDENTITY[red.combine]})"
        if red.combine in ("sum", "mean"):
            self.out.append(f"{acc} = {acc} + {masked}")
        elif red.combine == "prod":
            self.out.append(f"{acc} = {acc} * {masked}")
        else:
            self.out.append(f"{acc} = {_COMBINE[red.combine]}({acc}, {masked})")

    def _reduce_indexed(self, op, red: Reduction, acc_dtype: str) -> Value:
        """argmax/argmin: (value, index) pairs reduced with eager's rules (NaN wins, first index on ties).

        Masked lanes carry index rnumel, so they lose every tie.
        """
        combine = f"{red.combine}_combine"
        if self.persistent:
            x = cast(self.value(op.operands[0]), acc_dtype)
            values = f"tl.where(xmask & rmask, {x}, {_IDENTITY[red.combine]})"
            indices = "tl.where(xmask & rmask, rindex, rnumel)"
        else:
            k = self.accumulators
            self.accumulators += 1
            values, indices = f"acc{k}", f"idx{k}"
            self.body.append(f"{values} = tl.full([XBLOCK, RBLOCK], {_IDENTITY[red.combine]}, {TRITON_DTYPES[acc_dtype]})")
            self.body.append(f"{indices} = tl.full([XBLOCK, RBLOCK], rnumel, tl.int32)")

            def step():
                x = cast(self.value(op.operands[0]), acc_dtype)
                # Per lane, a later chunk has larger indices: replace only when strictly better.
                better = ">" if red.combine == "argmax" else "<"
                self.out.append(
                    f"take{k} = xmask & rmask & (({x} {better} {values}) | ({indices} == rnumel) "
                    f"| (({x} != {x}) & ({values} == {values})))"
                )
                self.out.append(f"{values} = tl.where(take{k}, {x}, {values})")
                self.out.append(f"{indices} = tl.where(take{k}, rindex, {indices})")

            self.body.extend(self.loop(step))
        result = f"tl.reduce(({values}, {indices}), 1, {combine})[1][:, None].to(tl.int64)"
        return self.tmp(result, "int64", op.operation.name)

    def loop(self, body) -> list[str]:
        """Lines of one `for roffset ...` loop running `body` in a fresh full-space scope."""
        saved_out, saved_memo = self.out, self.full_memo
        self.out, self.full_memo = [], {}
        body()
        inner = self.out
        self.out, self.full_memo = saved_out, saved_memo
        head = ["rindex = roffset + rbase", "rmask = rindex < rnumel"] + coords("rindex", list(self.red.dims), "r")
        return ["for roffset in range(0, rnumel, RBLOCK):"] + ["    " + line for line in head + inner]

    def tile_head(self, offset: str) -> list[str]:
        """The lines before the body: this program's rows (`xindex`, their coordinates) and the column base."""
        return [
            f"xoffset = {offset}",
            "xindex = xoffset + tl.arange(0, XBLOCK)[:, None]",
            "xmask = xindex < xnumel",
            *coords("xindex", self.kept, "x"),
            _column_base(offset),
        ]

    def out_offset(self) -> str:
        """Flat offset of the tile position in a contiguous tensor of shape S (Horner form)."""
        if self.rank == 0:
            return "0 * xindex + 0 * rindex"
        expr = self.coord(0)
        for d in range(1, self.rank):
            expr = f"({expr}) * s{d} + {self.coord(d)}"
        return expr


def _final(combine: str, tile: str) -> str:
    """The row values of a [XBLOCK, RBLOCK] tile reduced along the columns."""
    if combine in _COMBINE:
        return f"tl.reduce({tile}, 1, {_COMBINE[combine]})[:, None]"
    return f"tl.sum({tile}, 1)[:, None]"


def lower_reduction(kernel, persistent: bool) -> TritonKernel:
    """Emit the Triton source of a `reduction` / `persistent-reduction` fusion.kernel."""
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    block = kernel.regions[0].blocks[0]
    ops, terminator = block_ops(block)
    reductions = [reduction(op) for op in ops if op.operation.name in REDUCTIONS]
    if not reductions or any(not isinstance(r, Reduction) for r in reductions):
        raise LoweringError(f"kernel @{name}: expected supported reductions in a reduction kernel")
    red = reductions[0]
    if any((r.shape, r.dims) != (red.shape, red.dims) for r in reductions):
        raise LoweringError(f"kernel @{name}: reductions over different axes in one kernel")
    inputs, outputs = static_signature(name, block, terminator, dynamic=True)

    em = ReductionEmitter(name, block, red, persistent)
    rank = em.rank
    row_outputs, full_outputs, scalar_outputs, layouts = [], [], [], []
    static = all(n is not None for n in red.shape)
    rows = math.prod(red.shape[d] for d in em.kept) if static else None
    for j, v in enumerate(terminator.operands):
        if is_constant_like(v):
            raise LoweringError(f"kernel @{name}: yields a constant")
        stored = stored_value(v, em.sites)  # an exit reshape stores the value it reshapes
        shape = tensor_type(stored.type).shape
        row = em.is_row(stored)
        # A 0-d result (computed from 0-d inputs: the same on every row) is stored once, by row 0.
        scalar = shape == () and rows != 1
        (scalar_outputs if scalar else row_outputs if row else full_outputs).append((j, stored))
        if static and not scalar and shape != red.shape and math.prod(shape) != rows:
            raise LoweringError(f"kernel @{name}: result #{j} has neither one element per row nor the reduced input's shape")
        # The space dims the stored value spans: none (0-d), all of them, or (a row without keepdim) the kept ones.
        spans = () if scalar else tuple(em.kept) if row and (v != stored or len(shape) != rank) else tuple(range(rank))
        layouts.append((outputs[j], shape, spans, v != stored))
    if em.indexing and not static:
        raise LoweringError(f"kernel @{name}: gathers need static sizes")
    empty = None
    if red.rnumel is None and row_outputs and any(r.combine in ("max", "min") for r in reductions):
        empty = f"max/min over dims {list(red.dims)}, empty at run time (an error in eager; kernel @{name})"
    dynamic = dynamic_sizes(name, red.shape, [tensor_type(v.type).shape for v in em.sites], layouts, empty)

    offset = program_offset(inputs + outputs, red.shape)
    head = em.tile_head(offset)
    if persistent:
        head += ["rindex = rbase", "rmask = rindex < rnumel", *coords("rindex", list(red.dims), "r")]

    # Row-space outputs first (they force the reductions), then full-space ones.
    row_values = [(j, em.value(v)) for j, v in row_outputs]
    scalar_values = [(j, em.value(v)) for j, v in scalar_outputs]
    if full_outputs:
        stores = []

        def store_full():
            for j, v in full_outputs:
                value = em.value(v)
                em.store(f"out{j}", f"({em.out_offset()})", value, outputs[j].dtype, "xmask & rmask")

        if persistent:
            store_full()
        else:
            stores = em.loop(store_full)
        em.body.extend(stores)
    for j, value in row_values:
        em.store(f"out{j}", "xindex", value, outputs[j].dtype, "xmask")
    for j, value in scalar_values:
        em.store(f"out{j}", "0 * xindex", value, outputs[j].dtype, "xmask & (xindex == 0)")

    sites = list(em.sites.values()) + list(em.indexing.values())
    params = em.params(sites, len(outputs), ["xnumel", "rnumel"] + [f"s{d}" for d in range(rank)], rank)
    kind = GroupKind.PERSISTENT_REDUCTION if persistent else GroupKind.REDUCTION
    header = f"{kind} over dims {list(red.dims)} of {format_shape(red.shape)}: rows are the kept dims, columns the reduced dims."
    source = em.render([header], params, ["XBLOCK", "RBLOCK"] + ([WIDE] if WIDE in offset else []), head + em.body)
    overwrites = _overwrites(em, block, terminator, inputs, outputs, row_outputs, scalar_outputs, rows) if static else ()
    return TritonKernel(
        name, source, tuple(inputs), tuple(outputs), tuple(em.scalars), tuple(params),
        kind=kind, sites=tuple(sites), space=red.shape, reduced=red.dims,
        device="" if inputs else kernel_device(block), dynamic=dynamic, wide_flag=WIDE in offset,
        overwrites=overwrites,
    )


def _overwrites(em: ReductionEmitter, block, terminator, inputs, outputs, row_outputs, scalar_outputs, rows: int) -> tuple:
    """(output, input) pairs of a static reduction kernel whose output may be stored over its input's buffer.

    Row and 0-d outputs are stored last, after every load (`lower_reduction`). An input qualifies for a row
    output when every site reads it through reshapes only, one element per row (broadcast along the reduced
    dims only): contiguous, row x reads element x, in the one program that stores row x. A 0-d output (stored
    by row 0) may overwrite a one-element input. Either way the input's value must reach that output alone:
    another row (momentum=None batch norm's `num_batches_tracked`, read by every row's factor) or another
    thread holding a copy of the row may load it after the store, and must then compute nothing it stores.
    """
    reaches = _reaches(block, terminator)
    indexed = {site.input for site in em.indexing.values()}
    pairs = []
    for j, stored in [*row_outputs, *scalar_outputs]:
        scalar = (j, stored) in scalar_outputs
        for i, t in enumerate(inputs):
            if reaches[i] != {j} or i in indexed or t.dtype != outputs[j].dtype:
                continue
            if t.numel != (1 if scalar else rows) or outputs[j].numel != t.numel:
                continue
            sites = [(v, site) for v, site in em.sites.items() if site.input == i]
            if sites and all(scalar or _reads_its_row(em, v, site) for v, site in sites):
                pairs.append((j, i))
    return tuple(pairs)


def _reads_its_row(em: ReductionEmitter, v, site: Site) -> bool:
    """Does `site` (value `v`) read its input whole through reshapes, broadcast along the reduced dims only?"""
    if not isinstance(v, ir.Value) or site.pad is not None or site.table_rank or site.check is not None:
        return False
    if any(op not in RESHAPES for op, _ in site.chain):
        return False
    shape = tensor_type(v.type).shape
    offset = em.rank - len(shape)
    if offset < 0:
        return False
    for d in range(em.rank):
        size = shape[d - offset] if d >= offset else 1
        if size != (1 if d in em.red.dims else em.space[d]):
            return False
    return True


def _reaches(block, terminator) -> list[set[int]]:
    """Per block argument: the results (terminator operands) whose values depend on it."""
    depends: dict = {arg: 1 << k for k, arg in enumerate(block.arguments)}
    for op in block_ops(block)[0]:
        mask = 0
        for operand in op.operands:
            mask |= depends.get(operand, 0)
        for r in op.results:
            depends[r] = mask
    reaches = [set() for _ in block.arguments]
    for j, v in enumerate(terminator.operands):
        mask = depends.get(v, 0)
        for k in range(len(reaches)):
            if mask >> k & 1:
                reaches[k].add(j)
    return reaches


def _column_base(offset: str) -> str:
    """`rbase`, the columns of a tile: int64 where the rows' offset is (or, over `?` sizes, where `WIDE` says)."""
    base = "tl.arange(0, RBLOCK)[None, :]"
    if WIDE in offset:
        return f"rbase = {base}.to(tl.int64) if {WIDE} else {base}"
    return f"rbase = {base}" + (".to(tl.int64)" if "int64" in offset else "")


__all__ = ["ReductionEmitter", "lower_reduction"]
