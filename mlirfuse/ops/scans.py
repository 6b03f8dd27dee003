"""Scans (cumulative ops) mlirfuse fuses with their pointwise prologue and epilogue.

A scan keeps its input's shape: element i along `dim` combines elements
0..i. The kernel (`lowering/scan.py`) works like a reduction's: rows are the
other dims flattened, the scanned dim is the row, walked in tiles carrying
the running total from one tile to the next. Values are computed as eager's
CPU kernels compute them (`at::acc_type<T, false>`): an integer or bool
input sums (multiplies) in int64, f32 in f64, f16/bf16 in f32, each result
rounded once to its dtype; a `dtype=` argument converts the input first.
(Eager's CUDA kernels keep f32 totals in f32: a total past f32's range on
the way, `[1e30, 1e30, 1e-30]`, is inf there and not on CPU.)

`OPINFO_SUPPORTED` names the PyTorch OpInfo entries whose samples
tests/test_opinfo_reductions.py runs against eager.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlirfuse.ir import constant_value, tensor_type
from mlirfuse.ops.dtypes import BY_NAME as DTYPES
from mlirfuse.ops.elementwise import compute_dtype
from mlirfuse.ops.family import Family, refusal

OPINFO_SUPPORTED = ("cumsum", "cumprod")

# op name -> combine; operand 1 is the dim, operand 2 the dtype (None: the input's, int64 for integers and bools).
SCANS = {
    "torch.aten.cumsum": "sum",
    "torch.aten.cumprod": "prod",
}


@dataclass(frozen=True)
class Scan:
    """What a scan op computes: the running `combine` along `dim` of a `shape` input, stored as `dtype`."""

    combine: str  # sum | prod
    shape: tuple[int, ...]
    dim: int
    dtype: str  # result dtype

    @property
    def dims(self) -> tuple[int, ...]:
        """The scanned dim as the reduction schedule's reduced dims (the kernel's columns)."""
        return (self.dim,)

    @property
    def rnumel(self) -> int:
        return self.shape[self.dim]

    @property
    def accumulator(self) -> str:
        """The dtype the running total is kept in: eager's on CPU (int64 for integers, f64 for f32 and f64, f32 for f16/bf16)."""
        if DTYPES[self.dtype].kind == "int":
            return "int64"
        return "float64" if self.dtype == "float32" else compute_dtype(self.dtype)


def scan(op) -> Scan | str:
    """The Scan `op` computes, or the reason mlirfuse does not fuse it."""
    x, out = tensor_type(op.operands[0].type), tensor_type(op.results[0].type)
    if x is None or out is None:
        return "operand or result is not a ranked tensor of a supported dtype"
    if not x.is_static:
        return "scan over a dynamic shape"
    if not x.shape:
        return "scan of a 0-d tensor"
    dim = constant_value(op.operands[1])
    if not isinstance(dim, int) or isinstance(dim, bool) or not -len(x.shape) <= dim < len(x.shape):
        return "scan dim is not a constant in range"
    if out.dtype == "bool":
        return "scan with a bool result"
    return Scan(SCANS[op.operation.name], x.shape, dim % len(x.shape), out.dtype)


FAMILY = Family(
    __name__, frozenset(SCANS), refusal(scan), fused=frozenset(SCANS), pure=frozenset(SCANS),
    lowering="mlirfuse/lowering/scan.py",
    limits="cumsum and cumprod along one constant dim of a static, non-0-d shape, with a non-bool result; "
    "no reduction in the same kernel; logcumsumexp, cummax and cummin run through ATen",
)
