"""test-shapes: exposes the shape analysis to lit.

Every func-level op carrying a `test.tag` and producing a tensor gets:
`test.shape` (`[4,?]`, `*` when unranked), `test.dtype`, `test.same_space`
and `test.broadcasts` (the other tagged values provably of the same shape,
and provably broadcastable with it) and `test.size_only` (its result is read
only for sizes, rank or dtype). With `corrupt=true` the pass makes the first
tagged result's sizes dynamic without telling the analysis, and still claims
to preserve it, so lit can check that `--verify-analyses` reports the stale
shape.
"""

from __future__ import annotations

import dataclasses
import re

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.shapes import ShapeAnalysis, format_shape
from mlirfuse.analysis.values import is_tensor_type
from mlirfuse.ir import ir
from mlirfuse.passes.testing import AnalysisTestPass, set_list, tagged_ops


@dataclasses.dataclass(frozen=True)
class TestShapes(AnalysisTestPass):
    """Test pass: mark each op tagged `test.tag` with its result's shape, dtype, the tagged values of the same shape or broadcastable with it, and whether it is read only for its size; corrupt=true breaks the analysis on purpose."""

    name = "test-shapes"

    preserves = (ShapeAnalysis,)

    def apply(self, module: ir.Operation, am=None) -> None:
        shapes = (am or AnalysisManager()).get(ShapeAnalysis, module)
        values = [
            (op, tag, op.results[0])
            for op, tag in tagged_ops(module)
            if len(op.results) and is_tensor_type(op.results[0].type)
        ]
        if self.corrupt:
            value = values[0][2]
            value.set_type(_all_sizes_dynamic(value.type))
            return
        for op, _, value in values:
            op.attributes["test.shape"] = ir.StringAttr.get(format_shape(shapes.shape(value)))
            op.attributes["test.dtype"] = ir.StringAttr.get(shapes.dtype(value) or "?")
            others = [(tag, v) for o, tag, v in values if o != op]
            set_list(op, "test.same_space", [tag for tag, v in others if shapes.same_space(value, v)])
            set_list(op, "test.broadcasts", [tag for tag, v in others if shapes.broadcast_compatible(value, v)])
            op.attributes["test.size_only"] = ir.BoolAttr.get(shapes.size_only_uses(value))


def _all_sizes_dynamic(t: ir.Type) -> ir.Type:
    """`!torch.vtensor<[4,8],f32>` -> `!torch.vtensor<[?,?],f32>`."""
    return ir.Type.parse(re.sub(r"\[[^\]]*\]", lambda m: re.sub(r"\d+", "?", m.group(0)), str(t), count=1))
