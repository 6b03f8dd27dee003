"""The `fusion` dialect, defined in Python through `torch_mlir.dialects.ext`."""

from mlirfuse.dialect.fusion import (  # noqa: F401
    GROUP_KINDS,
    Fusion,
    GroupOp,
    build_group,
    build_kernel,
    build_launch,
    build_yield,
    find_kernel,
    KernelOp,
    LaunchOp,
    YieldOp,
    load_fusion_dialect,
)
