"""fusion.kernel -> Triton source: the lowering's entry point.

Each kernel kind has a schedule (where values live, which loop computes
them), picked by `mlirfuse.lowering.kernel_kinds`, which also knows how each
kind launches and compiles ahead of time; every schedule writes its lines
through the one `KernelEmitter` in `mlirfuse.lowering.emitter` (per-op
emitters, loads, stores, index lines, source assembly):

    pointwise, concat, scatter      lowering/pointwise.py   one flat [XBLOCK] block
    reduction, persistent-reduction lowering/reduction.py   [XBLOCK, RBLOCK] tiles, looped or not
    attention                       lowering/attention.py   flash attention: key loop, online softmax
    matmul                          lowering/matmul.py      tiled tl.dot GEMM, prologue and epilogue on its tiles

This module only writes text; it never imports triton (see
`mlirfuse.runtime.kernels` for why that matters).
"""

from __future__ import annotations

from mlirfuse.dialect import group_kind
from mlirfuse.ir import ir
from mlirfuse.lowering.emitter import LoweringError, Site, TritonKernel, load_sites
from mlirfuse.lowering.kernel_kinds import kernel_kind


def lower_kernel(kernel) -> TritonKernel:
    """Emit the Triton source of one `fusion.kernel`."""
    kind = group_kind(kernel)
    schedule = kernel_kind(kind)
    if schedule is None:
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        raise LoweringError(f"kernel @{name}: no Triton lowering for kind '{kind}'")
    return schedule.lower(kernel, kind)


__all__ = ["lower_kernel", "load_sites", "Site", "TritonKernel", "LoweringError"]
