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

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.dependence import DependenceAnalysis
from mlirfuse.ir import ir
from mlirfuse.passes.testing import AnalysisTestPass, tagged_ops


@dataclasses.dataclass(frozen=True)
class TestDependence(AnalysisTestPass):
    """Test pass: mark each op tagged `test.tag` with the tagged ops it depends on (`test.depends`); corrupt=true breaks the analysis on purpose."""

    name = "test-dependence"

    preserves = (DependenceAnalysis,)

    def apply(self, module: ir.Operation, am=None) -> None:
        dep = (am or AnalysisManager()).get(DependenceAnalysis, module)
        tagged = tagged_ops(module)
        if self.corrupt:
            # Swap the first two independent tagged ops (valid IR), without telling the analysis.
            ops = [op for op, _ in tagged]
            for i, a in enumerate(ops):
                for b in ops[i + 1 :]:
                    if not dep.reaches(a, b):
                        b.move_before(a)
                        return
            return
        for op, _ in tagged:
            deps = [tag for other, tag in tagged if other != op and dep.reaches(other, op)]
            op.attributes["test.depends"] = ir.StringAttr.get(", ".join(deps))
