"""Ahead-of-time compilation of generated kernels for real GPUs, no GPU needed.

`triton.compile(ASTSource(...), target=GPUTarget("cuda", arch, 32))` turns a
kernel into a cubin on any machine. Kernels compile in long-lived worker
subprocesses (`python -m mlirfuse.runtime.aot_worker --serve`, a pool kept
for the process's life: one start per worker, not per kernel), so several
compile at once and a compiler crash cannot take the caller down (that
worker is replaced). The worker imports Triton only, not torch, and warms
up as soon as it starts; `start_workers()` starts the pool early (as
`mlirfuse.compile(..., aot_targets=...)` begins to export), so its start-up
overlaps the caller's own work.

`AotCompiles` takes kernels as they come: the most expensive waiting
kernel is compiled first (templates before reductions before pointwise
kernels), and kernels equal but for their name (same source, signature,
constants, options and target) are compiled once, the others sharing its
cubin (`CompiledKernel.symbol` names its function).
"""

from __future__ import annotations

import atexit
import heapq
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
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path

from mlirfuse.dialect.kinds import REDUCTION_KINDS, TEMPLATE_KINDS
from mlirfuse.errors import MlirfuseError
from mlirfuse.lowering.emitter import Role
from mlirfuse.lowering.kernel_kinds import kernel_kind
from mlirfuse.lowering.triton import TritonKernel
from mlirfuse.ops.dtypes import POINTER_TYPES
from mlirfuse.runtime.aot_worker import ANSWER, READY
from mlirfuse.runtime.cache import PLACEHOLDER
from mlirfuse.runtime.kernels import write_source


@dataclass(frozen=True)
class CompiledKernel:
    name: str
    arch: int
    cubin: bytes
    shared: int = 0  # bytes of shared memory per block, from the compiled kernel's metadata
    spill_stores: int | None = None  # bytes, from ptxas's report at compile time (None: no report)
    spill_loads: int | None = None
    seconds: float = 0.0  # wall seconds of its compile in the worker, request to answer (0: it shares `symbol`'s)
    symbol: str | None = None  # the cubin's kernel function where it is another's: equal sources but the name
    stages: tuple[tuple[str, float], ...] = ()  # wall seconds per stage in the worker (aot_worker.compile_file)
    waited: float = 0.0  # seconds from its submission until a worker took it
    metadata: str = ""  # Triton's metadata of the compiled kernel (JSON), what loading the cubin takes

    @property
    def entry(self) -> str:
        """The name of the cubin's kernel function."""
        return self.symbol or self.name

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


def parse_target(target: str) -> int:
    """The arch of a target "sm_<arch>" (sm_80, sm_90); ValueError for anything else."""
    if not (isinstance(target, str) and target.startswith("sm_") and target[3:].isdigit()):
        raise ValueError(f"a target is sm_<arch> (sm_80, sm_90), got {target!r}")
    return int(target[3:])


def compile_key(kernel: TritonKernel, arch: int, specialized: dict | None = None) -> tuple:
    """What a kernel's cubin depends on: its source with its name taken out, its signature, constants, compile
    options (`specialized`'s where given: `binaries.compile_args`) and the target. Kernels with equal keys
    compile to the same cubin but for the function's name."""
    source = kernel.renamed(PLACEHOLDER).source
    if specialized is not None:
        return (source, json.dumps(specialized["signature"]), json.dumps(
            [specialized["constexprs"], specialized["options"], specialized["attrs"]], sort_keys=True), arch)
    constexprs, options = launch_constants(kernel, arch)
    return source, json.dumps(signature(kernel)), json.dumps([constexprs, options], sort_keys=True), arch


def expected_cost(kernel: TritonKernel) -> tuple:
    """Orders compiles, most expensive first, so that no long one starts last. For sm_90 (bench/package.py,
    GPT2Model d=256) the GEMM and attention templates took 0.4-0.6 s each, the reductions 0.1-0.2 s, the
    pointwise kernels and scans 0.05-0.1 s; within a class a longer source took longer."""
    return kernel.kind in TEMPLATE_KINDS, kernel.kind in REDUCTION_KINDS, len(kernel.source)


def compile_kernels(
    kernels: list[TritonKernel], arch: int = 90, jobs: int | None = None, on_done=None, specialized: dict | None = None
) -> list[CompiledKernel]:
    """Compile each kernel to a cubin for sm_<arch>, in parallel worker processes.

    `on_done(count, total, name)` is called as each kernel is done (progress; from the worker threads).
    `specialized`: kernel name -> `binaries.compile_args` of the launch it is compiled for (its signature,
    constants, options and divisibility); other kernels are compiled for any arguments.
    """
    specialized = specialized or {}
    return AotCompiles(jobs).results([(kernel, arch, specialized.get(kernel.name)) for kernel in kernels], on_done)


class AotCompiles:
    """Kernels compiled ahead of time in the worker pool, `jobs` at once (default: one per CPU).

    `submit` a kernel as soon as it is lowered; the most expensive waiting one
    (`expected_cost`) goes to the next free worker; a kernel whose
    `compile_key` was submitted before shares that compile. A kernel is
    compiled for any arguments, or for the launch `specialized` describes
    (`binaries.compile_args`: what a package's cubin is compiled for).
    """

    def __init__(self, jobs: int | None = None):
        self.jobs = jobs or os.cpu_count() or 1
        self._lock = threading.RLock()
        self._waiting: list = []  # heap of (-cost, order, kernel, arch, future, submitted at)
        self._order = itertools.count()
        self._running = 0  # threads draining `_waiting`
        self._compiles: dict[tuple, Future] = {}  # compile_key -> the future of its one compile
        self._futures: dict[tuple, Future] = {}  # (name, compile_key) -> its CompiledKernel

    @property
    def started(self) -> int:
        """Compiles started: one per distinct `compile_key` submitted."""
        return len(self._compiles)

    def submit(self, kernel: TritonKernel, arch: int, specialized: dict | None = None) -> Future:
        """The future CompiledKernel of `kernel` for sm_<arch> (the same future for the same name and compile)."""
        with self._lock:
            key = compile_key(kernel, arch, specialized)
            if (kernel.name, key) in self._futures:
                return self._futures[kernel.name, key]
            shared = self._compiles.get(key)
            if shared is None:
                shared = self._compiles[key] = Future()
                cost = tuple(-c for c in expected_cost(kernel))  # a min-heap: the most expensive first
                heapq.heappush(self._waiting, (cost, next(self._order), kernel, arch, specialized, shared,
                                               time.perf_counter()))
                if self._running < self.jobs:
                    self._running += 1
                    threading.Thread(target=self._drain, daemon=True).start()
                future = shared
            else:
                future = Future()
                shared.add_done_callback(lambda done, name=kernel.name, mine=future: _share(done, name, mine))
            self._futures[kernel.name, key] = future
            return future

    def results(self, requests: list[tuple], on_done=None) -> list[CompiledKernel]:
        """The CompiledKernel of each (kernel, arch[, specialized]), in order; `on_done(count, total, name)` as
        each is done."""
        with self._lock:  # all of them waiting before any is taken: the most expensive go first
            futures = [self.submit(*request) for request in requests]
        if on_done is not None:
            finished = itertools.count()  # next() on it is atomic: the threads number their kernels 0, 1, ...
            for future, (kernel, *_) in zip(futures, requests):
                future.add_done_callback(lambda _, name=kernel.name: on_done(next(finished), len(requests), name))
        return [future.result() for future in futures]

    def _drain(self) -> None:
        """Compile waiting kernels, most expensive first, until none waits."""
        while True:
            with self._lock:
                if not self._waiting:
                    self._running -= 1
                    return
                _, _, kernel, arch, specialized, future, submitted = heapq.heappop(self._waiting)
            waited = time.perf_counter() - submitted
            try:
                future.set_result(replace(_compile_one(kernel, arch, specialized), waited=waited))
            except Exception as e:  # the caller's future raises it
                future.set_exception(e)


def _share(done: Future, name: str, mine: Future) -> None:
    """Complete `mine`, the future of kernel `name`, from `done`, the compile it shares."""
    if done.exception() is not None:
        mine.set_exception(done.exception())
        return
    compiled = done.result()
    mine.set_result(replace(compiled, name=name, symbol=compiled.entry, seconds=0.0, stages=()))


def _compile_one(kernel: TritonKernel, arch: int, specialized: dict | None = None) -> CompiledKernel:
    path = write_source(kernel)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "kernel.cubin"
        if specialized is None:
            constexprs, options = launch_constants(kernel, arch)
            request = [str(path), kernel.name, json.dumps(signature(kernel)), str(arch), str(out),
                       json.dumps([constexprs, options])]
        else:
            request = [str(path), kernel.name, json.dumps(specialized["signature"]), str(arch), str(out),
                       json.dumps([specialized["constexprs"], specialized["options"]]), json.dumps(specialized["attrs"])]
        start = time.perf_counter()
        error = _POOL.compile(request)
        if error is not None:
            raise MlirfuseError(f"Triton could not compile @{kernel.name} for sm_{arch}:\n{error}")
        meta = json.loads(Path(f"{out}.json").read_text())
        return CompiledKernel(kernel.name, arch, out.read_bytes(), meta["shared"], meta.get("spill_stores"),
                              meta.get("spill_loads"), time.perf_counter() - start,
                              stages=tuple(meta.get("stages", {}).items()),
                              metadata=Path(f"{out}.triton.json").read_text())


def start_workers(archs: tuple[int, ...] = (), count: int | None = None) -> None:
    """Start the pool's workers now (one per CPU by default), so they are warm for sm_<arch> of `archs` when
    kernels come."""
    _POOL.start(count or os.cpu_count() or 1, tuple(archs))


def pool_stats() -> list[dict]:
    """Per worker started: {"ready_after": seconds from its start until warm (None: not known yet), "warmup":
    seconds of its own warm-up (Triton's imports and cache key), "compiles": requests answered, "cpu": its CPU
    seconds, ptxas's included, as of its last answer}."""
    with _POOL.lock:
        return [{"ready_after": w.ready_after, "warmup": w.warmup, "compiles": w.compiles, "cpu": w.cpu}
                for w in _POOL.all]


_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding this mlirfuse package


class _Worker:
    """One `aot_worker --serve` subprocess: a request line in, an answer line out."""

    def __init__(self, archs: tuple[int, ...] = ()):
        self.started = time.time()
        # The worker runs this process's mlirfuse: `-m` would look in the working directory first (-P: not there),
        # and an installed mlirfuse may be another checkout.
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])]))
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "mlirfuse.runtime.aot_worker", "--serve", *map(str, archs)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1, env=env,
        )
        # From its ready line: seconds from its start until warm, and of its own warm-up; then requests answered.
        self.ready_after: float | None = None
        self.warmup: float | None = None
        self.compiles = 0
        self.cpu = 0.0  # its CPU seconds (ptxas's included) as of its last line
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
            if line.startswith(READY):
                ready = json.loads(line[len(READY):])
                self.ready_after, self.warmup, self.cpu = ready["at"] - self.started, ready["warmup"], ready["cpu"]
            elif line.startswith(ANSWER):
                answer = json.loads(line[len(ANSWER):])
                self.compiles += 1
                self.cpu = answer["cpu"]
                return answer["error"]
        raise EOFError("".join(self.stderr)[-4000:] or f"the worker exited with {self.proc.wait()}")

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class _Pool:
    """Idle workers, started on demand (or ahead of it: `start`) and kept until the process exits."""

    def __init__(self):
        self.idle: queue.SimpleQueue = queue.SimpleQueue()
        self.all: list[_Worker] = []
        self.lock = threading.Lock()
        atexit.register(self.close)

    def start(self, count: int, archs: tuple[int, ...]) -> None:
        """Start workers until `count` are alive; they warm up for sm_<arch> of `archs` while the caller goes on."""
        with self.lock:
            alive = sum(1 for worker in self.all if worker.proc.poll() is None)
            for _ in range(count - alive):
                worker = _Worker(archs)
                self.all.append(worker)
                self.idle.put(worker)

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
