"""The op families live in `mlirfuse/ops/`, and the dtype table is written once, in `mlirfuse/ops/dtypes.py`.

- no family module comes back to the package root;
- no other module spells out a dtype table (a dict keyed by dtype names
  or their spellings, or a list of every float or every integer dtype):
  they read `mlirfuse.ops.dtypes` (checked on the AST, nothing imported);
- the table's values are torch-mlir's, torch's and Triton's own;
- the registry holds each family once, and an op starts groups for one family only.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
import triton.language as tl
from torch_mlir.extras.fx_importer import TORCH_DTYPE_TO_INT, TORCH_DTYPE_TO_MLIR_TYPE_ASM

from mlirfuse.ops import dtypes

PACKAGE = Path(__file__).resolve().parents[1] / "mlirfuse"
FAMILIES = ("elementwise", "reductions", "scans", "indexing", "pooling", "views", "matmul", "conv", "attention")
# Every spelling a dtype has in the table: a dict keyed (or valued) by two of them is a dtype table.
SPELLINGS = {s for d in dtypes.TABLE for s in (d.name, d.asm, d.triton, d.pointer)}


@pytest.mark.parametrize("name", [*FAMILIES, "matmuls", "special_values", "dtypes"])
def test_no_family_module_at_the_package_root(name):
    assert not (PACKAGE / f"{name}.py").exists(), f"mlirfuse/{name}.py: op families live in mlirfuse/ops/"


def test_each_family_has_its_module_in_ops():
    assert all((PACKAGE / "ops" / f"{name}.py").exists() for name in FAMILIES)


def _strings(nodes) -> list[str]:
    return [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def dtype_tables(source: str) -> list[int]:
    """Line numbers of the dtype tables written out in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys, values = _strings(node.keys), _strings(node.values)
            if sum(k in SPELLINGS for k in keys) >= 2 or sum(v in SPELLINGS for v in values) >= 2:
                found.append(node.lineno)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = set(_strings(node.elts))
            if set(dtypes.FLOAT_DTYPES) <= names or set(dtypes.INT_DTYPES) <= names:
                found.append(node.lineno)
    return found


def test_one_dtype_table():
    tables = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "ops" / "dtypes.py"
        for line in dtype_tables(path.read_text())
    ]
    assert not tables, f"dtype tables outside mlirfuse/ops/dtypes.py (derive them from it): {tables}"


def test_the_check_sees_a_second_table():
    assert dtype_tables('X = {"float32": "tl.float32", "int64": "tl.int64"}') == [1]
    assert dtype_tables('X = {"float32": 32, "bfloat16": 16}') == [1]
    assert dtype_tables('FLOATS = ("float32", "float64", "float16", "bfloat16")') == [1]
    assert dtype_tables('GEMM = ("float32", "float16", "bfloat16")\nif d == "float32": pass') == []


@pytest.mark.parametrize("d", dtypes.TABLE, ids=lambda d: d.name)
def test_dtype_row_is_torch_mlirs_torchs_and_tritons(d):
    dtype = getattr(torch, d.name)
    assert TORCH_DTYPE_TO_MLIR_TYPE_ASM[dtype] == d.asm
    assert TORCH_DTYPE_TO_INT[dtype] == d.code
    assert dtypes.torch_dtypes()[d.code] is dtype
    assert d.triton.startswith("tl.") and isinstance(getattr(tl, d.triton[3:]), tl.dtype)
    assert d.kind == ("float" if dtype.is_floating_point else "bool" if dtype == torch.bool else "int")
    if d.kind == "float":
        assert float(d.max) == torch.finfo(dtype).max and d.bits == torch.finfo(dtype).bits
    else:
        assert d.max is None and d.bits == (1 if dtype == torch.bool else torch.iinfo(dtype).bits)


def test_registry_holds_each_family_once():
    from mlirfuse.ops import registry

    assert sorted(f.name for f in registry.FAMILIES) == sorted(FAMILIES)
    assert all((PACKAGE.parent / f.lowering).exists() and f.limits for f in registry.FAMILIES)


def test_an_op_starts_groups_for_one_family_only():
    from mlirfuse.ops import registry

    seen: dict[str, str] = {}
    for family in registry.FAMILIES:
        assert family.fused <= family.ops and family.pure <= family.ops, family.name
        for name in family.fused:
            assert name not in seen, f"{name} starts groups for {seen[name]} and {family.name}"
            seen[name] = family.name
    assert set(seen) == set(registry.FUSED)


def test_native_ops_read_the_registry():
    from mlirfuse.frontend.decompositions import native_ops
    from mlirfuse.ops import registry

    assert registry.NATIVE_OPS <= native_ops()
    assert "torch.aten.scaled_dot_product_attention" in registry.NATIVE_OPS and "torch.aten.mm" in registry.NATIVE_OPS
