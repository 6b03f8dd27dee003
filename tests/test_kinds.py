"""Group kinds are a type: no kind string and no raw `attributes["kind"]` outside `mlirfuse/dialect/kinds.py`;
each kernel kind is one class (`mlirfuse/lowering/kernel_kinds.py`) for lowering, launch and AOT alike.

Read from the source with `ast`, so a literal comparison (`kind == "matmul"`),
a tuple of kind strings or a hand-read attribute anywhere in the package
fails here, naming the file and line.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from mlirfuse.dialect import GROUP_KINDS, GroupKind
from mlirfuse.lowering.emitter import Role
from mlirfuse.lowering.kernel_kinds import KERNEL_KINDS, Launch, kernel_kind
from helpers import Lambda

PACKAGE = Path(__file__).resolve().parents[1] / "mlirfuse"
KINDS_MODULE = PACKAGE / "dialect" / "kinds.py"
KIND_STRINGS = {kind.value for kind in GroupKind}


def _sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != KINDS_MODULE and "_bindings" not in path.parts:
            yield path, ast.parse(path.read_text())


def _exported_names(tree) -> set[int]:
    """ids of the string constants listing a module's `__all__` (Python names, not kinds)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            found.update(id(c) for c in ast.walk(node.value) if isinstance(c, ast.Constant))
    return found


def _is_kind_key(node) -> bool:
    return isinstance(node, ast.Constant) and node.value == "kind"


def _reads_attributes(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "attributes"


def test_no_kind_literal_outside_the_kind_type():
    found = []
    for path, tree in _sources():
        names = _exported_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in KIND_STRINGS and id(node) not in names:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value!r}")
    assert not found, "group kinds are GroupKind members, not strings:\n" + "\n".join(found)


def test_no_raw_kind_attribute_outside_the_kind_type():
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            subscript = isinstance(node, ast.Subscript) and _reads_attributes(node.value) and _is_kind_key(node.slice)
            membership = (
                isinstance(node, ast.Compare) and _is_kind_key(node.left)
                and any(_reads_attributes(c) for c in node.comparators)
            )
            if subscript or membership:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "read a group's kind with mlirfuse.dialect.group_kind:\n" + "\n".join(found)


def test_the_checks_see_what_they_forbid():
    """The two scans above flag the code they are meant to catch (a scan that never fires proves nothing)."""
    tree = ast.parse('if group.attributes["kind"].value == "matmul" or "kind" in op.attributes: pass')
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert "matmul" in KIND_STRINGS & set(constants)
    assert any(isinstance(n, ast.Subscript) and _reads_attributes(n.value) and _is_kind_key(n.slice) for n in ast.walk(tree))


def test_kinds_print_as_the_ir_spells_them():
    assert [str(k) for k in GROUP_KINDS] == [
        "pointwise", "reduction", "persistent-reduction", "concat", "extern", "attention", "matmul", "matmul-chain", "scatter",
        "scan", "conv",
    ]
    assert f"{GroupKind.PERSISTENT_REDUCTION}" == "persistent-reduction"
    assert {"matmul": 1}[GroupKind.MATMUL] == 1  # hashes as its string


def test_every_kernel_kind_has_one_class():
    assert kernel_kind(GroupKind.EXTERN) is None  # an ATen call, never a Triton kernel
    assert set(KERNEL_KINDS) == set(GroupKind) - {GroupKind.EXTERN}
    assert all(kind in KERNEL_KINDS[kind].kinds for kind in KERNEL_KINDS)


def _no_device():
    raise AssertionError("an interpreted launch asked for the device")


def _launch(kernel, interpret: bool, arch):
    """A launch at the kernel's static sizes; `arch` answers for the device (eager's sdpa: not its math backend)."""
    numel = math.prod(kernel.space)
    rnumel = math.prod(kernel.space[d] for d in kernel.reduced)
    return Launch(interpret, kernel.space, numel, numel // rnumel, rnumel, arch, lambda: False, lambda: 8)


@pytest.fixture(scope="module")
def kernels():
    """A kernel of each schedule: a persistent reduction, a GEMM with an epilogue, a pointwise kernel, attention."""
    torch.manual_seed(0)
    x, w, q = torch.randn(32, 16), torch.randn(16, 8), torch.randn(1, 2, 8, 4)

    def model(x, w, q):
        k = q.sin()  # read outside the attention too: a pointwise kernel, not k's prologue
        return (torch.softmax(x, -1) @ w).relu(), torch.exp(x) * 2, F.scaled_dot_product_attention(q, k, q.cos()), k + 1

    return list(mlirfuse.compile(Lambda(model), (x, w, q)).kernels.values())


def test_kernel_parameters_carry_their_roles(kernels):
    """Loads, outputs, scalars, sizes, strides: the order the launch passes them, each load naming its input."""
    assert {type(kernel_kind(k.kind)).__name__ for k in kernels} == {
        "ReductionKind", "MatmulKind", "PointwiseKind", "AttentionKind"
    }
    order = list(Role)
    for k in kernels:
        roles = [p.role for p in k.params]
        assert roles == sorted(roles, key=order.index), k.name
        loads = [p for p in k.params if p.role is Role.LOAD]
        assert [p.index for p in loads] == [site.input for site in k.sites]
        assert [p.name for p in loads] == [site.name for site in k.sites]
        assert [p.index for p in k.params if p.role is Role.OUTPUT] == list(range(len(k.outputs)))
        assert [p.index for p in k.params if p.role is Role.SCALAR] == list(range(len(k.scalars)))
        header = k.source.split(f"def {k.name}(", 1)[1].split(")")[0]
        assert [p.name for p in k.params] == [n.strip() for n in header.split(",") if "constexpr" not in n]


def test_launches_use_the_ahead_of_time_constants_of_their_target(kernels):
    """A compiled GEMM launch on sm_80 / sm_90 takes the constants `runtime/aot.py` compiles for them; interpreted launches never ask the device."""
    for k in kernels:
        schedule = kernel_kind(k.kind)
        interpreted = _launch(k, True, _no_device)
        assert schedule.launch_args(k, interpreted, schedule.blocks(k, interpreted)) is not None
        if schedule.__class__.__name__ != "MatmulKind":
            continue
        for device_arch, aot_arch in ((90, 90), (86, 80)):
            launch = _launch(k, False, lambda arch=device_arch: arch)
            constexprs, options = schedule.aot_constants(k, aot_arch)
            blocks = schedule.blocks(k, launch)
            assert blocks == constexprs
            _, _, launch_options = schedule.launch_args(k, launch, blocks)
            assert {"enable_fp_fusion": True} | launch_options == options
