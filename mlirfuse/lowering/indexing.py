"""Triton lines for the indexing and creation ops of `mlirfuse.ops.indexing`.

`IndexingEmitter` is the `KernelEmitter` the pointwise and reduction
schedules use. It adds per-op emitters for ops whose lines depend on where
a lane is, not only on its operands:

- a gather is one load at a computed address: `table + index * st + coord * st`
  over the table's own strides, masked where an index is out of range (and
  never reading outside the table); an index that is a kernel input is a
  load site of its own, viewed through trailing unsqueezes so it broadcasts
  into the result where the op puts it (`Site.check`: the launcher checks
  its range first and raises as eager does);
- arange / eye / tril / triu compute from the iteration coordinates, full /
  zeros / ones / *_like / fill are `tl.full` of a constant.

A schedule says what a place is: `coordinate(d)` (iteration dim d's
coordinate), `lane_mask(shape)` (the lanes a value of `shape` is live in),
`block_shape()` and `load_at(site, shape, dtype)` (a site's value at the
iteration coordinates).
"""

from __future__ import annotations

import math

from mlirfuse.ir import block_ops, constant_value, ir, is_constant_like, op_id, tensor_type, torch_name
from mlirfuse.lowering.emitter import KernelEmitter, LoweringError, Site, Value, cast
from mlirfuse.lowering.pooling import emit_pool, emit_upsample
from mlirfuse.ops.dtypes import FLOAT_DTYPES, TRITON_DTYPES, number_as
from mlirfuse.ops.elementwise import RULES, compute_dtype
from mlirfuse.ops.indexing import (
    ARANGES,
    CREATIONS,
    EMBEDS,
    EYES,
    GATHERS,
    SCATTERS,
    TRIANGLES,
    creation_value,
    embed,
    gather,
    scatter,
)
from mlirfuse.ops.pooling import POOLS, WINDOWED, window_ops
from mlirfuse.ops.views import view_chain

UNSQUEEZE = ("torch.aten.unsqueeze", (-1,))
# The message prefix of a computed index's range assert: the launcher turns the assert into eager's exception.
INDEX_ASSERT = "mlirfuse index check: "


def indexing_sites(name: str, block: ir.Block, computed_tables: bool = False) -> dict[tuple[ir.Value, int], Site]:
    """The tables (key (result, -1)) and index inputs (key (result, k)) the gathers of a kernel body load.

    `computed_tables`: a gather's table may be computed in the kernel (pointwise kernels evaluate it at the
    gathered coordinates); others must load it.
    """
    sites: dict[tuple[ir.Value, int], Site] = {}
    count: dict[tuple[int, str], int] = {}

    def site_of(value: ir.Value, role: str, extra: tuple = (), **fields) -> Site | None:
        chain = view_chain(value, block)
        if chain is None:
            return None
        i, views = chain
        n = count.get((i, role), 0)
        count[(i, role)] = n + 1
        return Site(i, views + extra, f"in{i}_{role}{n}", **fields)

    for op in block_ops(block)[0]:
        if op.operation.name in EMBEDS:
            src = op.operands[1]
            table = site_of(src, "t", table_rank=len(tensor_type(src.type).shape))
            if table is None:
                raise LoweringError(f"kernel @{name}: '{op.operation.name}' reads a computed src; it must be a kernel input")
            sites[(op.results[0], -1)] = table
        if op.operation.name in WINDOWED:  # the input, or the inputs of its window prologue, read at window positions
            x = op.operands[0]
            table = site_of(x, "t", table_rank=len(tensor_type(x.type).shape))
            if table is not None:
                sites[(op.results[0], -1)] = table
                continue
            for leaf in window_leaves(name, x, block):
                if (leaf, "window") not in sites:
                    sites[(leaf, "window")] = site_of(leaf, "w", table_rank=len(tensor_type(leaf.type).shape))
        if op.operation.name not in GATHERS and op.operation.name not in SCATTERS:
            continue
        plan = gather(op) if op.operation.name in GATHERS else scatter(op)
        if isinstance(plan, str):
            raise LoweringError(f"kernel @{name}: '{op.operation.name}': {plan}")
        result = op.results[0]
        if op.operation.name in SCATTERS:  # the output is a copy of the table, made before the launch
            plan = plan.target
        table_shape = tensor_type(plan.table.type).shape
        if op.operation.name in GATHERS:
            table = site_of(plan.table, "t", table_rank=len(table_shape))
            if table is None and not computed_tables:
                raise LoweringError(f"kernel @{name}: '{op.operation.name}' indexes a computed value; the table must be a kernel input")
            if table is not None:
                sites[(result, -1)] = table
        for k, (v, d) in enumerate(zip(plan.indices, plan.index_dims)):
            site = site_of(v, "i", (UNSQUEEZE,) * plan.trailing, check=(table_shape[d], plan.wrap, plan.error))
            if site is not None:
                sites[(result, k)] = site
            elif plan.trailing and not computed_tables:
                raise LoweringError(
                    f"kernel @{name}: '{op.operation.name}' reads a computed index that does not broadcast into its result"
                )
    return sites


def window_leaves(name: str, x: ir.Value, block: ir.Block) -> list[ir.Value]:
    """The kernel inputs (and view chains of them) a pool's window prologue computing `x` reads, in order."""
    leaves, stack, seen = [], [x], set()
    while stack:
        v = stack.pop()
        if v in seen or is_constant_like(v):
            continue
        seen.add(v)
        if view_chain(v, block) is not None:
            leaves.append(v)
            continue
        op = v.owner
        if not isinstance(op, ir.OpView) or torch_name(op) not in RULES:
            raise LoweringError(f"kernel @{name}: a pool's window prologue must be elementwise ops of kernel inputs")
        stack.extend(reversed(list(op.operands)))
    return leaves


def kernel_device(block: ir.Block) -> str:
    """The device a kernel's creation ops name (what a kernel without inputs allocates on), or ''."""
    for op in block_ops(block)[0]:
        if op.operation.name == "torch.constant.device":
            return str(constant_value(op.results[0]))
    return ""


class IndexingEmitter(KernelEmitter):
    """A KernelEmitter that also writes gathers, creation ops and coordinate masks (see the module docstring)."""

    space: tuple[int, ...] = ()
    computed_tables = False  # may a gather's table be computed in the kernel (`_gather_computed`)?

    def __init__(self, name: str, block: ir.Block):
        super().__init__(name, block)
        self.indexing = indexing_sites(name, block, self.computed_tables)
        self.window = window_ops(block)  # computed by emit_pool at window positions only

    # --- what the schedule says --------------------------------------------------------------

    def coordinate(self, d: int) -> str:
        raise NotImplementedError

    def lane_mask(self, shape) -> str:
        raise NotImplementedError

    def block_shape(self) -> str:
        raise NotImplementedError

    def load_at(self, site: Site, shape, dtype: str) -> Value:
        raise NotImplementedError

    # --- per-op emitters -----------------------------------------------------------------------

    def emit_body_op(self, op) -> None:
        if op.operation.name in POOLS:  # values, and indices where the op has them
            for result, value in zip(op.results, emit_pool(self, op)):
                self.env[result] = value
            return
        if op_id(op.operation) in self.window:
            return
        if op.operation.name in WINDOWED:  # upsampling
            self.env[op.results[0]] = emit_upsample(self, op)
            return
        super().emit_body_op(op)

    def emit_op(self, op, operand_value) -> Value:
        name = op.operation.name
        if name in POOLS:
            if len(op.results) > 1 and any(True for _ in op.results[1].uses):
                raise LoweringError(f"kernel @{self.name}: '{name}' indices are computed in pointwise kernels only")
            return emit_pool(self, op)[0]
        if name in WINDOWED:
            return emit_upsample(self, op)
        if name in GATHERS:
            return self._gather(op, operand_value)
        if name in TRIANGLES:
            return self._triangle(op, operand_value)
        if name in CREATIONS:
            return self._creation(op)
        if name in EMBEDS:
            return self._embed(op, operand_value)
        return super().emit_op(op, operand_value)

    def result_coord(self, shape, j: int) -> str:
        """The coordinate of dim `j` of a value of `shape`, broadcast into the iteration space."""
        if shape[j] == 1:
            return f"tl.zeros({self.block_shape()}, tl.int32)"
        return self.coordinate(len(self.space) - len(shape) + j)

    def _address(self, result: ir.Value, plan, strides: list[str], operand_value, op_name: str) -> tuple[str, str]:
        """(offset, mask) of the element `plan` addresses for each lane (see `_table_coords`)."""
        coords, mask = self._table_coords(result, plan, operand_value, op_name)
        return " + ".join(f"{x} * {strides[d]}" for d, x in coords.items()), mask

    def _table_coords(self, result: ir.Value, plan, operand_value, op_name: str) -> tuple[dict[int, str], str]:
        """({table dim: coordinate}, mask) of the element `plan` addresses for each lane: indices along their dims,
        coordinates along the rest (dims absent read coordinate 0).

        Masked off: lanes outside the value and lanes whose index is out of range. An index computed in the
        kernel is also asserted in range (`tl.device_assert`: compiled out unless the launch asks for debug,
        which checked launches do; the launcher raises eager's exception for it).
        """
        shape = plan.shape
        table_shape = tensor_type(plan.table.type).shape
        masks, coords = [self.lane_mask(shape)], {}
        for k, (v, d) in enumerate(zip(plan.indices, plan.index_dims)):
            site = self.indexing.get((result, k))
            if site is not None:
                aligned = tensor_type(v.type).shape + (1,) * plan.trailing
                index = self.load_at(site, aligned, tensor_type(v.type).dtype)
            else:  # computed in the kernel
                index = self._computed_index(v, plan, operand_value)
            size = table_shape[d]
            low = -size if plan.wrap else 0
            if site is None:  # no host check can see it: a device-side assert, live under MLIRFUSE_CHECK_BOUNDS
                self.out.append(
                    f"tl.device_assert(({index.text} >= {low}) & ({index.text} < {size}), "
                    f"\"{INDEX_ASSERT}{plan.error}: index out of bounds for dimension with size {size}\", "
                    f"mask={masks[0]})  # {op_name}: a computed index"
                )
            if plan.wrap:
                index = self.tmp(f"tl.where({index.text} < 0, {index.text} + {size}, {index.text})", index.dtype, "negative index counts from the end")
            masks.append(f"({index.text} >= 0) & ({index.text} < {size})")
            coords[d] = index.text
        for d, j in enumerate(plan.coord_of):
            if j is not None and table_shape[d] != 1 and shape[j] != 1:
                coords[d] = self.result_coord(shape, j)
        return coords, " & ".join(masks)

    def _gather(self, op, operand_value) -> Value:
        plan = gather(op)
        if (op.results[0], -1) not in self.indexing:
            return self._gather_computed(op, plan, operand_value)
        table = self.indexing[(op.results[0], -1)]
        strides = [f"{table.name}_st{d}" for d in range(table.table_rank)]
        offset, mask = self._address(op.results[0], plan, strides, operand_value, op.operation.name)
        comment = f"{op.operation.name}: {table.comment()}"
        return self.load(f"{table.name} + ({offset})", tensor_type(plan.table.type).dtype, comment, mask, other="0")

    def _computed_index(self, v: ir.Value, plan, operand_value) -> Value:
        """An index the kernel computes, which has the result's layout (`trailing` 0) here."""
        return operand_value(v)

    def _gather_computed(self, op, plan, operand_value) -> Value:
        """A gather of a table the kernel computes (`computed_tables`): the schedule evaluates it where the lanes read."""
        raise LoweringError(f"kernel @{self.name}: '{op.operation.name}' indexes a computed value; the table must be a kernel input")

    def scatter_store(self, op, j: int, dtype: str) -> None:
        """The scatter `op`'s source stored (or atomically added) where it addresses out{j}, a contiguous copy of its input."""
        plan = scatter(op)
        shape = tensor_type(op.results[0].type).shape
        strides = [str(math.prod(shape[d + 1 :])) for d in range(len(shape))]
        offset, mask = self._address(op.results[0], plan.target, strides, self.env.__getitem__, op.operation.name)
        if plan.source is None:
            dt = compute_dtype(dtype)
            # The number as the dtype holds it, as eager converts it (1.5 into int64 is 1): a float literal in an
            # integer tl.full does not compile (fuzz seed 2800028 with --aot: "get_int64(): incompatible ... float").
            number = number_as(plan.value, dt)
            value = Value(f"tl.full({self.block_shape()}, {self.scalar_text(number)}, {TRITON_DTYPES[dt]})", dt)
        else:
            value = self.env[plan.source]
        if plan.accumulate:
            self.out.append(f"tl.atomic_add(out{j} + ({offset}), {cast(value, dtype)}, mask={mask})  # {op.operation.name}")
        else:
            self.store(f"out{j}", f"({offset})", value, dtype, mask, op.operation.name)

    def _embed(self, op, operand_value) -> Value:
        """slice_scatter / select_scatter: src inside the slice (loaded at its coordinates there), the input elsewhere."""
        plan = embed(op)
        result = tensor_type(op.results[0].type)
        x = operand_value(op.operands[0])
        src = self.indexing[(op.results[0], -1)]
        c = self.result_coord(result.shape, plan.dim)
        inside = f"({c} >= {plan.start}) & ({c} < {plan.end})"
        if plan.step != 1:
            inside += f" & (({c} - {plan.start}) % {plan.step} == 0)"
        inside = self.tmp(inside, "bool", f"inside the slice along dim {plan.dim}").text
        terms = []
        for d in range(len(result.shape)):
            if d == plan.dim:
                if not plan.select:
                    terms.append(f"(({c} - {plan.start}) // {plan.step}) * {src.name}_st{d}")
                continue
            if result.shape[d] != 1:
                terms.append(f"{self.result_coord(result.shape, d)} * {src.name}_st{d - (plan.select and d > plan.dim)}")
        mask = f"{self.lane_mask(result.shape)} & {inside}"
        value = self.load(f"{src.name} + ({' + '.join(terms) or '0'})", tensor_type(op.operands[1].type).dtype, f"{op.operation.name}: {src.comment()}", mask, other="0")
        dtype = compute_dtype(result.dtype)
        return self.tmp(f"tl.where({inside}, {cast(value, dtype)}, {cast(x, dtype)})", dtype, op.operation.name)

    def _triangle(self, op, operand_value, coord=None) -> Value:
        """tril / triu of its operand at the coordinates `coord(shape, j)` gives (default: the kernel's own)."""
        coord = coord or self.result_coord
        result = tensor_type(op.results[0].type)
        x = operand_value(op.operands[0])
        rank = len(result.shape)
        row, col = coord(result.shape, rank - 2), coord(result.shape, rank - 1)
        keep = f"({col} - {row} {TRIANGLES[op.operation.name]} {constant_value(op.operands[1])})"
        dtype = compute_dtype(result.dtype)
        if dtype == "bool":
            return self.tmp(f"{cast(x, 'bool')} & {keep}", dtype, op.operation.name)
        return self.tmp(f"tl.where({keep}, {cast(x, dtype)}, 0)", dtype, op.operation.name)

    def _creation(self, op, coord=None) -> Value:
        """A creation op's value at the coordinates `coord(shape, j)` gives (default: the kernel's own)."""
        coord = coord or self.result_coord
        name = op.operation.name
        result = tensor_type(op.results[0].type)
        dtype = compute_dtype(result.dtype)
        block = self.block_shape()
        if name in ARANGES:
            args = [constant_value(v) for v in list(op.operands)[: CREATIONS[name][2]]]
            start, end, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], 1) if len(args) == 2 else args
            i = coord(result.shape, 0)
            if dtype in FLOAT_DTYPES:
                # eager accumulates in double (f32/f64) or float (f16/bf16), then rounds once
                acc = "tl.float64" if result.dtype in ("float32", "float64") else "tl.float32"
                expr = f"({float(start)!r} + {float(step)!r} * ({i}).to({acc}))"
            else:
                expr = f"({int(start)} + {int(step)} * ({i}).to(tl.int64))"
            return self._rounded(expr, "float64" if dtype in FLOAT_DTYPES else "int64", result.dtype, name)
        if name in EYES:
            row, col = coord(result.shape, 0), coord(result.shape, 1)
            return self._rounded(f"({row} == {col})", "bool", result.dtype, name)
        value = creation_value(op)
        value = bool(value) if dtype == "bool" else float(value) if dtype in FLOAT_DTYPES else int(value)
        expr = f"tl.full({block}, {self.scalar_text(value)}, {TRITON_DTYPES[dtype]})"
        return self._rounded(expr, dtype, result.dtype, name)

    def _rounded(self, expr: str, expr_dtype: str, storage: str, comment: str) -> Value:
        """`expr` (of `expr_dtype`) as a value of dtype `storage`, rounded through it as eager's would be."""
        text = cast(Value(expr, expr_dtype), storage)
        if compute_dtype(storage) != storage:
            text = f"{text}.to(tl.float32)"
        return self.tmp(text, compute_dtype(storage), comment)


__all__ = ["IndexingEmitter", "indexing_sites", "kernel_device"]
