"""The test-* passes (`dependence`, `alias`, `shapes`: one module each), and what they share: finding the ops a lit test tagged, naming ops and values.

A lit test marks the ops it asks about with `test.tag = "name"`; the pass
answers in attributes on those ops (the bindings cannot emit remarks).
"""

from __future__ import annotations

import dataclasses

from mlirfuse.analysis.values import Key, function_blocks, value_key
from mlirfuse.ir import ir, op_id
from mlirfuse.passes.base import ModulePass
from mlirfuse.passes.options import option


@dataclasses.dataclass(frozen=True)
class AnalysisTestPass(ModulePass):
    """A test-* pass: answers questions about one analysis; `corrupt` breaks that analysis for --verify-analyses to find."""

    corrupt: bool = option(False, "break the analysis on purpose, to test --verify-analyses")


def tagged_ops(module: ir.Operation) -> list[tuple[ir.Operation, str]]:
    """Func-level ops carrying a `test.tag` string, in order, with their tags."""
    return [
        (op, ir.StringAttr(op.attributes["test.tag"]).value)
        for _, block in function_blocks(module)
        for op in block.operations
        if "test.tag" in op.attributes
    ]


def value_names(module: ir.Operation) -> dict[Key, str]:
    """`value_key` -> a name for func-level values: `arg<i>`, an op's tag, else the op's name."""
    names = {}
    for _, block in function_blocks(module):
        for i, arg in enumerate(block.arguments):
            names[value_key(arg)] = f"arg{i}"
        for op in block.operations:
            name = ir.StringAttr(op.attributes["test.tag"]).value if "test.tag" in op.attributes else op.operation.name
            names[(op_id(op), None)] = name  # the op itself, e.g. as a writer
            for result in op.results:
                names[value_key(result)] = name
    return names


def set_list(op, attribute: str, names) -> None:
    """`attribute = "a, b"`: the names, in the order given."""
    op.attributes[attribute] = ir.StringAttr.get(", ".join(names))
