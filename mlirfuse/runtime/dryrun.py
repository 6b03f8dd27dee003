"""A program's launches as a GPU would make them, without a GPU: what a package's cubins are compiled for.

`launch_specializations` runs a program once on meta tensors laid out as
the example's (a meta tensor's address is its offset: a fresh CUDA
allocation is aligned) with every launch recorded, not run
(`kernels.recording`: the blocks, grid and options of a launch on an
sm_<arch> GPU), and turns each kernel's most frequent launch into what
`triton.compile` takes for it (`binaries.compile_args`).
"""

from __future__ import annotations

import json

import torch

from mlirfuse.runtime import binaries
from mlirfuse.runtime.kernels import recording


def meta_inputs(input_meta: list) -> list:
    """Flat user inputs as meta tensors from their guards ((shape, dtype, device) per tensor; values as they are)."""
    return [torch.empty(m[0], dtype=m[1], device="meta")
            if isinstance(m, tuple) and len(m) == 3 and isinstance(m[1], torch.dtype) else m for m in input_meta]


def _meta(t):
    """A meta tensor laid out as `t` (shape, strides, offset: the alignment a launch's specialization reads)."""
    if not isinstance(t, torch.Tensor):
        return t
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")


def launch_specializations(program, kernels: dict, arguments: list, arch: int) -> tuple[dict, str | None]:
    """Kernel name -> `binaries.compile_args` of its most frequent launch when `program` runs on `arguments`
    (made meta tensors here) on an sm_<arch> GPU, with "specialization", "launch_kwargs", "launches" (of that
    specialization) and "recorded" (all its launches); and why the run stopped early (None: it ran to the end;
    an op without a meta implementation stops it, and the kernels after it are compiled for any arguments).
    Kernels over `?` sizes (`kernel.dynamic`) assume no divisibility of their sizes and strides."""
    if not binaries.available():
        return {}, "this Triton has no native_specialize_impl"
    stopped = None
    with recording(arch) as launches, torch.no_grad():
        try:
            program.execute([_meta(a) for a in arguments])
        except Exception as e:  # noqa: BLE001  (kernels launched before it are specialized; the others not)
            stopped = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
    counts: dict[str, dict[str, list]] = {}
    for name, args, kwargs in launches:
        spec = binaries.specialization(args)
        entry = counts.setdefault(name, {}).setdefault(json.dumps([spec, kwargs], sort_keys=True), [0, spec, kwargs])
        entry[0] += 1
    chosen = {}
    for name, variants in counts.items():
        kernel = kernels.get(name)
        if kernel is None:
            continue
        count, spec, kwargs = max(variants.values(), key=lambda v: v[0])
        if kernel.dynamic is not None:  # `?` sizes: a size or stride divisible by 16 at the example need not be later
            spec = [[kind, "" if kind in ("i32", "i64") and attr == "D" else attr] for kind, attr in spec]
        params = [p.name for p in kernel.params]
        if len(params) != len(spec):
            continue
        chosen[name] = binaries.compile_args(params, spec, kwargs) | {
            "specialization": spec, "launch_kwargs": kwargs, "launches": count,
            "recorded": sum(v[0] for v in variants.values()),
        }
    return chosen, stopped


__all__ = ["launch_specializations", "meta_inputs"]
