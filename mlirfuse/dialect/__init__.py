"""The `fusion` dialect: ops, builders and verifier."""

from mlirfuse.dialect.fusion import (  # noqa: F401
    GROUP_KINDS,
    build_group,
    build_kernel,
    build_launch,
    build_yield,
    find_kernel,
    load_fusion_dialect,
    verify_fusion_ops,
)
from mlirfuse.ir import torch_context


def make_context():
    """A context with the `torch`, upstream and `fusion` dialects loaded."""
    ctx = torch_context()
    load_fusion_dialect(ctx)
    return ctx
