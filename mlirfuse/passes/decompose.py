"""fusion-decompose: composite normalizations into reductions and pointwise ops.

The FX import keeps `softmax`, `log_softmax`, `layer_norm`,
`native_layer_norm`, `rms_norm`, `group_norm`, inference `batch_norm`,
`var`/`std`/`var_mean`/`std_mean`, `logsumexp` and `max.dim`/`min.dim` whole (we do not run torch-mlir's Python decompositions: they
cost seconds on big graphs). This pass rewrites each into `amax`/`sum`/`mean`
reductions (always keepdim, so results broadcast back over the reduced
axes) and elementwise ops, the form `fusion-fuse-elementwise` turns into one
reduction kernel. The patterns live in `decompositions/`: normalizations
(softmax, layer/RMS/batch/group norm), statistics (variance, logsumexp,
max.dim) and indexing (`take_along_dim`, a `torch.operator`, as a `gather`;
`scatter_reduce` sums as `scatter_add`; `histc`, and a cumsum of it, as one
reduction over a one-hot of the bins; a view splitting a gather's rows as a
gather by the viewed index, a gather of a product as the product of gathers,
so that a reduction kernel reads gathers of its inputs);
this file holds the table that roots them.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.ir import ir
from mlirfuse.passes.base import ModulePass, apply_patterns, ops_named, pattern
from mlirfuse.passes.decompositions.indexing import (
    decompose_histc,
    decompose_scatter_reduce,
    decompose_take_along_dim,
    gather_of_arithmetic,
    view_of_gather,
)
from mlirfuse.passes.decompositions.normalizations import (
    batch_norm,
    decompose_batch_norm,
    decompose_group_norm,
    decompose_layer_norm,
    decompose_rms_norm,
    decompose_softmax,
)
from mlirfuse.passes.decompositions.statistics import (
    decompose_logsumexp,
    decompose_max_dim,
    decompose_variance,
    variance,
)


def _operator_batch_norm(op, rewriter, name) -> bool:
    """Inference `_native_batch_norm_legit_no_training` (x, weight, bias, running_mean, running_var, momentum, eps) -> (y, [0], [0])."""
    if any(list(r.uses) for r in list(op.results)[1:]):
        return False
    x, w, bias, mean, var, _, eps = op.operands
    return batch_norm(op, rewriter, x, w, bias, mean, var, eps)


# The `torch.operator` names decompose_operator expands (torch-mlir has no op definition for them).
OPERATORS = {
    "torch.aten.std_mean.correction": variance,
    "torch.aten.std_mean.dim": variance,
    "torch.aten._native_batch_norm_legit_no_training": _operator_batch_norm,
    "torch.aten.take_along_dim": lambda op, rewriter, name: decompose_take_along_dim(op, rewriter),
    "torch.aten.histc": lambda op, rewriter, name: decompose_histc(op, rewriter),
}
OPERATOR_NAMES = tuple(OPERATORS)


@pattern
def decompose_operator(op, rewriter) -> bool:
    """`torch.operator` spellings of ops torch-mlir has no definition for (std_mean, inference batch norm, take_along_dim, histc)."""
    name = ir.StringAttr(op.attributes["name"]).value
    expand = OPERATORS.get(name)
    return expand(op, rewriter, name) if expand is not None else False


PATTERNS = [
    ("torch.aten.softmax.int", decompose_softmax),
    ("torch.aten._softmax", decompose_softmax),
    ("torch.aten.log_softmax.int", decompose_softmax),
    ("torch.aten._log_softmax", decompose_softmax),
    ("torch.aten.layer_norm", decompose_layer_norm),
    ("torch.aten.native_layer_norm", decompose_layer_norm),
    ("torch.aten.rms_norm", decompose_rms_norm),
    ("torch.aten.var.correction", decompose_variance),
    ("torch.aten.std.correction", decompose_variance),
    ("torch.aten.var_mean.correction", decompose_variance),
    ("torch.aten.std_mean.correction", decompose_variance),
    ("torch.aten.var.dim", decompose_variance),
    ("torch.aten.std.dim", decompose_variance),
    ("torch.aten.var_mean.dim", decompose_variance),
    ("torch.aten.std_mean.dim", decompose_variance),
    ("torch.operator", decompose_operator),
    ("torch.aten.batch_norm", decompose_batch_norm),
    ("torch.aten.group_norm", decompose_group_norm),
    ("torch.aten.logsumexp", decompose_logsumexp),
    ("torch.aten.max.dim", decompose_max_dim),
    ("torch.aten.min.dim", decompose_max_dim),
    ("torch.aten.scatter_reduce.two", decompose_scatter_reduce),
    ("torch.aten.view", view_of_gather),
    ("torch.aten.index.Tensor", gather_of_arithmetic),
]

# The patterns that start from a gather (`torch.aten.index.Tensor`): only they make one, so where the module
# holds none they never match, and a transformer's views (GPT-32: 320, most in attention groups) are not each
# handed to a pattern callback.
_GATHER_PATTERNS = (view_of_gather, gather_of_arithmetic)
_WITHOUT_GATHERS = [(root, fn) for root, fn in PATTERNS if fn not in _GATHER_PATTERNS]


@dataclasses.dataclass(frozen=True)
class Decompose(ModulePass):
    """Decompose softmax, log_softmax, layer_norm, native_layer_norm, rms_norm, group_norm, inference batch_norm, var/std(_mean), logsumexp and max/min.dim into keepdim reductions and elementwise ops; take_along_dim into a gather, scatter_reduce sums into scatter_add, histc (and a cumsum of it) into a one-hot sum over the bins; a gather's rows viewed apart as a gather by the viewed index, a gather of a product as the product of gathers.

    Ops with dynamic shapes or non-constant dims stay whole.
    """

    name = "fusion-decompose"

    def apply(self, module: ir.Operation, am=None) -> None:
        apply_patterns(module, PATTERNS if ops_named(module, ("torch.aten.index.Tensor",)) else _WITHOUT_GATHERS)
