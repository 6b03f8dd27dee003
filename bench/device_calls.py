"""Device calls per forward, counted the same way for mlirfuse and TorchInductor.

mlirfuse: `cm.stats` (Triton launches; ATen ops left unfused, of which views).
Inductor (CPU): the output code of every graph it compiles.

Inductor's output code defines each generated kernel once at module level,
as `cpp_fused_<ops>_<n> = async_compile.cpp_pybinding([...], r'''...`
(older releases: `async_compile.cpp(`; GPU: `async_compile.triton(`), and
`call()` invokes it once per launch. We count those definitions (distinct
kernels) and the calls of them in `call()` (launches: an unrolled loop runs
one kernel once per step); device calls are launches + extern calls. Extern
calls are the code lines of `call()` that call a library kernel,
`extern_kernels.<mm|addmm|bmm|...>(`, or fall back to an ATen op,
`aten.<op>(` / `torch.ops.aten.<op>(`, or to any other library's op,
`torch.ops.<namespace>.<op>(` (a model's custom op, e.g. the MoE
`transformers.grouped_mm_fallback`); comments (which also list ATen op
names) are stripped first, a name inside a string (`assert_size_stride`'s
message) is not followed by `(`, and buffer allocation helpers are not
counted.

Views: Inductor turns them (view, transpose, split ...) into
`reinterpret_tensor` calls, counted neither as kernels nor as extern calls.
mlirfuse reads views of kernel inputs inside the kernel (index arithmetic)
and folds the views feeding an extern call into that call's operands
(`fusion-extern-operands`, "operand views"); views it leaves as ATen ops
are `unfused_views`, excluded from its device calls.
"""

from __future__ import annotations

import re
import sys
import time

import torch
from torch import nn

import mlirfuse

_KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(?:cpp_pybinding|cpp|triton)\(", re.MULTILINE)
_EXTERN_CALL = re.compile(r"(?:\bextern_kernels|\btorch\.ops\.\w+|(?<![\w.])aten)\.[\w.]+\(")


def flat(out) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    return [t for o in out for t in flat(o)] if isinstance(out, (tuple, list)) else []


def max_error(actual, expected) -> float:
    return max((a.float() - e.float()).abs().max().item() for a, e in zip(flat(actual), flat(expected)))


def measure_mlirfuse(model: nn.Module, inputs: tuple, kwargs: dict | None = None, **options) -> dict:
    """cm.stats, `device_calls` (launches + non-view ATen ops) and the max abs error vs eager."""
    kwargs = kwargs or {}
    with torch.no_grad():
        expected = model(*inputs, **kwargs)
    cm = mlirfuse.compile(model, inputs, kwargs, **options)
    stats = dict(cm.stats)
    stats["aten_calls"] = stats["unfused_ops"] - stats["unfused_views"]
    stats["device_calls"] = stats["launches"] + stats["aten_calls"]
    stats["err"] = max_error(cm(*inputs, **kwargs), expected)
    return stats


def count_inductor(code: str) -> tuple[int, int]:
    """(generated kernels, extern/ATen calls) in one module of Inductor output code."""
    kernels = len(_KERNEL_DEF.findall(code))
    _, _, call_body = code.partition("def call(")
    call_body = call_body.split("\ndef ", 1)[0]  # up to the next top-level function
    lines = (line.split("#", 1)[0] for line in call_body.splitlines())
    externs = sum(len(_EXTERN_CALL.findall(line)) for line in lines)
    return kernels, externs


def count_inductor_launches(code: str) -> int:
    """Calls of the module's generated kernels inside `call()` (a kernel defined once may run many times)."""
    names = _KERNEL_DEF.findall(code)
    if not names:
        return 0
    _, _, body = code.partition("def call(")
    body = body.split("\ndef ", 1)[0]
    call = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")(?:\.run)?\(")
    return sum(len(call.findall(line.split("#", 1)[0])) for line in body.splitlines())


def measure_inductor(model: nn.Module, inputs: tuple, kwargs: dict | None = None) -> dict:
    """Inductor's generated kernels, their launches, extern calls, `device_calls` (launches + externs), max abs
    error vs eager, and `graphs`, the output code modules (more than one: graph breaks, whose eager ops between
    the graphs are not counted)."""
    from torch._inductor.utils import run_and_get_code

    kwargs = kwargs or {}
    torch._dynamo.reset()
    # A cache hit could skip code generation; compile every time so the code is seen.
    with torch.no_grad(), torch._inductor.config.patch(fx_graph_cache=False):
        expected = model(*inputs, **kwargs)
        compiled = torch.compile(model, backend="inductor")
        out, codes = run_and_get_code(compiled, *inputs, **kwargs)
    counts = [count_inductor(code) for code in codes]
    kernels, externs = sum(k for k, _ in counts), sum(e for _, e in counts)
    launches = sum(count_inductor_launches(code) for code in codes)
    return {
        "kernels": kernels, "launches": launches, "externs": externs, "device_calls": launches + externs,
        "err": max_error(out, expected), "graphs": len(codes),
    }


def measure_both(name: str, model: nn.Module, inputs: tuple, kwargs: dict | None = None, **options) -> tuple[dict, dict]:
    """(measure_mlirfuse, measure_inductor) of one model in this process; their seconds go to stderr."""
    start = time.perf_counter()
    m = measure_mlirfuse(model, inputs, kwargs, **options)
    mid = time.perf_counter()
    i = measure_inductor(model, inputs, kwargs)
    print(f"{name}: mlirfuse {mid - start:.1f}s, inductor {time.perf_counter() - mid:.1f}s", file=sys.stderr)
    return m, i


# The device-call table of bench/launches.py and bench/zoo.py; the last-but-two column is the bar of
# issues 10 and 22, mlirfuse's total strictly below Inductor's.
COLUMNS = (
    "model",
    "mlirfuse launches",
    "mlirfuse ATen calls",
    "mlirfuse total",
    "inductor kernels",
    "inductor launches",
    "inductor extern calls",
    "inductor total",
    "mlirfuse < inductor",
    "mlirfuse max err",
    "inductor max err",
)


def row(name: str, m: dict, i: dict) -> list[str]:
    """One model's COLUMNS from measure_mlirfuse's `m` and measure_inductor's `i`."""
    return [
        name, str(m["launches"]), str(m["aten_calls"]), str(m["device_calls"]),
        str(i["kernels"]), str(i["launches"]), str(i["externs"]), str(i["device_calls"]),
        "yes" if m["device_calls"] < i["device_calls"] else "no",
        f"{m['err']:.2e}", f"{i['err']:.2e}",
    ]
