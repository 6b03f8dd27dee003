"""test-alias: exposes the alias and mutation analysis to lit.

Every func-level op carrying a `test.tag` and producing a tensor gets:
`test.alias_class` (the value whose storage its result shares: a tag,
`arg<i>`, or an op name), `test.may_alias` (the other tagged values that
may share it), `test.writers` (the ops that may write it) and
`test.mutated`. With `corrupt=true` the pass erases the first tagged op that
writes a tensor without telling the analysis, and still claims to preserve
it, so lit can check that `--verify-analyses` reports the stale facts.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis import AnalysisManager
from mlirfuse.analysis.alias import AliasAnalysis, written_operands
from mlirfuse.analysis.values import is_tensor_type, value_key
from mlirfuse.ir import ir
from mlirfuse.passes.testing import AnalysisTestPass, set_list, tagged_ops, value_names


@dataclasses.dataclass(frozen=True)
class TestAlias(AnalysisTestPass):
    """Test pass: mark each op tagged `test.tag` with its storage class, what it may alias, its writers and whether it is mutated; corrupt=true breaks the analysis on purpose."""

    name = "test-alias"

    preserves = (AliasAnalysis,)

    def apply(self, module: ir.Operation, am=None) -> None:
        alias = (am or AnalysisManager()).get(AliasAnalysis, module)
        tagged = tagged_ops(module)
        if self.corrupt:
            writer = next(op for op, _ in tagged if written_operands(op) and not any(list(r.uses) for r in op.results))
            writer.operation.erase()
            return
        names = value_names(module)
        values = [(op, op.results[0]) for op, _ in tagged if len(op.results) and is_tensor_type(op.results[0].type)]
        for op, value in values:
            op.attributes["test.alias_class"] = ir.StringAttr.get(names[alias.root(value_key(value))])
            aliased = [names[value_key(v)] for o, v in values if o != op and alias.may_alias(value, v)]
            set_list(op, "test.may_alias", aliased)
            set_list(op, "test.writers", sorted(names[(w, None)] for w in alias.writers(value)))
            op.attributes["test.mutated"] = ir.BoolAttr.get(alias.is_mutated(value))
