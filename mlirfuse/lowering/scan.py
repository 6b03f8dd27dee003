"""Scan kernels: cumsum/cumprod with their pointwise prologue and epilogue, one kernel.

Every scan in a group scans the same dim of the same shape S (fusion
legality, `_why_not_scan`). The kernel works on [XBLOCK, RBLOCK] tiles as a
reduction does (`lowering/reduction.py`, whose schedule this one extends):
rows are the other dims of S flattened, columns the scanned dim. One loop
walks each row a tile at a time; every value is computed once per tile and
every result (all shaped S) is stored in that loop. A scan is

    tile_k = carry_k + tl.cumsum(x, 1)          # tl.cumprod, carry_k *
    carry_k = carry_k + tl.sum(x, 1)[:, None]   # the running total past this tile

with lanes outside the row set to the combine's identity, so a row of any
length is one pass and a row that fits one tile is one `tl.cumsum`. Values
constant along the scanned dim (a [B, 1] input) are loaded once per row,
before the loop. Totals are kept as eager's CPU kernels keep them
(`Scan.accumulator`: int64 for integers, f64 for f32, f32 for f16/bf16); an
f32 result is rounded from its f64 total at once, f16/bf16 ones when stored
(computed in f32 like every other value).
Eager adds in sequence, Triton's scan in a tree: in those wider totals the
order's rounding rarely reaches the result.
"""

from __future__ import annotations

from mlirfuse.dialect import GroupKind
from mlirfuse.ir import block_ops, ir, is_constant_like, tensor_type
from mlirfuse.lowering.dynamic import format_shape
from mlirfuse.lowering.emitter import (
    LoweringError,
    TritonKernel,
    Value,
    cast,
    program_offset,
    static_signature,
    stored_value,
)
from mlirfuse.lowering.indexing import kernel_device
from mlirfuse.lowering.reduction import ReductionEmitter
from mlirfuse.ops.dtypes import TRITON_DTYPES
from mlirfuse.ops.elementwise import compute_dtype
from mlirfuse.ops.reductions import REDUCTIONS
from mlirfuse.ops.scans import SCANS, Scan, scan

# combine -> (identity, the scan of a tile, the tile's total, how a carry joins them)
_SCAN = {
    "sum": ("0", "tl.cumsum({x}, 1)", "tl.sum({x}, 1)[:, None]", "+"),
    "prod": ("1", "tl.cumprod({x}, 1)", "tl.reduce({x}, 1, multiply)[:, None]", "*"),
}


class ScanEmitter(ReductionEmitter):
    """The reduction schedule with scans in place of reductions: scan results are tiles, carried across the loop."""

    def __init__(self, name: str, block: ir.Block, plan: Scan):
        super().__init__(name, block, plan, persistent=False)
        self.carries = 0

    def is_row(self, value: ir.Value) -> bool:
        # A scan over a 1-element dim is still a tile (computed in the loop, as every scan is).
        return self.red.rnumel != 1 and super().is_row(value)

    def compute(self, v: ir.Value, row: bool) -> Value:
        op = self.producer.get(v)
        if v not in self.sites and op is not None and op.operation.name in SCANS:
            return self.scan(op)
        return super().compute(v, row)

    def scan(self, op) -> Value:
        plan = scan(op)
        acc = plan.accumulator
        identity, scanned, total, join = _SCAN[plan.combine]
        carry = f"carry{self.carries}"
        self.carries += 1
        self.body.append(f"{carry} = tl.full([XBLOCK, 1], {identity}, {TRITON_DTYPES[acc]})")  # before the loop
        x = self.value(op.operands[0])
        if tensor_type(op.operands[0].type).dtype != plan.dtype:  # dtype=: eager converts the input first
            x = Value(cast(x, plan.dtype), plan.dtype)
        lanes = self.tmp(f"tl.where(xmask & rmask, {cast(x, acc)}, {identity})", acc, "scanned lanes (identity outside the row)")
        result = self.tmp(f"{carry} {join} {scanned.format(x=lanes.text)}", acc, op.operation.name)
        self.out.append(f"{carry} = {carry} {join} {total.format(x=lanes.text)}")
        wide = compute_dtype(plan.dtype)
        if acc != wide:  # an f32 result of an f64 total: rounded as eager stores it
            result = self.tmp(cast(result, wide), wide, "round to the result's dtype")
        elif self.eager_precision and plan.dtype != wide:  # fusion-outline{precision=eager}: f16/bf16 as eager stores them
            result = self.tmp(f"{cast(result, plan.dtype)}.to({TRITON_DTYPES[wide]})", wide, "round to the result's dtype")
        return result


def lower_scan(kernel) -> TritonKernel:
    """Emit the Triton source of a `scan` fusion.kernel."""
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    block = kernel.regions[0].blocks[0]
    ops, terminator = block_ops(block)
    plans = [scan(op) for op in ops if op.operation.name in SCANS]
    if not plans or any(not isinstance(p, Scan) for p in plans) or any(op.operation.name in REDUCTIONS for op in ops):
        raise LoweringError(f"kernel @{name}: expected supported scans and no reduction in a scan kernel")
    plan = plans[0]
    if any((p.shape, p.dim) != (plan.shape, plan.dim) for p in plans):
        raise LoweringError(f"kernel @{name}: scans over different axes in one kernel")
    inputs, outputs = static_signature(name, block, terminator)

    em = ScanEmitter(name, block, plan)
    stored = []
    for j, v in enumerate(terminator.operands):
        if is_constant_like(v):
            raise LoweringError(f"kernel @{name}: yields a constant")
        value = stored_value(v, em.sites)  # an exit reshape stores the value it reshapes
        if tensor_type(value.type).shape != plan.shape:
            raise LoweringError(f"kernel @{name}: result #{j} does not have the scanned shape {format_shape(plan.shape)}")
        stored.append(value)

    head = em.tile_head(program_offset(inputs + outputs, plan.shape))

    def store_all():
        for j, v in enumerate(stored):
            em.store(f"out{j}", f"({em.out_offset()})", em.value(v), outputs[j].dtype, "xmask & rmask")

    em.body.extend(em.loop(store_all))  # carries and row values go before it, into em.body

    sites = list(em.sites.values()) + list(em.indexing.values())
    rank = len(plan.shape)
    params = em.params(sites, len(outputs), ["xnumel", "rnumel"] + [f"s{d}" for d in range(rank)], rank)
    header = (f"{GroupKind.SCAN} along dim {plan.dim} of {format_shape(plan.shape)}: rows are the other dims, "
              "columns the scanned dim, one pass carrying each row's running total.")
    source = em.render([header], params, ["XBLOCK", "RBLOCK"], head + em.body)
    return TritonKernel(
        name, source, tuple(inputs), tuple(outputs), tuple(em.scalars), tuple(params),
        kind=GroupKind.SCAN, sites=tuple(sites), space=plan.shape, reduced=plan.dims,
        device="" if inputs else kernel_device(block),
    )


__all__ = ["ScanEmitter", "lower_scan"]
