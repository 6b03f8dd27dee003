"""The one dtype table: each dtype mlirfuse handles, with every spelling of it the compiler needs.

The first two columns are torch-mlir's own tables
(`torch_mlir.extras.fx_importer.TORCH_DTYPE_TO_MLIR_TYPE_ASM`,
`TORCH_DTYPE_TO_INT`), copied: importing that module imports torch, which
`mlirfuse-opt` and the lowering never need. tests/test_dtypes.py checks the
copy against them. Every other dtype table is derived from `TABLE` below
(tests/test_ops_registry.py fails if a second one is written out).
"""

from __future__ import annotations

import functools
import math
import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    name: str  # torch's name, as mlirfuse spells dtypes everywhere: "float32"
    asm: str  # torch-mlir's spelling in `!torch.vtensor<[...],f32>`
    code: int  # torch-mlir's int for it as a dtype operand (torch's ScalarType number)
    triton: str  # Triton's spelling
    pointer: str  # a pointer to it in a Triton signature (ahead-of-time compilation)
    kind: str  # "float" | "int" | "bool"
    bits: int  # storage width
    # Floats: the largest finite value, as a literal Triton reads in the dtype's compute type.
    max: str | None = None


TABLE = (
    DType("float32", "f32", 6, "tl.float32", "*fp32", "float", 32, "3.4028234663852886e+38"),
    DType("float16", "f16", 5, "tl.float16", "*fp16", "float", 16, "65504.0"),
    DType("bfloat16", "bf16", 15, "tl.bfloat16", "*bf16", "float", 16, "3.3895313892515355e+38"),
    DType("float64", "f64", 7, "tl.float64", "*fp64", "float", 64, "1.7976931348623157e+308"),
    DType("int64", "si64", 4, "tl.int64", "*i64", "int", 64),
    DType("int32", "si32", 3, "tl.int32", "*i32", "int", 32),
    DType("int16", "si16", 2, "tl.int16", "*i16", "int", 16),
    DType("int8", "si8", 1, "tl.int8", "*i8", "int", 8),
    DType("uint8", "ui8", 0, "tl.uint8", "*u8", "int", 8),
    DType("bool", "i1", 11, "tl.int1", "*i1", "bool", 1),
)

# Views of the table, each under the name its readers know it by (in the table's order).
BY_NAME = {d.name: d for d in TABLE}
FLOAT_DTYPES = tuple(d.name for d in TABLE if d.kind == "float")
INT_DTYPES = tuple(d.name for d in TABLE if d.kind == "int")
TRITON_DTYPES = {d.name: d.triton for d in TABLE}
POINTER_TYPES = {d.name: d.pointer for d in TABLE}
BITS = {d.name: d.bits for d in TABLE if d.kind == "int"}
FLOAT_MAX = {d.name: d.max for d in TABLE if d.kind == "float"}


def itemsize(name: str) -> int:
    """Bytes per element of dtype `name` in memory (a bool takes a byte)."""
    return (BY_NAME[name].bits + 7) // 8
DTYPE_CODES = {d.name: d.code for d in TABLE}
# torch-mlir's dtype operand (an int) -> dtype name.
SCALAR_TYPES = {d.code: d.name for d in TABLE}
# torch-mlir's spelling in a tensor type -> dtype name.
BY_ASM = {d.asm: d.name for d in TABLE}


def round_to(value: float, dtype: str) -> float:
    """`value` rounded to nearest even in f16 or bf16, as torch.tensor(value, dtype=...) does."""
    if not math.isfinite(value):
        return value
    try:
        if dtype == "float16":
            return struct.unpack("<e", struct.pack("<e", value))[0]
        bits = struct.unpack("<I", struct.pack("<f", value))[0]  # via f32, as torch converts
    except OverflowError:  # beyond the dtype's range
        return math.copysign(math.inf, value)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def number_as(value, dtype: str):
    """A Python number as eager converts it into a tensor of `dtype` with a float in it: an integer dtype truncates a
    finite float (1.5 -> 1, -1.5 -> -1), bool takes its truth; anything else is returned as it is."""
    if isinstance(value, float) and math.isfinite(value) and BY_NAME[dtype].kind == "int":
        return int(value)
    if dtype == "bool" and isinstance(value, (int, float)):
        return bool(value)
    return value


@functools.cache
def torch_dtypes() -> dict:
    """torch-mlir's dtype code -> `torch.dtype`, for every dtype torch-mlir knows (an ATen call may take any).

    torch-mlir's table itself, inverted (its codes are not always torch's
    ScalarType numbers: complex64 is 10 there, 9 in torch). Only the runtime
    calls this; the import is here so that the rest of this module needs no torch.
    """
    from torch_mlir.extras.fx_importer import TORCH_DTYPE_TO_INT

    return {code: dtype for dtype, code in TORCH_DTYPE_TO_INT.items()}


__all__ = [
    "BITS", "BY_ASM", "BY_NAME", "DTYPE_CODES", "DType", "FLOAT_DTYPES", "FLOAT_MAX", "INT_DTYPES", "POINTER_TYPES",
    "SCALAR_TYPES", "TABLE", "TRITON_DTYPES", "itemsize", "number_as", "round_to", "torch_dtypes",
]
