"""Ahead-of-time kernel compiles, in a worker subprocess of `mlirfuse.runtime.aot`.

Imports Triton only (no torch, no torch-mlir). `--serve` keeps one worker
for many kernels: each request is a JSON line on stdin (the arguments of
`compile_file`), each answer a line `mlirfuse-aot {"error": null | "..."}`
on stdout (other lines there are Triton's). One kernel:

    python -m mlirfuse.runtime.aot_worker KERNEL.py NAME SIGNATURE_JSON ARCH OUT.cubin OPTIONS_JSON
    python -m mlirfuse.runtime.aot_worker --serve
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from mlirfuse.runtime.triton_mode import triton_mode

BLOCK = 1024


def compile_file(path: str, name: str, sig_json: str, arch: str, out: str, constants_json: str = "",
                 attrs_json: str = "") -> None:
    """Compile kernel `name` of the file at `path` for sm_<arch>; write the cubin to `out`, its resources to
    `out`.json and Triton's metadata of it to `out`.triton.json. `attrs_json`: [[parameter index, Triton
    attributes], ...] (a specialization's `tt.divisibility`; runtime/binaries.py)."""
    import contextlib
    import io
    import re

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    # TRITON_INTERPRET may be set in the environment the worker inherits.
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
        log = io.StringIO()
        with contextlib.redirect_stdout(log):
            compiled = triton.compile(source, target=target, options=options)
    Path(out).write_bytes(compiled.asm["cubin"])
    # What loading the cubin takes (triton.compiler.CompiledKernel reads it), as Triton's cache holds it.
    metadata = next(p for k, p in compiled.metadata_group.items() if k.endswith(".json"))
    Path(f"{out}.triton.json").write_text(Path(metadata).read_text())
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log.getvalue())
    Path(f"{out}.json").write_text(json.dumps({
        "shared": compiled.metadata.shared,
        "spill_stores": int(spills.group(1)) if spills else None, "spill_loads": int(spills.group(2)) if spills else None,
    }))


ANSWER = "mlirfuse-aot "


def serve() -> None:
    """Compile the kernels of requests read from stdin, one JSON list of `compile_file`'s arguments per line."""
    import traceback

    for line in sys.stdin:
        try:
            compile_file(*json.loads(line))
            error = None
        except Exception:  # the caller reports it as this kernel's compile failure
            error = traceback.format_exc()[-4000:]
        print(ANSWER + json.dumps({"error": error}), flush=True)


if __name__ == "__main__":
    serve() if sys.argv[1:] == ["--serve"] else compile_file(*sys.argv[1:8])
