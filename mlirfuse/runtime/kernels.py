"""The kernel cache and launcher.

Generated sources are written to real `.py` files (Triton reads kernel
source with `inspect`) under the cache directory, named by a hash of the
source and the Triton version, never by kernel names or paths. A file is
written to a temporary name and renamed into place, so an interrupted write
never leaves a corrupt entry.

CPU tensors run through Triton's interpreter, CUDA tensors through compiled
kernels, in the same process and whatever imported `triton` first: each
kernel is loaded once per mode and launched under `triton_mode`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch

from mlirfuse.dialect import GroupKind
from mlirfuse.lowering import emitter
from mlirfuse.lowering.attention import AttentionKernel
from mlirfuse.lowering.emitter import LaunchScalar, Role
from mlirfuse.lowering.kernel_kinds import Launch, kernel_kind
from mlirfuse.lowering.triton import TritonKernel
from mlirfuse.ops.views import RESHAPES
from mlirfuse.runtime import binaries, cache, checks
from mlirfuse.runtime.aten import aten_call
from mlirfuse.runtime.triton_mode import already_compiled, host_arguments_in_place, triton_mode

_LOADED: dict[tuple[str, bool], object] = {}
# How `load` found kernels: "loaded" (a source executed and jitted anew), "hits" (already loaded).
# A dynamic-shape kernel called with a new size is a hit: same source, no new kernel.
LOAD_STATS = {"loaded": 0, "hits": 0}

# While set (`recording`): (arch, list) — launches are appended to the list, as a launch on an sm_<arch> GPU would
# make them, instead of run.
_RECORDING: tuple[int, list] | None = None


@contextlib.contextmanager
def recording(arch: int):
    """Within: each launch appends (kernel name, positional arguments, keyword arguments) to the list yielded
    and runs nothing (its outputs are left empty), its blocks, grid and options those of a launch on an
    sm_<arch> GPU, whatever the tensors' device (a package's dry run on meta tensors, runtime/binaries.py)."""
    global _RECORDING
    saved, _RECORDING = _RECORDING, (arch, [])
    try:
        yield _RECORDING[1]
    finally:
        _RECORDING = saved


def cache_dir() -> Path:
    """Where kernel sources are written: the persistent cache's `kernels/` level (runtime/cache.py)."""
    return cache.level_dir(cache.SOURCES)


def source_key(source: str) -> str:
    import triton

    return hashlib.sha256(f"{triton.__version__}\n{source}".encode()).hexdigest()[:24]


def write_source(kernel: TritonKernel) -> Path:
    """The cached `.py` file holding `kernel`'s source, written if missing."""
    path = cache_dir() / f"{kernel.name}_{source_key(kernel.source)}.py"
    if not path.exists() or path.read_text() != kernel.source:
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(kernel.source)
        os.replace(tmp, path)
        cache.wrote(len(kernel.source.encode()), keep=path)  # the cache's size bound; this file is read next
    else:
        with contextlib.suppress(OSError):  # used: the least recently used files go first (a read-only cache stays usable)
            os.utime(path)
    return path


def load(kernel: TritonKernel, interpret: bool):
    """`kernel`'s function for one mode: an `InterpretedFunction` or a `JITFunction`.

    The cached file is executed once per mode, with `@triton.jit` deciding
    under that mode, so the kernel and its helpers agree on it.
    """
    path = write_source(kernel)
    key = (path.stem, interpret)
    LOAD_STATS["hits" if key in _LOADED else "loaded"] += 1
    if key not in _LOADED:
        spec = importlib.util.spec_from_file_location(f"mlirfuse_kernels.{path.stem}_{'interpret' if interpret else 'jit'}", path)
        module = importlib.util.module_from_spec(spec)
        with triton_mode(interpret):
            spec.loader.exec_module(module)
        _LOADED[key] = getattr(module, kernel.name)
    return _LOADED[key]


@functools.cache
def _arch(device) -> int:
    """The compute capability of a CUDA device as one number (90 for sm_90)."""
    major, minor = torch.cuda.get_device_capability(device)
    return 10 * major + minor


def _launch_device(inputs, declared: str | None):
    """Where a kernel runs: its first input not on the CPU (eager lets 0-d CPU tensors join GPU ops), else its first input's."""
    for t in inputs:
        if t.device.type != "cpu":
            return t.device
    return inputs[0].device if inputs else torch.device(declared or "cpu")


def strides_in(t, space) -> list[int]:
    """`t`'s strides in the iteration space: 0 where it broadcasts (size 1 or missing dim).

    A dim narrower than the space (a concat piece) keeps its stride; the
    kernel masks the coordinates past its end.
    """
    offset = len(space) - t.dim()
    strides = [0] * offset
    for d in range(t.dim()):
        strides.append(0 if t.size(d) == 1 and space[d + offset] != 1 else t.stride(d))
    return strides




def check_indices(kernel: str, index, size: int, wrap: bool, error: str) -> None:
    """Raise as eager does when a gather's index input leaves [0, size) ([-size, size) where negatives wrap).

    The kernel itself masks such lanes (it never reads outside the table); this
    makes the result eager's exception instead of zeros.
    """
    if index.numel() == 0:
        return
    low = -size if wrap else 0
    bad = index[(index < low) | (index >= size)]
    if bad.numel():
        raise checks.INDEX_ERRORS[error](
            f"index {int(bad.flatten()[0])} is out of bounds for dimension with size {size} (kernel @{kernel})"
        )


def cpu_vector_width() -> int:
    """Floats per ATen CPU vector (`Vectorized<float>::size()`) for the capability ATen dispatches to."""
    return 16 if torch.backends.cpu.get_cpu_capability().startswith("AVX512") else 8


def eager_math_sdpa(kernel: AttentionKernel, loaded: list) -> bool:
    """Would eager's sdpa run its math backend on these CPU tensors (`loaded`: the kernel's sites)?

    Asks ATen's own choice. A site the kernel reads before a kv-head repeat
    stands for the repeated tensor eager materializes (contiguous), as does
    an empty tensor for an operand computed by a prologue.
    """
    args = []
    for i, shape in zip(kernel.sdpa_sites, kernel.sdpa_shapes + (None,)):
        if i < 0:  # computed by a prologue: eager's is a fresh contiguous tensor
            args.append(torch.empty(shape, dtype=getattr(torch, kernel.dtype)))
            continue
        t = loaded[i]
        if shape is not None and len(shape) == t.dim():  # `?` sizes (a kernel over them): this launch's
            shape = tuple(n if s is None else s for s, n in zip(shape, t.shape))
        if shape is not None and tuple(t.shape) != shape:
            t = torch.empty(shape, dtype=t.dtype)
        args.append(t)
    q, k, v, *mask = args
    choice = torch._fused_sdp_choice(
        q, k, v, mask[0] if mask else None, 0.0, kernel.causal, scale=kernel.scale, enable_gqa=kernel.gqa
    )
    return choice == int(torch.nn.attention.SDPBackend.MATH)


def in_place_pairs(kernel: TritonKernel, views) -> tuple[tuple[int, int], ...]:
    """(output, input) pairs where output element k depends on input element k alone (row-major), so the
    output may be written over the input if the input dies at this launch (runtime/liveness.py decides).

    Conservative: a plain pointwise kernel (no cat, scatter, gather, pad, reduction), static sizes; each
    site of the input reads it whole through reshapes only, in the iteration space's exact shape (no
    broadcast along any dim); the output has the input's dtype and element count. `views`: the sites'
    view chains as the launcher applies them. Other kinds: the pairs their lowering found (`overwrites`).
    """
    if kernel.kind != GroupKind.POINTWISE:
        return kernel.overwrites
    if kernel.init or kernel.dynamic is not None:
        return ()
    numel = math.prod(kernel.space)
    inputs = []
    for i, t in enumerate(kernel.inputs):
        sites = [(site, chain) for site, chain in zip(kernel.sites, views) if site.input == i]
        if not sites or math.prod(t.shape) != numel:
            continue
        whole = True
        for site, chain in sites:
            if site.pad is not None or site.table_rank or site.check is not None:
                whole = False
            elif any(op not in RESHAPES for op, _ in site.chain):
                whole = False
            else:
                seen = torch.empty(t.shape, device="meta")
                for view, args, kwargs in chain:
                    seen = view(seen, *args[1:], **kwargs)
                whole = whole and tuple(seen.shape) == tuple(kernel.space)
        if whole:
            inputs.append(i)
    return tuple(
        (j, i) for j, out in enumerate(kernel.outputs) for i in inputs
        if math.prod(out.shape) == numel and out.dtype == kernel.inputs[i].dtype
    )


def needs_wide(numel: int, tensors: list[torch.Tensor]) -> bool:
    """Does a launch over `numel` elements reading or writing `tensors` need 64-bit offsets (the `WIDE` constexpr)?"""
    return numel > emitter.INT32_MAX or any(_extent(t) > emitter.INT32_MAX for t in tensors)


def _extent(t: torch.Tensor) -> int:
    """How many elements from its first a kernel may address in `t`: one past its farthest element (0 if empty)."""
    if t.numel() == 0:
        return 0
    return 1 + sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()))


def _reusable(t: torch.Tensor, shape, dtype: torch.dtype, device) -> torch.Tensor | None:
    """`t` as an output of `shape` when its buffer fits it exactly (checked per call: the plan assumed it)."""
    if t.dtype != dtype or t.device != device or not t.is_contiguous() or t.numel() != math.prod(shape):
        return None
    return t.view(shape)


def _given_buffer(inputs, j: int, shape, dtype: torch.dtype, device, reuse: dict | None, buffers: dict | None):
    """Output `j`'s buffer where the liveness plan gives it one that fits: an input dying at this launch (`reuse`)
    or a dead value's (`buffers`); None: a new one."""
    out = _reusable(inputs[reuse[j]], shape, dtype, device) if reuse and j in reuse else None
    if out is None and buffers and j in buffers:
        out = _reusable(buffers[j], shape, dtype, device)
    return out


class Launcher:
    """Runs one TritonKernel on torch tensors; its kind (`kernel_kind`) sizes the blocks and the grid."""

    def __init__(self, kernel: TritonKernel):
        self.kernel = kernel
        self.schedule = kernel_kind(kernel.kind)
        self.out_dtypes = [getattr(torch, t.dtype) for t in kernel.outputs]
        if kernel.dynamic is None:
            self._size(kernel.shape, [t.shape for t in kernel.outputs])
        self._fn = None
        self._interpret = None
        self._source_key = None
        # Each load site's view chain as ATen view functions (metadata only:
        # strides and offset change, no data moves).
        self._views = [[aten_call(op, (None, *args)) for op, args in site.chain] for site in kernel.sites]
        # The shape each site's strides are taken in: the iteration space, or (templates) the site's own.
        self._spaces = list(self.schedule.site_spaces(kernel))
        self.in_place = in_place_pairs(kernel, self._views)
        # The scalar parameters of a launch passing none: None where the kernel takes scalar arguments.
        self._scalars = None if any(isinstance(s, LaunchScalar) for s in kernel.scalars) else kernel.scalars

    def _size(self, shape, out_shapes) -> None:
        """The iteration space and output shapes: once for a static kernel, per call for a dynamic one."""
        self.shape = shape
        self.out_shapes = out_shapes
        self.numel = math.prod(self.shape)
        self.rnumel = math.prod(self.shape[d] for d in self.kernel.reduced)
        self.xnumel = self.numel // self.rnumel if self.rnumel else math.prod(
            d for i, d in enumerate(self.shape) if i not in self.kernel.reduced
        )

    def launch(self, interpret: bool, device=None, loaded=()) -> Launch:
        """This call's sizes and device, as the kernel's kind reads them."""
        arch = (lambda: _RECORDING[0]) if _RECORDING is not None else (lambda: _arch(device))
        return Launch(
            interpret, self.shape, self.numel, self.xnumel, self.rnumel,
            arch, lambda: eager_math_sdpa(self.kernel, loaded), cpu_vector_width,
        )

    def function(self, interpret: bool):
        """The kernel's function for one mode, loaded at its first launch in that mode."""
        if self._fn is None or self._interpret != interpret:
            self._fn = load(self.kernel, interpret)
            self._interpret = interpret
        return self._fn

    def compiled_function(self, device):
        """The kernel's function for launches on CUDA `device`: its JIT function, or a package's cubin for the
        device's arch standing in for it (runtime/binaries.py)."""
        fn = self.function(False)
        if not binaries.registered():
            return fn
        if self._source_key is None:
            self._source_key = source_key(self.kernel.source)
        binary = binaries.lookup(self.kernel.name, self._source_key, _arch(device))
        return fn if binary is None else binary.bound(fn)

    @functools.cached_property
    def direct(self) -> DirectLauncher:
        """This kernel's launches from a generated program (runtime/codegen.py)."""
        return DirectLauncher(self)

    def scalars(self, values=()) -> tuple[float, ...]:
        """The kernel's scalar parameters for a launch passing `values` (its `scalars` attribute)."""
        return tuple(s.value(values) if isinstance(s, LaunchScalar) else s for s in self.kernel.scalars)

    def __call__(self, *inputs, reuse: dict[int, int] | None = None, buffers: dict | None = None,
                 scalars: tuple[float, ...] | None = None):
        """The outputs for `inputs`; `reuse` (output -> input, pairs of `in_place` the liveness plan chose):
        outputs written over inputs that die here instead of fresh buffers; `buffers` (output -> tensor): dead
        values' buffers the plan gives outputs (each used where it fits, checked here); `scalars`: the scalar
        parameters (`self.scalars(values)`) where the kernel takes scalar arguments."""
        scalars = self._scalars if scalars is None else scalars
        if scalars is None:
            raise TypeError(f"kernel @{self.kernel.name} takes scalar arguments: pass scalars=launcher.scalars(values)")
        recorded = _RECORDING[1] if _RECORDING is not None else None
        device = torch.device("meta") if recorded is not None else _launch_device(inputs, self.kernel.device)
        checked = checks.enabled() and recorded is None
        loaded = []
        for site, views in zip(self.kernel.sites, self._views):
            t = inputs[site.input]
            if t.device != device:  # a 0-d CPU tensor beside GPU ones (a lifted constant), as eager allows
                t = t.to(device)
            for view, args, kwargs in views:
                t = view(t, *args[1:], **kwargs)
            loaded.append(t)
        if self.kernel.dynamic is not None:
            self._size(*self.kernel.dynamic.resolve(loaded))
            if self.rnumel == 0 and self.kernel.dynamic.empty_rows_error:
                raise IndexError(self.kernel.dynamic.empty_rows_error)
        spaces = self._spaces or [self.shape] * len(self.kernel.sites)
        outputs, guarded = [], []
        for j, (shape, dtype) in enumerate(zip(self.out_shapes, self.out_dtypes)):
            out = _given_buffer(inputs, j, shape, dtype, device, reuse, buffers)
            if out is not None:
                guarded.append(None)  # the input's own buffer: its guards (if any) are its producer's
            elif checked:
                out, raw = checks.guarded_empty(shape, dtype, device)
                guarded.append(raw)
            else:
                out = torch.empty(shape, dtype=dtype, device=device)
            outputs.append(out)
        for j, i in self.kernel.init:  # a scatter writes into a copy of its input
            outputs[j].copy_(inputs[i])
        interpret = device.type != "cuda" and recorded is None
        launch = self.launch(interpret, device, loaded)
        if self.schedule.empty(launch):
            return outputs
        if recorded is None:
            self.function(interpret)
        strides = []
        for site, t, space in zip(self.kernel.sites, loaded, spaces):
            if site.check is not None and (interpret or checked):
                check_indices(self.kernel.name, t, *site.check)
            # A gather's table is addressed through its own strides, every other site in its space.
            strides.extend(t.stride() if site.table_rank else strides_in(t, space))
        blocks = self.schedule.blocks(self.kernel, launch)
        if self.kernel.wide_flag:  # a kernel over `?` sizes: 64-bit offsets only for a launch that needs them
            blocks[emitter.WIDE] = needs_wide(self.numel, [*loaded, *outputs])
        args = self.schedule.launch_args(self.kernel, launch, blocks)
        if args is None:
            return outputs
        sizes, grid, options = args
        # Compiled launches ask for FP fusion explicitly (Triton 3.9 warns when left to the default).
        options = ({} if interpret else {"enable_fp_fusion": True} | (checks.COMPILED_OPTIONS if checked else {})) | options
        if recorded is not None:
            recorded.append((self.kernel.name, [*loaded, *outputs, *scalars, *sizes, *strides], {**blocks, **options}))
            return outputs
        out_params = [p.name for p in self.kernel.params if p.role is Role.OUTPUT]
        addresses = contextlib.nullcontext()
        if checked and interpret:
            loads = [p.name for p in self.kernel.params if p.role is Role.LOAD]
            reads = [checks.Extent.of(p, t) for p, t in zip(loads, loaded)]
            writes = [checks.Extent.of(p, t) for p, t in zip(out_params, outputs)]
            addresses = checks.checked_addresses(self.kernel.name, reads, writes)
        try:
            host = host_arguments_in_place() if interpret else contextlib.nullcontext()
            fn = self._fn if interpret else self.compiled_function(device)
            with triton_mode(interpret), addresses, host:
                fn[grid](*loaded, *outputs, *scalars, *sizes, *strides, **blocks, **options)
        except Exception as e:
            if checked and checks.unwrap(e) is not e:
                raise checks.unwrap(e) from None  # not the interpreter's wrapping of it
            if checked and (index := checks.index_error(e)) is not None:
                raise index from None
            raise
        if checked:
            kept = [(p, out, raw) for p, out, raw in zip(out_params, outputs, guarded) if raw is not None]
            checks.verify_guards(self.kernel.name, {p: out for p, out, _ in kept}, [raw for _, _, raw in kept])
        return outputs


@dataclass(frozen=True)
class _Prepared:
    """What every launch of a static kernel on one device shares: computed from sizes alone, at the first."""

    device: torch.device
    interpret: bool
    sites: tuple  # per load site: (input position, its view chain as (view, args, kwargs))
    spaces: tuple  # per load site: the shape its strides are taken in, or None for a gather's table
    outputs: tuple  # per output: (shape, dtype)
    run: object  # `fn[grid]`, or None where there is nothing to launch (empty, or no program)
    sizes: tuple
    constants: dict  # blocks and compile options
    strides: dict = field(default_factory=dict)  # the sites' strides -> the kernel's stride arguments


# How many stride layouts of one launch's inputs a prepared launch remembers; past that it computes them per call.
STRIDE_LAYOUTS = 16


class DirectLauncher:
    """One kernel's launches from a generated program: a static kernel's launch on one device precomputes, at its
    first, its views, output shapes, blocks, grid, sizes and options, and the strides per layout of its inputs
    (the specialization guards shapes, not strides: they are looked up per call). Anything else — `?` sizes,
    a scatter's init copies, checked launches, 64-bit offsets, inputs on several devices, interpreted index
    checks and sdpa backend choices — takes the `Launcher`'s path. Either way the same kernel runs on the same
    arguments: the results are the same bits."""

    def __init__(self, launcher: Launcher):
        self.launcher = launcher
        kernel = launcher.kernel
        self._static = kernel.dynamic is None and not kernel.init and not kernel.wide_flag
        self._prepared: dict[torch.device, _Prepared | None] = {}

    def __call__(self, *inputs, reuse: dict[int, int] | None = None, buffers: dict | None = None,
                 scalars: tuple[float, ...] | None = None):
        launcher = self.launcher
        scalars = launcher._scalars if scalars is None else scalars
        if not self._static or scalars is None or checks.enabled() or _RECORDING is not None:
            return launcher(*inputs, reuse=reuse, buffers=buffers, scalars=scalars)
        if inputs:
            device = inputs[0].device
            for t in inputs:
                if t.device != device:  # a 0-d CPU tensor beside GPU ones
                    return launcher(*inputs, reuse=reuse, buffers=buffers, scalars=scalars)
        else:
            device = torch.device(launcher.kernel.device or "cpu")
        prepared = self._prepared.get(device, False)
        if prepared is False:
            prepared = self._prepared[device] = self._prepare(device)
        if prepared is None:
            return launcher(*inputs, reuse=reuse, buffers=buffers, scalars=scalars)
        loaded = []
        for i, views in prepared.sites:
            t = inputs[i]
            for view, args, kwargs in views:
                t = view(t, *args, **kwargs)
            loaded.append(t)
        outputs = []
        for j, (shape, dtype) in enumerate(prepared.outputs):
            out = _given_buffer(inputs, j, shape, dtype, device, reuse, buffers)
            outputs.append(torch.empty(shape, dtype=dtype, device=device) if out is None else out)
        if prepared.run is None:
            return outputs
        layout = tuple(t.stride() for t in loaded)
        strides = prepared.strides.get(layout)
        if strides is None:
            strides = []
            for t, space in zip(loaded, prepared.spaces):
                strides.extend(t.stride() if space is None else strides_in(t, space))
            if len(prepared.strides) < STRIDE_LAYOUTS:
                prepared.strides[layout] = strides
        if prepared.interpret:
            with triton_mode(True), host_arguments_in_place():
                prepared.run(*loaded, *outputs, *scalars, *prepared.sizes, *strides, **prepared.constants)
        elif already_compiled():
            prepared.run(*loaded, *outputs, *scalars, *prepared.sizes, *strides, **prepared.constants)
        else:
            with triton_mode(False):
                prepared.run(*loaded, *outputs, *scalars, *prepared.sizes, *strides, **prepared.constants)
        return outputs

    def _prepare(self, device: torch.device) -> _Prepared | None:
        """What every launch on `device` shares; None where they take the `Launcher`'s path."""
        launcher = self.launcher
        kernel = launcher.kernel
        interpret = device.type != "cuda"
        if interpret and (any(site.check is not None for site in kernel.sites) or getattr(kernel, "sdpa_sites", ())):
            return None  # per call: the interpreter checks indices on the host; sdpa's backend follows the tensors
        launch = launcher.launch(interpret, device)
        outputs = tuple((tuple(shape), dtype) for shape, dtype in zip(launcher.out_shapes, launcher.out_dtypes))
        sites = tuple((site.input, tuple((view, tuple(args[1:]), kwargs) for view, args, kwargs in views))
                      for site, views in zip(kernel.sites, launcher._views))
        spaces = launcher._spaces or [launcher.shape] * len(kernel.sites)
        spaces = tuple(None if site.table_rank else space for site, space in zip(kernel.sites, spaces))
        args = None if launcher.schedule.empty(launch) else launcher.schedule.launch_args(
            kernel, launch, blocks := launcher.schedule.blocks(kernel, launch))
        if args is None:
            return _Prepared(device, interpret, sites, spaces, outputs, None, (), {})
        sizes, grid, options = args
        options = ({} if interpret else {"enable_fp_fusion": True}) | options
        fn = launcher.function(True) if interpret else launcher.compiled_function(device)
        return _Prepared(device, interpret, sites, spaces, outputs, fn[grid], tuple(sizes), {**blocks, **options})
