"""Helpers shared by the test modules: wrap a function as a module, compile, compare."""

from __future__ import annotations

import re

import torch

import mlirfuse


class Lambda(torch.nn.Module):
    """A module whose forward is `fn`: the smallest wrapper torch.export accepts."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


_TORCH_OP = re.compile(r"\btorch\.(?:aten|prims)\.[\w.]+|\btorch\.operator \"[\w.]+\"")


def split_mlir(text: str) -> tuple[str, str]:
    """(kernel bodies, forward function) of a compiled module's final IR."""
    kernels, _, forward = text.partition("func.func @forward")
    return kernels, forward


def unfused_ops(cm) -> list[str]:
    """The torch ops left in `forward`, i.e. those that run through ATen."""
    return _TORCH_OP.findall(split_mlir(cm.mlir)[1])


def kernel_ops(cm) -> list[str]:
    """The torch ops inside fusion.kernel bodies, i.e. those that run in Triton."""
    return _TORCH_OP.findall(split_mlir(cm.mlir)[0])


def assert_fully_fused(cm, op: str | None = None) -> None:
    """Every computing op became Triton: no ATen fallback, at least one launch, `op` in a kernel."""
    assert cm.stats["unfused_ops"] == 0, f"unfused ops: {unfused_ops(cm)}"
    assert cm.stats["launches"] >= 1, cm.stats
    if op is not None:
        # `op` may omit the overload: "torch.aten.add" matches "torch.aten.add.Scalar".
        found = kernel_ops(cm)
        assert any(k == op or k.startswith(op + ".") for k in found), f"{op} not in kernels: {found}"


def compile_and_compare(fn, inputs: tuple, *, op: str | None = None, fused: bool = True, **tolerances):
    """Compile `fn` as a module, run it, and compare with eager; returns the compiled module."""
    model = Lambda(fn)
    expected = model(*inputs)
    cm = mlirfuse.compile(model, inputs)
    actual = cm(*inputs)
    torch.testing.assert_close(actual, expected, **tolerances)
    if fused:
        assert_fully_fused(cm, op)
    return cm
