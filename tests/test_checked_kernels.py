"""MLIRFUSE_CHECK_BOUNDS=1: a kernel that leaves its tensors fails its own launch.

The broken kernels are generated ones with one mask made off by one,
launched through the runtime's own Launcher; the same kernels unbroken pass.
"""

import contextlib
import dataclasses

import pytest
import torch

import mlirfuse
from mlirfuse.runtime import checks
from mlirfuse.runtime.kernels import Launcher
from helpers import Lambda

MASK = "mask=xmask)"
OFF_BY_ONE = "mask=xindex < xnumel + 1)"


@pytest.fixture(autouse=True)
def _checked(monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "1")


def _kernel():
    """A pointwise kernel over 15 elements: its block has 16 lanes, one of them masked off."""
    a, b = torch.randn(5, 3), torch.randn(5, 3)
    cm = mlirfuse.compile(Lambda(lambda x, y: x * y + 1), (a, b))
    (kernel,) = cm.kernels.values()
    return kernel, (a, b)


def _break(kernel, line_start: str):
    lines = kernel.source.splitlines()
    i = next(i for i, line in enumerate(lines) if line.strip().startswith(line_start))
    assert MASK in lines[i]
    lines[i] = lines[i].replace(MASK, OFF_BY_ONE)
    return dataclasses.replace(kernel, source="\n".join(lines) + "\n")


def test_correct_kernel_passes():
    kernel, (a, b) = _kernel()
    (out,) = Launcher(kernel)(a, b)
    torch.testing.assert_close(out, a * b + 1)


def test_store_past_the_end_is_refused():
    kernel, inputs = _kernel()
    with pytest.raises(mlirfuse.KernelBoundsError, match=rf"@{kernel.name}: 1 masked-in lanes store to outside out0.*element 15"):
        Launcher(_break(kernel, "tl.store"))(*inputs)


def test_load_past_the_end_is_refused():
    kernel, inputs = _kernel()
    with pytest.raises(mlirfuse.KernelBoundsError, match=rf"@{kernel.name}: 1 masked-in lanes load from outside in0, in1"):
        Launcher(_break(kernel, "tmp0 = tl.load"))(*inputs)


def test_guard_region_catches_the_store(monkeypatch):
    """The guard check alone (what a GPU launch has) also sees the stray store."""
    monkeypatch.setattr(checks, "checked_addresses", lambda *a: contextlib.nullcontext())
    kernel, inputs = _kernel()
    with pytest.raises(mlirfuse.KernelBoundsError, match=rf"@{kernel.name} wrote outside its output out0: \d+ guard bytes after"):
        Launcher(_break(kernel, "tl.store"))(*inputs)


def test_checked_model_matches_eager():
    """Reductions, views and concat outputs run clean under the checks."""
    x, w = torch.randn(6, 40), torch.randn(40)
    fn = lambda a, b: torch.cat([torch.softmax(a * b, -1), a.t().sum(0, keepdim=True).t()], 1)  # noqa: E731
    cm = mlirfuse.compile(Lambda(fn), (x, w))
    torch.testing.assert_close(cm(x, w), fn(x, w))
