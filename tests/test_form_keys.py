"""Shortcuts the passes take agree with what they stand for.

`BodyForm.key` groups forms as `BodyForm.text` (`canonical_form`) would, without printing them, with lifted
constants and open view indices too, and a memo of layouts answers as the numbering does; `function_level_ops`
given a set of op names (MLIR's walk driver finds them) lists what the Python walk lists.
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


_T, _R = "!torch.vtensor<[4,8],f32>", "!torch.vtensor<[8],f32>"


def _step(index: int, scale: float, swapped: bool) -> str:
    """A group reading row `index` of its first argument scaled by `scale` less row 0 of its second (or the
    other way round): forms alike up to a select's index, a float, and which operand is which."""
    first, second = ("%t", "%m") if swapped else ("%m", "%t")
    return f"""
  %g{index}{int(swapped)}{str(scale)[2:]} = "fusion.group"(%x, %y) ({{
  ^bb0(%a: {_T}, %b: {_T}):
    %zero = torch.constant.int 0
    %i = torch.constant.int {index}
    %one = torch.constant.int 1
    %s = torch.aten.select.int %a, %zero, %i : {_T}, !torch.int, !torch.int -> {_R}
    %t = torch.aten.select.int %b, %zero, %zero : {_T}, !torch.int, !torch.int -> {_R}
    %f = torch.constant.float {scale}
    %m = torch.aten.mul.Scalar %s, %f : {_R}, !torch.float -> {_R}
    %r = torch.aten.sub.Tensor {first}, {second}, %one : {_R}, {_R}, !torch.int -> {_R}
    "fusion.yield"(%r) : ({_R}) -> ()
  }}) {{kind = "pointwise"}} : ({_T}, {_T}) -> {_R}"""


def test_keys_through_a_memo_are_the_keys_numbered_afresh():
    """`BodyForm.key(..., memo)` hands a form the key of one laid out alike before, and only then: forms that
    differ in a select's index (open or not), a float (lifted or not), which operand is which, and what moved
    out of them (as fusion-outline's hoist-views moves a view out: its index constant, its argument erased or not)."""
    steps = [(i, c, swapped) for i in (0, 1, 2) for c in (0.5, 0.25) for swapped in (False, True)]
    text = "func.func @f(%x: " + _T + ", %y: " + _T + ") {" + "".join(_step(*s) for s in steps) + "\n  return\n}"
    with make_context():
        module = ir.Module.parse(text)
        groups = list(module.body.operations[0].regions[0].blocks[0].operations)[:-1]
        memo: dict = {}
        asked = []
        for moved in ((), ([3], [], set()), ([3], [1], set()), ([3], [1], {0})):
            for group in groups:
                form, fresh = BodyForm(group), BodyForm(group)
                for each in (form, fresh) if moved else ():
                    each.move_out(*moved)
                for lifted, holes in _variants(form):
                    expected = fresh.key(lifted, holes)
                    assert form.key(lifted, holes, memo) == expected
                    asked.append(expected)
        assert len(memo) < len(asked) - 2 * len(groups)  # layouts met again: the memo answered
        assert len(set(asked)) >= 12  # keys that differ: the memo could have answered wrongly


def test_named_function_level_ops_list_what_the_walk_lists():
    with make_context() as ctx:
        module = _module_before(ctx, "fusion-fuse-vertical")  # groups hold ops of the names asked too
        for names in ({"fusion.group"}, {"torch.aten.select.int", "torch.aten.mm"}, {"torch.aten.tanh"}):
            walked = [op for ops in function_level_ops(module.operation, names.__contains__) for op in ops]
            found = [op for ops in function_level_ops(module.operation, frozenset(names)) for op in ops]
            assert found == walked
