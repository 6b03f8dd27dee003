"""The frontend's decompositions (frontend/decompositions.py), against eager PyTorch.

Composite ops Inductor decomposes and mlirfuse does not handle whole are
decomposed before import, so they fuse; ops mlirfuse handles whole stay whole;
a graph without such an op is exported as before, without Inductor's table.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from mlirfuse.frontend.decompositions import native_ops, table_for, torch_mlir_name
from mlirfuse.frontend.importer import import_module, trace
from helpers import Lambda, compile_and_compare, unfused_ops


def imported_text(fn, inputs) -> str:
    return str(import_module(Lambda(fn), inputs).module)


def copy_into(x, y):
    x = x.clone()
    x.copy_(y)
    return x + 1


def write_column(x, y):
    x = x.clone()
    x[:, 1] = y
    return x * 2


CASES = {
    # op (as imported without the table) -> (function, inputs, what it imports as instead)
    "vector_norm": (lambda x: torch.linalg.vector_norm(x, dim=1) * 2, (torch.randn(3, 5),), "torch.aten.linalg_vector_norm"),
    "norm_inf": (lambda x: torch.linalg.vector_norm(x, ord=float("inf")), (torch.randn(4, 4),), "torch.aten.linalg_vector_norm"),
    "divide_subtract_multiply": (
        lambda x, y: torch.subtract(torch.divide(x, y), torch.multiply(x, 3), alpha=2), (torch.randn(4, 3), torch.rand(4, 3) + 1),
        "torch.aten.divide",
    ),
    "rsub_tensor": (lambda x, y: torch.rsub(x, y, alpha=3) + 1, (torch.randn(2, 6), torch.randn(2, 6)), "torch.aten.rsub"),
    "round_decimals": (lambda x: torch.round(x * 10, decimals=2) - 1, (torch.randn(5, 3),), "torch.aten.round.decimals"),
    "log_sigmoid": (lambda x: F.logsigmoid(x) * x, (torch.randn(4, 8) * 5,), "torch.aten.log_sigmoid"),
    "pairwise_distance": (lambda x, y: F.pairwise_distance(x, y), (torch.randn(4, 6), torch.randn(4, 6)), "torch.aten.pairwise_distance"),
    "huber_loss": (lambda x, y: F.huber_loss(x, y, delta=0.5), (torch.randn(3, 7), torch.randn(3, 7)), "torch.aten.huber_loss"),
    "broadcast_tensors": (
        lambda x, y: sum(torch.broadcast_tensors(x, y)) * 2, (torch.randn(3, 1), torch.randn(1, 4)), "torch.aten.broadcast_tensors",
    ),
    # Ops Inductor lowers directly, decomposed with torch._decomp's decompositions:
    "repeat": (lambda x: x.repeat(2, 3) * 2, (torch.randn(2, 3),), "torch.aten.repeat"),
    "any_dim": (lambda x: (x > 0).any(1), (torch.randn(2, 3),), "torch.aten.any"),
    "all": (lambda x: (x > 0).all(), (torch.randn(2, 3),), "torch.aten.all"),
    "glu": (lambda x: F.glu(x, -1) + 1, (torch.randn(2, 4),), "torch.aten.glu"),
    "unsafe_index": (
        lambda x, i: torch.ops.aten._unsafe_index(x, [i]) * 2, (torch.randn(4, 3), torch.tensor([0, 2, 0])),
        "torch.aten._unsafe_index",
    ),
    # ... and ours: copy (an in-place copy_ functionalized) as cast, expand and clone.
    "copy_broadcast_cast": (copy_into, (torch.randn(3, 4), torch.randn(4).double()), "torch.aten.copy"),
    "copy_into_slice": (write_column, (torch.randn(3, 4), torch.randn(3)), "torch.aten.copy"),
    "bf16_vector_norm": (
        lambda x: torch.linalg.vector_norm(x, dim=-1), (torch.randn(4, 16).to(torch.bfloat16),), "torch.aten.linalg_vector_norm",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_decomposed_op_fuses_and_matches_eager(case):
    fn, inputs, whole = CASES[case]
    tol = dict(rtol=1.6e-2, atol=1e-2) if inputs[0].dtype == torch.bfloat16 else {}
    cm = compile_and_compare(fn, inputs, **tol)
    assert whole not in cm.mlir, cm.mlir


def test_to_copy_to_its_own_device_is_a_fused_cast():
    x = torch.randn(3, 4)
    cm = compile_and_compare(lambda x: x.to("cpu", torch.float64) * 2, (x,), op="torch.aten.mul")
    assert cm(x).dtype == torch.float64


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda x: x.fill_(True) * 1, id="fill_true"),
        pytest.param(lambda x: torch.full((3,), True, dtype=torch.bool) & (x > 0), id="full_true"),
        pytest.param(lambda x: torch.ne(x > 0, False).float() + 1, id="ne_false"),
    ],
)
def test_bool_scalar_is_a_constant(fn):
    # aten.Int.bool of a bool literal is no constant to the rules; the frontend passes 0 / 1 where only the value counts.
    compile_and_compare(fn, (torch.randn(3),))


def test_bool_scalar_that_decides_the_dtype_stays():
    # full(..., True) without a dtype is a bool tensor because the value is a bool: left alone, and still right.
    compile_and_compare(lambda x: torch.full((3,), True) & (x > 0), (torch.randn(3),), fused=False)


def test_ops_fused_whole_stay_whole():
    # softmax, layer_norm and gelu are expanded by fusion-decompose / fused by their rules, not by Inductor's table.
    w = torch.randn(8)
    fn = lambda x: F.gelu(F.layer_norm(torch.softmax(x, -1), (8,), w)) + torch.linalg.vector_norm(x)  # noqa: E731
    text = imported_text(fn, (torch.randn(2, 8),))
    for op in ("torch.aten.softmax.int", "torch.aten.layer_norm", "torch.aten.gelu"):
        assert op in text, text
    assert "torch.aten.linalg_vector_norm" not in text


def test_table_is_empty_without_a_composite_op():
    model = Lambda(lambda x, w: torch.softmax(F.linear(x, w).relu(), -1).sum(0))
    program = trace(model, (torch.randn(2, 4), torch.randn(3, 4)))
    assert table_for(program.graph_module.graph) == {}


def test_in_place_composite_op_is_decomposed():
    def fn(x, y):
        x = x.clone()
        x.divide_(y)
        return x * 2

    text = imported_text(fn, (torch.randn(3, 3), torch.rand(3, 3) + 1))
    assert "torch.aten.divide" not in text and "torch.aten.div.Tensor" in text, text


def test_native_ops_are_torch_mlir_names():
    assert torch_mlir_name(torch.ops.aten.add.Tensor) == "torch.aten.add.Tensor"
    assert torch_mlir_name(torch.ops.aten.relu.default) == "torch.aten.relu"
    assert {"torch.aten.add.Tensor", "torch.aten.relu", "torch.aten._softmax", "torch.aten.cat"} <= native_ops()


def test_failing_decomposition_leaves_the_op_whole():
    # linalg_lu_factor decomposes into an effectful error check torch-mlir cannot import: the op stays an ATen call.
    a = torch.randn(3, 3) + 3 * torch.eye(3)
    model = Lambda(lambda a: torch.linalg.lu_factor(a)[0] * 1)
    cm = mlirfuse.compile(model, (a,))
    torch.testing.assert_close(cm(a), model(a))
    assert any("lu_factor" in op for op in unfused_ops(cm)), cm.mlir


def test_plain_model_does_not_import_inductor():
    # No composite op to decompose: no import of Inductor's table, no extra cost.
    code = textwrap.dedent(
        """
        import sys, torch, mlirfuse
        m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU(), torch.nn.LayerNorm(4))
        mlirfuse.compile(m.eval(), (torch.randn(2, 4),))
        print("torch._inductor.decomposition" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout + out.stderr


def test_dynamo_graph_decomposes_like_export():
    from mlirfuse.backend import Backend

    torch._dynamo.reset()
    ours = Backend()
    fn = lambda x: torch.linalg.vector_norm(x, dim=-1) + torch.round(x, decimals=1).sum(-1)  # noqa: E731
    x = torch.randn(3, 6)
    with torch.no_grad():
        actual = torch.compile(fn, backend=ours, dynamic=False)(x)
    torch._dynamo.reset()
    torch.testing.assert_close(actual, fn(x))
    (record,) = ours.graphs
    assert record.stats["unfused_ops"] == 0 and record.stats["launches"] >= 1, record.graph.mlir


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_training_batch_norm_is_decomposed_after_functionalization(dtype):
    # batch_norm(training=True) becomes _native_batch_norm_legit_functional only when export makes the
    # graph functional: a second pass decomposes it (its running stats are f32 to the tracer, bf16 in eager).
    x = torch.randn(4, 3, 5).to(dtype)
    stats = [torch.randn(3).to(dtype), torch.rand(3).to(dtype) + 0.5]
    w, b = torch.randn(3).to(dtype), torch.randn(3).to(dtype)

    def fn(x, mean, var, w, b):
        return F.batch_norm(x, mean, var, w, b, training=True, momentum=0.3, eps=1e-3) * 2

    tol = dict(rtol=1.6e-2, atol=2e-2) if dtype == torch.bfloat16 else {}
    model = Lambda(fn)
    eager_stats = [t.clone() for t in stats]
    expected = model(x, *eager_stats, w, b)
    cm = mlirfuse.compile(model, (x, *[t.clone() for t in stats], w, b))
    ours = [t.clone() for t in stats]
    torch.testing.assert_close(cm(x, *ours, w, b), expected, **tol)
    for got, want in zip(ours, eager_stats):  # the running stats, updated in place as eager does
        torch.testing.assert_close(got, want, **tol)
    assert "_native_batch_norm" not in cm.mlir and cm.stats["unfused_ops"] == 0, unfused_ops(cm)
