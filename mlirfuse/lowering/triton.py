"""fusion.kernel -> Triton source: the lowering's entry point.

Each kernel kind has a schedule (where values live, which loop computes
them); every schedule writes its lines through the one `KernelEmitter` in
`mlirfuse.lowering.emitter` (per-op emitters, loads, stores, index lines,
source assembly):

    pointwise, concat, scatter      lowering/pointwise.py   one flat [XBLOCK] block
    reduction, persistent-reduction lowering/reduction.py   [XBLOCK, RBLOCK] tiles, looped or not
    attention                       lowering/attention.py   flash attention: key loop, online softmax
    matmul                          lowering/matmul.py      tiled tl.dot GEMM, prologue and epilogue on its tiles

This module only writes text; it never imports triton (see
`mlirfuse.runtime.kernels` for why that matters).
"""

from __future__ import annotations

from mlirfuse.dialect import POINTWISE_KINDS, REDUCTION_KINDS, GroupKind, group_kind
from mlirfuse.ir import ir
from mlirfuse.lowering.attention import lower_attention
from mlirfuse.lowering.emitter import LoweringError, Site, TritonKernel, load_sites
from mlirfuse.lowering.matmul import lower_matmul
from mlirfuse.lowering.pointwise import lower_pointwise
from mlirfuse.lowering.reduction import lower_reduction


def lower_kernel(kernel) -> TritonKernel:
    """Emit the Triton source of one `fusion.kernel`."""
    kind = group_kind(kernel)
    if kind in POINTWISE_KINDS:
        return lower_pointwise(kernel, kind)
    if kind in REDUCTION_KINDS:
        return lower_reduction(kernel, persistent=kind == GroupKind.PERSISTENT_REDUCTION)
    if kind == GroupKind.ATTENTION:
        return lower_attention(kernel)
    if kind == GroupKind.MATMUL:
        return lower_matmul(kernel)
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    raise LoweringError(f"kernel @{name}: no Triton lowering for kind '{kind}'")


__all__ = ["lower_kernel", "POINTWISE_KINDS", "REDUCTION_KINDS", "load_sites", "Site", "TritonKernel", "LoweringError"]
