"""test-dependence: exposes the dependence analysis to lit through remarks.

Every func-level op carrying a `test.tag` string attribute gets a
`test.depends` attribute naming the tagged ops it depends on (transitively,
through def-use chains), e.g. `test.depends = "a, b"`. (The Python bindings
can emit errors but not remarks, so the facts go into the printed IR.) With `corrupt=true` the pass swaps two
tagged ops in the IR without telling the analysis and still claims to
preserve it - a deliberately broken pass, so lit can check that
`--verify-analyses` catches a maintained analysis that went stale.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.ir import ir
from mlirfuse.passes.base import ModulePass


@dataclasses.dataclass(frozen=True)
class TestDependence(ModulePass):
    """Test pass: mark each op tagged `test.tag` with the tagged ops it depends on (`test.depends`); corrupt=true breaks the analysis on purpose."""

    name = "test-dependence"
    corrupt: bool = False

    preserves = (DependenceAnalysis,)

    def apply(self, module: ir.Operation, am=None) -> None:
        from mlirfuse.analysis import AnalysisManager

        dep = (am or AnalysisManager()).get(DependenceAnalysis, module)
        tagged = []

        def visit(op):
            if "test.tag" in op.attributes and op.parent is not None and op.parent.name == "func.func":
                tagged.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        tags = [ir.StringAttr(op.attributes["test.tag"]).value for op in tagged]
        if self.corrupt:
            # Swap the first two independent tagged ops (valid IR), without telling the analysis.
            for i, a in enumerate(tagged):
                for b in tagged[i + 1 :]:
                    if not dep.reaches(a, b):
                        b.move_before(a)
                        return
            return
        for op, tag in zip(tagged, tags):
            deps = [t for other, t in zip(tagged, tags) if other != op and dep.reaches(other, op)]
            op.attributes["test.depends"] = ir.StringAttr.get(", ".join(deps))
