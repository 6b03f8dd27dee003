"""Ahead-of-time compilation of generated kernels for real GPUs, no GPU needed.

`triton.compile(ASTSource(...), target=GPUTarget("cuda", arch, 32))` turns a
kernel into a cubin on any machine. Kernels compile in long-lived worker
subprocesses (`python -m mlirfuse.runtime.aot_worker --serve`, a pool kept
for the process's life: one start per worker, not per kernel), so several
compile at once and a compiler crash cannot take the caller down (that
worker is replaced). The worker imports Triton only, not torch.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from mlirfuse.errors import MlirfuseError
from mlirfuse.lowering.emitter import Role
from mlirfuse.lowering.kernel_kinds import kernel_kind
from mlirfuse.lowering.triton import TritonKernel
from mlirfuse.ops.dtypes import POINTER_TYPES
from mlirfuse.runtime.aot_worker import ANSWER
from mlirfuse.runtime.kernels import write_source


@dataclass(frozen=True)
class CompiledKernel:
    name: str
    arch: int
    cubin: bytes
    shared: int = 0  # bytes of shared memory per block, from the compiled kernel's metadata
    spill_stores: int | None = None  # bytes, from ptxas's report at compile time (None: no report)
    spill_loads: int | None = None
    seconds: float = 0.0  # wall seconds of its compile in the worker, request to answer
    metadata: str = ""  # Triton's metadata of the compiled kernel (JSON), what loading the cubin takes

    def resources(self) -> dict[str, int]:
        """Registers, stack frame, shared and local memory, as `cuobjdump -res-usage` reads them from the cubin, and
        ptxas's spill stores and loads ("spill_stores", "spill_loads"; the stack frame where there is no report)."""
        usage = resource_usage(self.cubin)
        stores = usage["stack"] if self.spill_stores is None else self.spill_stores
        loads = usage["stack"] if self.spill_loads is None else self.spill_loads
        return usage | {"spill_stores": stores, "spill_loads": loads}

    def spilled(self) -> bool:
        return is_spill(self.resources())


def is_spill(usage: dict) -> bool:
    """`CompiledKernel.resources()` say ptxas spilled registers (a stack frame alone is no spill: local arrays
    live there too, e.g. libdevice sinf's for large arguments)."""
    return bool(usage["spill_stores"] or usage["spill_loads"] or usage["local"])


def signature(kernel: TritonKernel) -> dict[str, str]:
    """Triton's signature for the kernel's parameters, in order."""
    numel = 1
    for d in kernel.shape:
        numel *= 2**31 if d is None else d  # a `?` size may be any size
    index = "i64" if numel >= 2**31 else "i32"
    sig = {}
    for param in kernel.params:
        if param.role in (Role.LOAD, Role.OUTPUT):
            sig[param.name] = POINTER_TYPES[kernel.pointer_dtype(param)]
        elif param.role is Role.SCALAR:
            sig[param.name] = "fp32"
        else:  # sizes, numels, strides
            sig[param.name] = index
    for name in launch_constants(kernel, 90)[0]:
        sig[name] = "constexpr"
    return sig


def launch_constants(kernel: TritonKernel, arch: int) -> tuple[dict, dict]:
    """(constexpr values, compile options) a kernel is compiled with for sm_<arch>."""
    return kernel_kind(kernel.kind).aot_constants(kernel, arch)


def resource_usage(cubin: bytes) -> dict[str, int]:
    """`cuobjdump -res-usage` of a one-kernel cubin: {"reg", "stack", "shared", "local"} (bytes, registers).

    ptxas spills registers to the stack frame, so `stack == 0` means no
    spill stores or loads. cuobjdump ships with Triton
    (triton/backends/nvidia/bin); Triton's metadata counts spills only once
    a GPU driver loads the kernel.
    """
    import triton

    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        text = subprocess.run([str(tool), "-res-usage", str(path)], capture_output=True, text=True, check=True).stdout
    return {key.lower(): int(value) for key, value in re.findall(r"\b(REG|STACK|SHARED|LOCAL):(\d+)", text)}


def compile_kernels(
    kernels: list[TritonKernel], arch: int = 90, jobs: int | None = None, on_done=None, specialized: dict | None = None
) -> list[CompiledKernel]:
    """Compile each kernel to a cubin for sm_<arch>, in parallel worker processes.

    `on_done(count, total, name)` is called as each kernel is done (progress; from the worker threads).
    `specialized`: kernel name -> `binaries.compile_args` of the launch it is compiled for (its signature,
    constants, options and divisibility); other kernels are compiled for any arguments.
    """
    finished = itertools.count()  # next() on it is atomic: the threads number their kernels 0, 1, ...

    def one(kernel: TritonKernel) -> CompiledKernel:
        compiled = compile_one(kernel)
        if on_done is not None:
            on_done(next(finished), len(kernels), kernel.name)
        return compiled

    def compile_one(kernel: TritonKernel) -> CompiledKernel:
        path = write_source(kernel)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "kernel.cubin"
            given = (specialized or {}).get(kernel.name)
            if given is None:
                constexprs, options = launch_constants(kernel, arch)
                request = [str(path), kernel.name, json.dumps(signature(kernel)), str(arch), str(out),
                           json.dumps([constexprs, options])]
            else:
                request = [str(path), kernel.name, json.dumps(given["signature"]), str(arch), str(out),
                           json.dumps([given["constexprs"], given["options"]]), json.dumps(given["attrs"])]
            start = time.perf_counter()
            error = _POOL.compile(request)
            if error is not None:
                raise MlirfuseError(f"Triton could not compile @{kernel.name} for sm_{arch}:\n{error}")
            meta = json.loads(Path(f"{out}.json").read_text())
            return CompiledKernel(kernel.name, arch, out.read_bytes(), meta["shared"], meta.get("spill_stores"),
                                  meta.get("spill_loads"), time.perf_counter() - start,
                                  Path(f"{out}.triton.json").read_text())

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        return list(pool.map(one, kernels))


class _Worker:
    """One `aot_worker --serve` subprocess: a request line in, an answer line out."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mlirfuse.runtime.aot_worker", "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
        )
        # Drain stderr so a chatty compile never blocks the worker on a full pipe; keep its tail for a crash report.
        self.stderr: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self.stderr = (self.stderr + [line])[-200:]

    def compile(self, request: list) -> str | None:
        """None once compiled, else the error; raises OSError/EOFError when the worker died."""
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith(ANSWER):
                return json.loads(line[len(ANSWER):])["error"]
        raise EOFError("".join(self.stderr)[-4000:] or f"the worker exited with {self.proc.wait()}")

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class _Pool:
    """Idle workers, started on demand and kept until the process exits."""

    def __init__(self):
        self.idle: queue.SimpleQueue = queue.SimpleQueue()
        self.all: list[_Worker] = []
        self.lock = threading.Lock()
        atexit.register(self.close)

    def compile(self, request: list) -> str | None:
        try:
            worker = self.idle.get_nowait()
        except queue.Empty:
            worker = _Worker()
            with self.lock:
                self.all.append(worker)
        try:
            error = worker.compile(request)
        except (OSError, EOFError, ValueError) as e:  # the worker crashed (a compiler abort): replace it
            worker.close()
            return f"the compile worker died: {e}"
        self.idle.put(worker)
        return error

    def close(self):
        with self.lock:
            for worker in self.all:
                worker.close()
            self.all.clear()


_POOL = _Pool()
