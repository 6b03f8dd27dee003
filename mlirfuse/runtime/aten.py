"""Calling ATen: torch-mlir op names to `torch.ops` overloads, with arguments converted.

Shared by the program (unfused ops, extern groups) and the launcher (the
view chains of kernel inputs, applied as ATen view functions).
"""

from __future__ import annotations

import importlib
from typing import Callable

import torch
from torch_mlir.extras.fx_importer import TORCH_LAYOUT_TO_INT, TORCH_MEMORY_FORMAT_TO_INT

from mlirfuse.errors import UnsupportedModelError
from mlirfuse.ops.dtypes import torch_dtypes

# torch-mlir passes dtypes, layouts and memory formats as ints; its importer's tables, inverted
# (dtypes: mlirfuse.ops.dtypes.torch_dtypes).
_DTYPES = torch_dtypes()
_LAYOUTS = {code: layout for layout, code in TORCH_LAYOUT_TO_INT.items()}
_MEMORY_FORMATS = {code: fmt for fmt, code in TORCH_MEMORY_FORMAT_TO_INT.items()}


# Operator namespaces torch registers only when a Python module is imported.
_REGISTERED_BY = {"quantized_decomposed": "torch.ao.quantization.fx._decomposed"}


def aten_overload(op_name: str):
    """`torch.aten.add.Tensor` -> torch.ops.aten.add.Tensor; no overload -> .default."""
    parts = op_name.split(".")
    if len(parts) < 3:
        raise UnsupportedModelError(f"no ATen operator for '{op_name}'")
    namespace, name = parts[1], parts[2]
    overload = parts[3] if len(parts) > 3 else "default"
    if namespace in _REGISTERED_BY:
        importlib.import_module(_REGISTERED_BY[namespace])
    try:
        return getattr(getattr(getattr(torch.ops, namespace), name), overload)
    except (AttributeError, RuntimeError):
        raise UnsupportedModelError(f"no ATen operator for '{op_name}'") from None


def view_or_reshape(t: torch.Tensor, size) -> torch.Tensor:
    """aten.view, or a copying reshape where `t`'s strides allow no view.

    torch.export records `reshape` as `view` when the example input is
    contiguous; a later call with a non-contiguous input (same shape, so the
    guards pass) must still get eager's result.
    """
    try:
        return torch.ops.aten.view.default(t, size)
    except RuntimeError:
        return torch.ops.aten.reshape.default(t, size)


# ATen view ops whose eager source may have been a reshape: see view_or_reshape.
RESHAPING = {"torch.aten.view": view_or_reshape, "torch.aten._unsafe_view": view_or_reshape}


def split_by_schema(schema, values) -> tuple[list, dict]:
    """`values`, one per argument of `schema`, as positional args and (for keyword-only arguments) kwargs."""
    args, kwargs = [], {}
    for schema_arg, value in zip(schema.arguments, values):
        if schema_arg.kwarg_only:
            kwargs[schema_arg.name] = value
        else:
            args.append(value)
    return args, kwargs


def aten_call(op_name: str, values: tuple) -> tuple[Callable, list, dict]:
    """(function, positional args, keyword args) calling `op_name` with `values`, one per schema argument."""
    overload = aten_overload(op_name)
    return RESHAPING.get(op_name, overload), *split_by_schema(overload._schema, values)


def convert(type_name: str, value):
    """torch-mlir passes dtypes, layouts and memory formats as ints; ATen wants enums.

    `type_name` is the schema argument's `real_type` (its `type` says only `int`).
    """
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    if "ScalarType" in type_name:
        return _DTYPES[value]
    if "Layout" in type_name:
        return _LAYOUTS[value]
    if "MemoryFormat" in type_name:
        return _MEMORY_FORMATS[value]
    return value
