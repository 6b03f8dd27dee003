"""Reductions and scans against eager PyTorch on PyTorch's own OpInfo sample inputs.

Every entry of `mlirfuse.ops.reductions.OPINFO_SUPPORTED` and `mlirfuse.ops.scans.OPINFO_SUPPORTED` ("name" or
"name.variant") is looked up in `op_db`; each of its sample inputs is wrapped
in a module whose forward calls `opinfo.op` (tensors as forward inputs, the
rest captured as constants), compiled with mlirfuse, run, and compared with
eager under `torch.testing.assert_close`'s default tolerances for the dtype.
For bf16 the reference is eager run on the inputs upcast to f32 and rounded
back to bf16 (as Inductor's OpInfo tests do with `reference_in_float`):
mlirfuse reduces in f32 and rounds once, while eager's bf16 CPU kernels
round some intermediates depending on the axis (log_softmax over the last
dim rounds the sum and its log to bf16: up to 7% off its own f32 result),
so eager-in-bf16 is not a reference at bf16's default tolerances.
A few ops outside the list check that unfused reductions still run through
ATen and match.

One test per (op, dtype): it runs every chosen sample and fails once with a
summary naming each failing sample (shape, args, kwargs, error).
"""

from __future__ import annotations

import logging
import sys
import warnings

import pytest
import torch

import mlirfuse
from mlirfuse.ops import reductions, scans
from helpers import unfused_ops
from opinfo.harness import OpCall, describe_sample, opinfos, spread

# Reductions and scans mlirfuse fuses (scan kernels: lowering/scan.py).
OPINFO_SUPPORTED = reductions.OPINFO_SUPPORTED + scans.OPINFO_SUPPORTED
# Reductions mlirfuse does not fuse: they must still run (through ATen) and match.
UNSUPPORTED = ("logcumsumexp",)
# Reductions the frontend decomposes with Inductor's table (frontend/decompositions.py) into ops that fuse.
DECOMPOSED = ("norm",)
DTYPES = (torch.float32, torch.bfloat16)
# The interpreter makes every sample cost a compile (~0.2-1 s): take at most
# this many per (op, dtype), spread over the OpInfo's list so that every
# rank, dim/keepdim form and the large-value cases are reached.
MAX_SAMPLES = 6
MAX_NUMEL = 4096
EXPORT_FAILED = "torch.export could not trace"

# var/std samples with correction >= N are valid OpInfo cases; eager warns about them.
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")


OPINFOS = opinfos()


# Samples of a supported entry that exercise what is claimed; the others
# (training-mode batch norm: not decomposed, runs through ATen) are left out.
CLAIMED = {"nn.functional.batch_norm": lambda s: not s.kwargs.get("training", False)}


def _cases(names):
    return [
        pytest.param(name, dtype, id=f"{name}-{str(dtype).removeprefix('torch.')}")
        for name in names
        for dtype in DTYPES
    ]


def _as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def run_sample(opinfo, sample) -> mlirfuse.compiler.CompiledModule:
    """Compile one sample, run it, compare every output with eager; raises on a mismatch."""
    model = OpCall(opinfo.op, sample)
    low = (torch.float16, torch.bfloat16)
    upcast = [t.float() if t.dtype in low else t.clone() for t in model.inputs]
    expected = _as_tuple(model(*upcast))
    expected = tuple(
        e.to(a.dtype) if isinstance(e, torch.Tensor) and a.dtype in low and e.is_floating_point() else e
        for e, a in zip(expected, _as_tuple(model(*(t.clone() for t in model.inputs))))
    )
    cm = mlirfuse.compile(model, model.inputs)
    actual = _as_tuple(cm(*(t.clone() for t in model.inputs)))
    assert len(actual) == len(expected), f"{len(actual)} outputs, eager gives {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        torch.testing.assert_close(a, e, equal_nan=True, msg=lambda m, i=i: f"output {i}: {m}")
    return cm


def _first_lines(error: BaseException, limit: int = 400) -> str:
    text = f"{type(error).__name__}: {error}".strip().replace("\n\n", "\n")
    text = " | ".join(line.strip() for line in text.splitlines() if line.strip())
    return text if len(text) <= limit else text[:limit] + " ..."


def check_opinfo(name: str, dtype: torch.dtype, *, expect_unfused: bool = False) -> None:
    opinfo = OPINFOS[name]
    if dtype not in opinfo.supported_dtypes("cpu"):
        pytest.skip(f"{name} does not support {dtype} on cpu")
    samples = [
        (i, s)
        for i, s in enumerate(opinfo.sample_inputs("cpu", dtype, requires_grad=False))
        if (not isinstance(s.input, torch.Tensor) or s.input.numel() <= MAX_NUMEL) and CLAIMED.get(name, lambda _: True)(s)
    ]
    failures, skipped, ran = [], [], 0
    for index, sample in spread(samples, MAX_SAMPLES):
        where = describe_sample(index, sample)
        try:
            cm = run_sample(opinfo, sample)
        except mlirfuse.UnsupportedModelError as e:
            if not str(e).startswith(EXPORT_FAILED):
                failures.append(f"{where}\n    {_first_lines(e)}")
            else:
                skipped.append(f"{where}\n    {_first_lines(e, 200)}")
            continue
        except Exception as e:  # noqa: BLE001 - every other error is reported per sample
            failures.append(f"{where}\n    {_first_lines(e)}")
            continue
        ran += 1
        if expect_unfused and not any(opinfo.name in op for op in unfused_ops(cm)):
            failures.append(f"{where}\n    {opinfo.name} is not among the unfused ATen ops: {unfused_ops(cm)}")
    if failures:
        lines = [f"{name} [{dtype}]: {len(failures)} of {ran + len(failures) + len(skipped)} samples failed"]
        lines += failures
        if skipped:
            lines.append(f"skipped ({EXPORT_FAILED}):")
            lines += skipped
        pytest.fail("\n".join(lines), pytrace=False)
    if skipped and not ran:
        pytest.skip(f"{EXPORT_FAILED} any sample of {name}: " + skipped[0].splitlines()[1].strip())
    for s in skipped:
        warnings.warn(f"{name} [{dtype}] sample skipped, {s}", stacklevel=1)


def test_print_supported_ops(capsys):
    """The list resolves to op_db entries; it is shown on the terminal even without -s."""
    unknown = [name for name in OPINFO_SUPPORTED + UNSUPPORTED + DECOMPOSED if name not in OPINFOS]
    assert not unknown, f"not in op_db: {unknown}"
    assert not set(UNSUPPORTED) & set(OPINFO_SUPPORTED), "an 'unsupported' op is now in OPINFO_SUPPORTED"
    text = "mlirfuse.ops.reductions and .scans OPINFO_SUPPORTED: " + ", ".join(OPINFO_SUPPORTED)
    print(text)
    with capsys.disabled():
        sys.stderr.write(f"\n{text}\n")


@pytest.fixture(autouse=True)
def _quiet_export_trace(caplog):
    # torch.export logs every trace at DEBUG; captured, it would bury the failure summary.
    caplog.set_level(logging.WARNING, logger="torch.__trace")


@pytest.mark.parametrize("name, dtype", _cases(OPINFO_SUPPORTED + DECOMPOSED))
def test_supported_reduction_matches_eager(name, dtype):
    check_opinfo(name, dtype)


@pytest.mark.parametrize("name, dtype", _cases(UNSUPPORTED))
def test_unsupported_reduction_runs_unfused(name, dtype):
    check_opinfo(name, dtype, expect_unfused=True)
