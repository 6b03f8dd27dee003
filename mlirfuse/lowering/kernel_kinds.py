"""Kernel kinds: how each kind of `fusion.kernel` is lowered, launched and compiled ahead of time.

One small class per schedule; `kernel_kind(kind)` picks it for a `GroupKind`:

    PointwiseKind   pointwise, concat, scatter      one flat [XBLOCK] block per program
    ReductionKind   reduction, persistent-reduction [XBLOCK, RBLOCK] tiles, a row per program row
    ScanKind        scan                            the same tiles, one pass carrying a running total
    AttentionKind   attention                       flash attention, a program per query block
    MatmulKind      matmul                          tiled GEMM, a program per output tile
    MatmulChainKind matmul-chain                    two GEMMs back to back, a program per block of rows
    ConvKind        conv                            implicit GEMM, a program per output tile and group

`lower_kernel`, the runtime's `Launcher` and `runtime/aot.py` ask the class;
none of them switches on the kind. Like the rest of the lowering this
module imports neither torch nor triton: what a launch knows of its device
and tensors comes in a `Launch`, its device facts asked only by the kinds
that need them.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Callable

from mlirfuse.dialect import GroupKind
from mlirfuse.lowering.attention import attention_blocks, lower_attention
from mlirfuse.lowering.conv import conv_config, lower_conv
from mlirfuse.lowering.emitter import WIDE, TritonKernel
from mlirfuse.lowering.matmul import MODE_DEPENDENT, lower_matmul, matmul_config
from mlirfuse.lowering.matmul import grid as matmul_grid
from mlirfuse.lowering.matmul_chain import chain_config, chain_launch, lower_matmul_chain, mode_constants
from mlirfuse.lowering.pointwise import lower_pointwise
from mlirfuse.lowering.reduction import lower_reduction
from mlirfuse.lowering.scan import lower_scan


@dataclass(frozen=True)
class Launch:
    """One launch of a kernel: its sizes at this call, and its device (asked lazily)."""

    interpret: bool
    shape: tuple
    numel: int
    xnumel: int
    rnumel: int
    arch: Callable[[], int]  # 10 * major + minor of the CUDA device (90 when interpreted)
    eager_math_sdpa: Callable[[], bool]  # would eager's sdpa take its math backend on these CPU tensors?
    cpu_vector_width: Callable[[], int]  # floats per ATen CPU vector


def _wide_aot(kernel: TritonKernel) -> dict:
    """A kernel over `?` sizes compiled ahead of time: its sizes may be any (the signature's are i64), so 64-bit offsets."""
    return {WIDE: True} if kernel.wide_flag else {}


def _programs(n: int, block: int) -> int:
    return (n + block - 1) // block


# Elements per thread of a compiled pointwise or reduction launch: 8 int64 values a thread (a 1024 block on
# 4 warps) spill 8 bytes on sm_90 under Triton 3.9's ptxas options (--regAllocOptLevel=2) even in a kernel
# of three loads and a shift (fuzz seed 2720008 with --aot); 4 do not. Warps = elements / (32 * 4), 1 to 8.
ELEMENTS_PER_THREAD = 4
# A pointwise kernel computing sin or cos: 2 (512 on 8 warps). libdevice's large-argument path with 4 spilled
# 4 bytes at 40 registers on sm_80 (RoPE's cos/sin of a Llama-style decoder, as launched); 2: 28, no spill.
SIN_COS_PER_THREAD = 2


def _block_size(numel: int, interpret: bool, per_thread: int = ELEMENTS_PER_THREAD) -> int:
    # The interpreter pays per program, not per element: use big blocks there. Compiled: 8 warps of
    # `per_thread` elements a thread at most.
    cap = 8192 if interpret else 32 * 8 * per_thread
    size = 1
    while size < numel and size < cap:
        size *= 2
    return max(size, 16)


def _warps(elements: int, per_thread: int = ELEMENTS_PER_THREAD) -> int:
    return max(1, min(8, elements // (32 * per_thread)))


def _per_thread(kernel: TritonKernel) -> int:
    """Elements per thread of a compiled pointwise launch of `kernel`."""
    return _per_thread_of(kernel.source)


@functools.lru_cache(maxsize=4096)
def _per_thread_of(source: str) -> int:  # (asked per launch: a str's hash is kept once computed)
    return SIN_COS_PER_THREAD if "tl.sin(" in source or "tl.cos(" in source else ELEMENTS_PER_THREAD


def _tile_warps(blocks: dict) -> int:
    """Warps of a compiled [XBLOCK, RBLOCK] tile (reductions, scans)."""
    return _warps(blocks["XBLOCK"] * blocks["RBLOCK"])


def _static_sizes(kernel: TritonKernel) -> tuple[float, float, float]:
    """(numel, xnumel, rnumel) of a launch of `kernel`'s static space; 2^31 where a size is `?`."""
    sizes = [2**31 if n is None else n for n in kernel.space]
    rnumel = math.prod(sizes[d] for d in kernel.reduced) if kernel.reduced else 1
    xnumel = math.prod(n for d, n in enumerate(sizes) if d not in kernel.reduced)
    return min(math.prod(sizes), 2**31), min(xnumel, 2**31), min(rnumel, 2**31)


def _pow2_at_least(n: int) -> int:
    size = 1
    while size < n:
        size *= 2
    return size


class KernelKind:
    """What a kind's kernels need beyond their source; the defaults are a flat kernel's."""

    kinds: tuple[GroupKind, ...] = ()

    def lower(self, kernel, kind: GroupKind) -> TritonKernel:
        raise NotImplementedError

    def site_spaces(self, kernel: TritonKernel) -> tuple:
        """The shape each load site's strides are taken in; () for the iteration space."""
        return kernel.site_spaces

    def empty(self, launch: Launch) -> bool:
        """Is there nothing to compute, so that the (empty) outputs return before the kernel is even loaded?"""
        return False

    def blocks(self, kernel: TritonKernel, launch: Launch) -> dict:
        """The constexprs (block sizes) of this launch."""
        raise NotImplementedError

    def launch_args(self, kernel: TritonKernel, launch: Launch, blocks: dict) -> tuple[list, tuple, dict] | None:
        """(size arguments, grid, compile options) of this launch; None: no program to run."""
        raise NotImplementedError

    def aot_constants(self, kernel: TritonKernel, arch: int) -> tuple[dict, dict]:
        """(constexpr values, compile options) the kernel is compiled with for sm_<arch> ahead of time."""
        raise NotImplementedError


class PointwiseKind(KernelKind):
    kinds = (GroupKind.POINTWISE, GroupKind.CONCAT, GroupKind.SCATTER)

    def lower(self, kernel, kind: GroupKind) -> TritonKernel:
        return lower_pointwise(kernel, kind)

    def empty(self, launch: Launch) -> bool:
        return launch.numel == 0

    def blocks(self, kernel: TritonKernel, launch: Launch) -> dict:
        # A dynamic kernel's block size does not follow its sizes: a new size compiles no new variant.
        numel = math.inf if kernel.dynamic is not None else launch.numel
        return {"XBLOCK": _block_size(numel, launch.interpret, _per_thread(kernel))}

    def launch_args(self, kernel: TritonKernel, launch: Launch, blocks: dict):
        options = {} if launch.interpret else {"num_warps": _warps(blocks["XBLOCK"], _per_thread(kernel))}
        return [launch.numel, *launch.shape[1:]], (_programs(launch.numel, blocks["XBLOCK"]),), options

    def aot_constants(self, kernel: TritonKernel, arch: int) -> tuple[dict, dict]:
        # The blocks and warps a launch on a GPU takes (`?` sizes: the dynamic kernel's fixed block).
        per_thread = _per_thread(kernel)
        xblock = _block_size(_static_sizes(kernel)[0], interpret=False, per_thread=per_thread)
        return {"XBLOCK": xblock, **_wide_aot(kernel)}, {"enable_fp_fusion": True, "num_warps": _warps(xblock, per_thread)}


class ReductionKind(KernelKind):
    kinds = (GroupKind.REDUCTION, GroupKind.PERSISTENT_REDUCTION)

    def lower(self, kernel, kind: GroupKind) -> TritonKernel:
        return lower_reduction(kernel, persistent=kind == GroupKind.PERSISTENT_REDUCTION)

    def blocks(self, kernel: TritonKernel, launch: Launch) -> dict:
        return self._reduction_blocks(kernel, launch.xnumel, launch.rnumel, launch.interpret)

    @staticmethod
    def _reduction_blocks(kernel: TritonKernel, xnumel, rnumel, interpret: bool) -> dict:
        # A dynamic kernel's block sizes do not follow its sizes: a new size compiles no new variant.
        # The interpreter compiles nothing, and runs a custom-combine `tl.reduce` (NaN-aware max, argmax)
        # one block element at a time in Python: there a block is no bigger than the rows and columns.
        sized = interpret or kernel.dynamic is None
        # Elements per program; on a GPU 2048 (8 a thread on 8 warps): 4096 spilled 4 bytes at 80 registers on
        # sm_80 in an embedding + layer norm row of 1024 bf16 (bench/spills.py --zoo, GPT-2 and OPT at d=1024).
        budget = 16384 if interpret else 2048
        if kernel.kind == GroupKind.PERSISTENT_REDUCTION:
            rblock = max(2, _pow2_at_least(rnumel))
        elif interpret:
            rblock = min(2048, max(2, _pow2_at_least(rnumel)))  # still a loop (one pass up to 2048)
        else:
            rblock = 1024
        xblock = max(1, min(_pow2_at_least(xnumel), budget // rblock) if sized else budget // rblock)
        return {"XBLOCK": xblock, "RBLOCK": rblock}

    def launch_args(self, kernel: TritonKernel, launch: Launch, blocks: dict):
        if launch.xnumel == 0:
            return None
        options = {} if launch.interpret else {"num_warps": _tile_warps(blocks)}
        return [launch.xnumel, launch.rnumel, *launch.shape], (_programs(launch.xnumel, blocks["XBLOCK"]),), options

    def aot_constants(self, kernel: TritonKernel, arch: int) -> tuple[dict, dict]:
        # The blocks and warps a launch on a GPU takes (`?` sizes: the dynamic kernel's fixed blocks).
        _, xnumel, rnumel = _static_sizes(kernel)
        blocks = self._reduction_blocks(kernel, xnumel, rnumel, interpret=False)
        return {**blocks, **_wide_aot(kernel)}, {"enable_fp_fusion": True, "num_warps": _tile_warps(blocks)}


class ScanKind(ReductionKind):
    """Reduction-shaped tiles, one loop per row: a tile is no longer than the row, and rows share a program."""

    kinds = (GroupKind.SCAN,)

    def lower(self, kernel, kind: GroupKind) -> TritonKernel:
        return lower_scan(kernel)

    def empty(self, launch: Launch) -> bool:
        return launch.numel == 0

    def blocks(self, kernel: TritonKernel, launch: Launch) -> dict:
        return self._blocks(launch.xnumel, launch.rnumel, launch.interpret)

    @staticmethod
    def _blocks(xnumel: int, rnumel: int, interpret: bool) -> dict:
        rblock = max(2, min(2048 if interpret else 1024, _pow2_at_least(rnumel)))
        # Elements per program. On a GPU 1024: int64/f64 totals and tiles take two registers per element,
        # and [XBLOCK, RBLOCK] tiles of 4096 spill on sm_80/sm_90 with an epilogue of a few ops.
        budget = 16384 if interpret else 1024
        return {"XBLOCK": max(1, min(_pow2_at_least(xnumel), budget // rblock)), "RBLOCK": rblock}

    def aot_constants(self, kernel: TritonKernel, arch: int) -> tuple[dict, dict]:
        # Scan kernels are static: compiled ahead of time with the blocks a launch on a GPU will take.
        _, xnumel, rnumel = _static_sizes(kernel)
        blocks = self._blocks(xnumel, rnumel, interpret=False)
        return blocks, {"enable_fp_fusion": True, "num_warps": _tile_warps(blocks)}


class AttentionKind(KernelKind):
    kinds = (GroupKind.ATTENTION,)

    def lower(self, kernel, kind: GroupKind) -> TritonKernel:
        return lower_attention(kernel)

    def site_spaces(self, kernel: TritonKernel) -> tuple:
        return kernel.site_spaces or kernel.spaces  # each site's role's space (q, k, v, mask)

    def blocks(self, kernel: TritonKernel, launch: Launch) -> dict:
        arch = 90 if launch.interpret else launch.arch()
        # On CPU, sdpa's NaN/inf semantics are those of the backend eager picks for these tensors.
        math_backend = launch.interpret and bool(kernel.sdpa_sites) and launch.eager_math_sdpa()
        lq, lk = self._lengths(kernel, launch)
        return attention_blocks(kernel, launch.interpret, arch, math_backend, launch.cpu_vector_width(), lq, lk)

    @staticmethod
    def _lengths(kernel: TritonKernel, launch: Launch) -> tuple[int, int]:
        """This launch's query and key lengths: its space's last two sizes over `?`, else the kernel's."""
        return (launch.shape[-2], launch.shape[-1]) if kernel.dynamic is not None else (kernel.lq, kernel.lk)

    def launch_args(self, kernel: TritonKernel, launch: Launch, blocks: dict):
        batch = launch.shape[:-2] if kernel.dynamic is not None else kernel.batch
        lq, lk = self._lengths(kernel, launch)
        if 0 in (*batch, lq, kernel.dv):  # an empty output (no keys still launch: their rows are sdpa's zeros)
            return None
        sizes = [*batch, lq, lk, kernel.dqk, kernel.dv]
        return sizes, (_programs(lq, blocks["BLOCK_M"]), math.prod(batch)), {}

    def aot_constants(self, kernel: TritonKernel, arch: int) -> tuple[dict, dict]:
        constexprs = attention_blocks(kernel, interpret=False, arch=arch)
        options = {"enable_fp_fusion": True}
        options |= {key: constexprs.pop(key) for key in ("num_warps", "num_stages") if key in constexprs}
        return constexprs, options


class MatmulKind(KernelKind):
    kinds = (GroupKind.MATMUL,)

    # Block sizes, warps and stages of a template on a target ("interpreter", "sm_80", "sm_90").
    config = staticmethod(matmul_config)

    def lower(self, kernel, kind: GroupKind) -> TritonKernel:
        return lower_matmul(kernel)

    @staticmethod
    def _gemm(kernel: TritonKernel, launch: Launch):
        """The kernel's GEMM at this launch's sizes: over `?` rows, the rows the launcher resolved."""
        g = kernel.template
        return dataclasses.replace(g, out=tuple(launch.shape)) if getattr(g, "dynamic", False) else g

    def _config(self, kernel: TritonKernel, launch: Launch):
        # Over `?` rows the tile's rows follow this launch's M (16, 32, 64 or the table's: a small compiled set).
        return self.config(self._gemm(kernel, launch), gemm_target(launch))

    @staticmethod
    def _mode(kernel: TritonKernel, interpreted: bool) -> dict:
        return {"INTERPRETED": interpreted} if kernel.template.dtype in MODE_DEPENDENT else {}

    def blocks(self, kernel: TritonKernel, launch: Launch) -> dict:
        return self._config(kernel, launch).constexprs() | self._mode(kernel, launch.interpret)

    def launch_args(self, kernel: TritonKernel, launch: Launch, blocks: dict):
        g, config = self._gemm(kernel, launch), self._config(kernel, launch)
        if g.m == 0:  # `?` rows, none at this launch
            return None
        options = {} if launch.interpret else {"num_warps": config.num_warps, "num_stages": config.num_stages}
        return [g.m, g.n, g.k, *g.k_extra, *g.out], matmul_grid(g, config), options

    def aot_constants(self, kernel: TritonKernel, arch: int) -> tuple[dict, dict]:
        config = self.config(kernel.template, f"sm_{arch}")
        options = {"enable_fp_fusion": True, "num_warps": config.num_warps, "num_stages": config.num_stages}
        return config.constexprs() | self._mode(kernel, False), options


class ConvKind(MatmulKind):
    """A GEMM's launch: the template's M, N, K, blocks and grid (one program column per group of channels)."""

    kinds = (GroupKind.CONV,)
    config = staticmethod(conv_config)

    def lower(self, kernel, kind: GroupKind) -> TritonKernel:
        return lower_conv(kernel)


class MatmulChainKind(KernelKind):
    kinds = (GroupKind.MATMUL_CHAIN,)

    def lower(self, kernel, kind: GroupKind) -> TritonKernel:
        return lower_matmul_chain(kernel)

    def blocks(self, kernel: TritonKernel, launch: Launch) -> dict:
        return chain_config(kernel.template, gemm_target(launch)).constexprs() | mode_constants(kernel.template, launch.interpret)

    def launch_args(self, kernel: TritonKernel, launch: Launch, blocks: dict):
        config = chain_config(kernel.template, gemm_target(launch))
        options = {} if launch.interpret else {"num_warps": config.num_warps, "num_stages": config.num_stages}
        return *chain_launch(kernel.template, config), options

    def aot_constants(self, kernel: TritonKernel, arch: int) -> tuple[dict, dict]:
        config = chain_config(kernel.template, f"sm_{arch}")
        options = {"enable_fp_fusion": True, "num_warps": config.num_warps, "num_stages": config.num_stages}
        return config.constexprs() | mode_constants(kernel.template, False), options


def gemm_target(launch: Launch) -> str:
    """The GEMM templates' config table a launch reads: interpreter, sm_90 (Hopper and later) or sm_80."""
    return "interpreter" if launch.interpret else "sm_90" if launch.arch() // 10 >= 9 else "sm_80"


KERNEL_KINDS: dict[GroupKind, KernelKind] = {
    kind: schedule
    for schedule in (PointwiseKind(), ReductionKind(), ScanKind(), AttentionKind(), MatmulKind(), MatmulChainKind(), ConvKind())
    for kind in schedule.kinds
}


def kernel_kind(kind: GroupKind) -> KernelKind | None:
    """The class that lowers and launches kernels of `kind`; None for a kind that is no Triton kernel (extern)."""
    return KERNEL_KINDS.get(kind)


__all__ = [
    "KERNEL_KINDS", "AttentionKind", "ConvKind", "KernelKind", "Launch", "MatmulChainKind", "MatmulKind", "PointwiseKind", "ReductionKind",
    "ScanKind", "kernel_kind",
]
