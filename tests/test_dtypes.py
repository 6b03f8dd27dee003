"""mlirfuse's dtype table is torch-mlir's (`mlirfuse.ops.dtypes`, a copy so that `mlirfuse-opt` need not import torch; `mlirfuse.ir.DTYPES` is a view of it)."""

import torch
from torch_mlir.extras.fx_importer import TORCH_DTYPE_TO_INT, TORCH_DTYPE_TO_MLIR_TYPE_ASM

from mlirfuse.ir import DTYPES


def test_dtype_spellings_and_codes_are_torch_mlirs():
    for name, (spelling, code) in DTYPES.items():
        dtype = getattr(torch, name)
        assert TORCH_DTYPE_TO_MLIR_TYPE_ASM[dtype] == spelling, name
        assert TORCH_DTYPE_TO_INT[dtype] == code, name
