"""Ahead-of-time kernel compiles, in a worker subprocess of `mlirfuse.runtime.aot`.

Imports Triton only (no torch, no torch-mlir, no numpy). `--serve` keeps one
worker for many kernels: it warms up first (`warm_up`, for the archs
following `--serve`, if any; a line
`mlirfuse-aot-ready {"warmup": s, "at": t, "cpu": s}` on stdout), then each
request is a JSON line on stdin (the arguments of `compile_file`), each
answer a line `mlirfuse-aot {"error": null | "...", "cpu": s}` on stdout
(other lines there are Triton's; "cpu": this process's CPU seconds so far,
ptxas's included). One kernel:

    python -m mlirfuse.runtime.aot_worker KERNEL.py NAME SIGNATURE_JSON ARCH OUT.cubin OPTIONS_JSON
    python -m mlirfuse.runtime.aot_worker --serve [ARCH ...]
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

from mlirfuse.runtime.triton_mode import triton_mode

BLOCK = 1024
ANSWER = "mlirfuse-aot "
READY = "mlirfuse-aot-ready "


def compile_file(path: str, name: str, sig_json: str, arch: str, out: str, constants_json: str = "",
                 attrs_json: str = "") -> None:
    """Compile kernel `name` of the file at `path` for sm_<arch>; write the cubin to `out`, its metadata to `out`.json
    (shared memory, ptxas's spills, and the wall seconds of each stage: "load" (the module), "ast" (options,
    Triton's cache key, Python AST to TTIR), then Triton's own stages "ttir", "ttgir", "llir", "ptx", "cubin"
    (ptxas)), and Triton's metadata of the kernel to `out`.triton.json (what loading the cubin takes).
    `attrs_json`: [[parameter index, Triton attributes], ...] (a specialization's `tt.divisibility`;
    runtime/binaries.py)."""
    import contextlib
    import io
    import re

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    stages = {}

    def listener(src, metadata, metadata_group, times, cache_hit):
        stages["ast"] = times.ir_initialization / 1e6
        stages.update((stage, us / 1e6) for stage, us in times.lowering_stages)

    start = time.perf_counter()
    # TRITON_INTERPRET may be set in the environment of a caller that runs this in-process.
    with triton_mode(interpret=False):
        spec = importlib.util.spec_from_file_location(f"mlirfuse_aot_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sig = json.loads(sig_json)
        if constants_json:
            constexprs, options = json.loads(constants_json)
        else:  # the pointwise / reduction defaults
            constexprs = {"XBLOCK": BLOCK} if "RBLOCK" not in sig else {"XBLOCK": 1, "RBLOCK": BLOCK}
            options = {"enable_fp_fusion": True}
        attrs = {(i,): value for i, value in json.loads(attrs_json)} if attrs_json else None
        source = ASTSource(fn=getattr(module, name), signature=sig, constexprs=constexprs, attrs=attrs)
        target = GPUTarget("cuda", int(arch), 32)
        # ptxas's own report (-v, which Triton passes): spill stores and loads apart from the stack frame, which
        # also holds local arrays (libdevice's sinf/cosf keep one for large arguments) that are no spill.
        triton.knobs.nvidia.dump_ptxas_log = True
        triton.knobs.compilation.always_compile = True  # a hit in Triton's own cache runs no ptxas: no report
        triton.knobs.compilation.listener = listener
        log = io.StringIO()
        stages["load"] = time.perf_counter() - start
        try:
            with contextlib.redirect_stdout(log):
                compiled = triton.compile(source, target=target, options=options)
        finally:
            triton.knobs.compilation.listener = None
    Path(out).write_bytes(compiled.asm["cubin"])
    # What loading the cubin takes (triton.compiler.CompiledKernel reads it), as Triton's cache holds it.
    metadata = next(p for k, p in compiled.metadata_group.items() if k.endswith(".json"))
    Path(f"{out}.triton.json").write_text(Path(metadata).read_text())
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log.getvalue())
    Path(f"{out}.json").write_text(json.dumps({
        "shared": compiled.metadata.shared,
        "spill_stores": int(spills.group(1)) if spills else None, "spill_loads": int(spills.group(2)) if spills else None,
        "stages": stages,
    }))


def warm_up(archs: list[int]) -> None:
    """Pay now what a worker's first compile would pay before its kernel: Triton's compiler modules, Triton's
    own cache key (`triton_key()`: a sha256 of libtriton and of every Triton source, ~0.3 s of CPU, once per
    process, computed even when nothing is cached), and per sm_<arch> the backend's key (`ptxas --version`,
    a hash of libdevice). A pool started as its caller exports and fuses the model
    (`mlirfuse.compile(..., aot_targets=...)`) so answers its first request as fast as its next."""
    import triton.compiler.code_generator  # noqa: F401  (imported by the first compile)
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend
    from triton.runtime.cache import triton_key

    triton_key()
    for arch in archs:
        backend = make_backend(GPUTarget("cuda", arch, 32))
        backend.hash()
        backend.parse_options({"enable_fp_fusion": True}).hash()  # as every kernel compiles (no default warning)


def serve(archs: list[int]) -> None:
    """Warm up for sm_<arch> of `archs`, then compile the kernels of requests read from stdin, one JSON list of
    `compile_file`'s arguments per line."""
    import traceback

    start = time.perf_counter()
    warm_up(archs)
    print(READY + json.dumps({"warmup": time.perf_counter() - start, "at": time.time(), "cpu": _cpu()}), flush=True)
    for line in sys.stdin:
        try:
            compile_file(*json.loads(line))
            error = None
        except Exception:  # the caller reports it as this kernel's compile failure
            error = traceback.format_exc()[-4000:]
        print(ANSWER + json.dumps({"error": error, "cpu": _cpu()}), flush=True)


def _cpu() -> float:
    """CPU seconds of this process and of the children it waited for (ptxas)."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    # This process only compiles: Triton imported in compiled mode has nothing to swap (`triton_mode`).
    os.environ.pop("TRITON_INTERPRET", None)
    serve([int(arch) for arch in sys.argv[2:]]) if sys.argv[1:2] == ["--serve"] else compile_file(*sys.argv[1:8])
