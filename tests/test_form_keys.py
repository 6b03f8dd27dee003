"""Shortcuts the passes take agree with what they stand for.

`BodyForm.key` groups forms as `BodyForm.text` (`canonical_form`) would, without printing them, with lifted
constants and open view indices too; `function_level_ops` given a set of op names (MLIR's walk driver finds
them) lists what the Python walk lists.
"""

from __future__ import annotations

import itertools

import torch
from torch import nn

from mlirfuse.dialect import BodyForm, make_context
from mlirfuse.frontend.importer import import_module
from mlirfuse.ir import constant_value, ir
from mlirfuse.passes import STAGES
from mlirfuse.passes.base import function_level_ops
from mlirfuse.passes.pipeline import build_pass_manager


class Steps(nn.Module):
    """Steps reading their own row of x, scaled by their own constant: groups alike up to an index or a float."""

    def __init__(self, d: int = 8):
        super().__init__()
        self.u = nn.Linear(d, d, bias=False)

    def forward(self, x, h):
        for t in range(x.shape[0]):
            h = torch.tanh(x[t] * (0.5 + t % 2) + self.u(h)) * h + x[t].sum(-1, keepdim=True)
        return h


def _module_before(ctx, last: str):
    """The two-step model after the pipeline's stages up to `last`, in `ctx`."""
    torch.manual_seed(0)
    text = str(import_module(Steps().eval(), (torch.randn(4, 3, 8), torch.randn(3, 8))).module)
    names = [s.name for s in STAGES if s.name != "fusion-explain-unfused"]
    module = ir.Module.parse(text)
    build_pass_manager("builtin.module(" + ",".join(names[: names.index(last) + 1]) + ")", ctx).run(module.operation)
    return module


def _groups(module) -> list:
    return [op for op in module.body.operations[0].regions[0].blocks[0].operations if op.operation.name == "fusion.group"]


def _variants(form: BodyForm) -> list[tuple]:
    """(lifted, holes) pairs to print `form` with: none, its float constants lifted, its selects' indices open."""
    lifted = {s for s, v in enumerate(form.values) if isinstance(constant_value(v), float)}
    holes = {i: (2,) for i, (name, *_) in enumerate(form.ops) if name == "torch.aten.select.int"}
    return [(frozenset(), None), (frozenset(lifted), None), (frozenset(), holes)]


def test_form_keys_group_as_texts():
    with make_context() as ctx:
        module = _module_before(ctx, "fusion-canonicalize")  # held: the groups live as long as it does
        groups = _groups(module)
        assert len(groups) > 4
        forms = [BodyForm(group) for group in groups]
        printed = [(form.text(*v), form.key(*v)) for form in forms for v in _variants(form)]
        assert len({text for text, _ in printed}) < len(printed)  # some forms are alike: a test that could fail
        for (text_a, key_a), (text_b, key_b) in itertools.combinations(printed, 2):
            assert (text_a == text_b) == (key_a == key_b)


def test_named_function_level_ops_list_what_the_walk_lists():
    with make_context() as ctx:
        module = _module_before(ctx, "fusion-fuse-vertical")  # groups hold ops of the names asked too
        for names in ({"fusion.group"}, {"torch.aten.select.int", "torch.aten.mm"}, {"torch.aten.tanh"}):
            walked = [op for ops in function_level_ops(module.operation, names.__contains__) for op in ops]
            found = [op for ops in function_level_ops(module.operation, frozenset(names)) for op in ops]
            assert found == walked
