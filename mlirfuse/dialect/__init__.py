"""The `fusion` dialect: ops, builders and verifier; group kinds and their accessors."""

from mlirfuse.dialect.fusion import (  # noqa: F401
    LAUNCH_SCALARS,
    SCALAR_MARK,
    VERIFIED_OPS,
    BodyForm,
    build_group,
    build_kernel,
    build_launch,
    build_yield,
    canonical_form,
    constant_merges,
    find_kernel,
    kernel_scalars,
    launch_scalars,
    load_fusion_dialect,
    verify_fusion_ops,
)
from mlirfuse.dialect.kinds import (  # noqa: F401
    FUSIBLE_KINDS,
    GROUP_KINDS,
    POINTWISE_KINDS,
    REDUCTION_KINDS,
    TEMPLATE_KINDS,
    GroupKind,
    group_kind,
    has_kind,
    set_group_kind,
)
from mlirfuse.ir import torch_context


def make_context():
    """A context with the `torch`, upstream and `fusion` dialects loaded."""
    ctx = torch_context()
    load_fusion_dialect(ctx)
    return ctx
