"""`mlirfuse.compile(..., dynamic_shapes=...)`: `?` sizes are kernel arguments; new sizes reuse the kernels."""

from __future__ import annotations

import logging
import math

import pytest
import torch
from torch.export import Dim

import mlirfuse
from mlirfuse.models import MLP, TinyBlock
from mlirfuse.runtime.kernels import LOAD_STATS
from helpers import Lambda


def _varargs(*specs):
    """dynamic_shapes for a `Lambda` (its forward takes *args: one tuple of inputs)."""
    return (specs,)


def _check_sizes(cm, model, shapes, **kwargs):
    """Call `cm` at each shape against eager; no call may compile or load a kernel."""
    loaded = LOAD_STATS["loaded"]
    compiles = cm.guard_stats["compiles"]
    for shape in shapes:
        x = torch.randn(*shape, **kwargs)
        torch.testing.assert_close(cm(x), model(x))
        assert cm.guard_stats["compiles"] == compiles, shape
        assert LOAD_STATS["loaded"] == loaded, shape  # the kernels of the first size serve every size


def test_mlp_dynamic_batch_and_sequence():
    model = MLP(16, 32).eval()
    cm = mlirfuse.compile(model, torch.randn(2, 3, 16), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},))
    assert "?,?,16" in cm.mlir
    assert cm.stats["launches"] >= 2 and not cm.program.aten_kernels  # layer norm, bias+gelu, bias+residual
    cm(torch.randn(2, 3, 16))  # the first call loads the kernels
    _check_sizes(cm, model, [(5, 3, 16), (2, 7, 16), (4, 5, 16)])
    assert cm.guard_stats == {"compiles": 1, "hits": 4, "eager_calls": 0}


def test_gpt2_block_dynamic_batch_and_sequence():
    # The causal mask buffer is sliced [:t, :t]: t must stay below its length (16) for one program to serve all t.
    model = TinyBlock(32, 2, 16).eval()
    cm = mlirfuse.compile(model, torch.randn(2, 8, 32), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq", max=15)},))
    assert cm.stats["launches"] >= 4  # two layer norms, bias + gelu, the residual epilogues
    unfused = {step.name for step in cm.program.steps if step.kind == "aten"}
    assert "torch.aten.softmax.int" not in unfused  # the attention softmax over the `?` keys is a kernel
    cm(torch.randn(2, 8, 32))
    _check_sizes(cm, model, [(3, 8, 32), (2, 5, 32), (1, 11, 32)])
    assert cm.guard_stats["compiles"] == 1


def test_dynamic_kernels_take_sizes_as_arguments():
    model = Lambda(lambda x, b: torch.softmax(x * 2 + b, dim=-1).sum(-1))
    x, b = torch.randn(3, 5, 8), torch.randn(8)
    cm = mlirfuse.compile(model, (x, b), dynamic_shapes=_varargs({0: Dim("n"), 1: Dim("m")}, None))
    (kernel,) = cm.kernels.values()
    assert kernel.dynamic is not None and "[?, ?, 8]" in kernel.source
    for shape in [(3, 5, 8), (6, 2, 8), (1, 9, 8)]:
        x = torch.randn(*shape)
        torch.testing.assert_close(cm(x, b), model(x, b))
    # A non-contiguous input of a new size too: strides are arguments as well.
    xt = torch.randn(4, 7, 8).transpose(0, 1)
    torch.testing.assert_close(cm(xt, b), model(xt, b))
    assert cm.guard_stats["compiles"] == 1


def test_dynamic_kernels_compile_ahead_of_time_for_sm90():
    # The same sources compile for a GPU: sizes are 64-bit arguments there (a `?` may be any size).
    from mlirfuse.runtime.aot import compile_kernels, signature

    model = Lambda(lambda x, b: torch.softmax(x * 2 + b, dim=-1) + torch.relu(x))
    cm = mlirfuse.compile(model, (torch.randn(3, 5, 8), torch.randn(8)), dynamic_shapes=_varargs({0: Dim("n")}, None))
    kernels = list(cm.kernels.values())
    assert kernels and all(k.dynamic is not None for k in kernels)
    assert all(signature(k)["xnumel"] == "i64" for k in kernels)
    reduction = next(k for k in kernels if k.kind.endswith("reduction"))
    (compiled,) = compile_kernels([reduction], arch=90, jobs=1)
    assert compiled.cubin


def test_gemms_over_dynamic_rows_are_kernels():
    # Issue 20 item 6: a linear over `?` batch and sequence rows is the GEMM template with its epilogue (M and
    # the row sizes are arguments), not an ATen call; one compile serves every size, across block boundaries.
    torch.manual_seed(0)
    model = MLP(16, 32).eval()
    cm = mlirfuse.compile(model, torch.randn(2, 3, 16), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},))
    steps = [s.name for s in cm.program.steps if s.kind == "aten" and not s.view]
    assert "torch.aten.linear" not in steps and not cm.program.aten_kernels, steps
    gemms = [k for k in cm.kernels.values() if k.kind == "matmul"]
    assert len(gemms) == 2 and all(k.dynamic is not None and "Rows `?`" in k.source for k in gemms)
    cm(torch.randn(2, 3, 16))
    _check_sizes(cm, model, [(5, 3, 16), (1, 7, 16), (4, 65, 16), (1, 1, 16)])
    with torch.no_grad():
        assert cm(torch.randn(0, 3, 16)).shape == (0, 3, 16)  # no rows: an empty result, no launch
    assert cm.guard_stats["compiles"] == 1


def test_a_gemm_over_dynamic_rows_takes_a_residual_and_bf16():
    torch.manual_seed(0)
    lin = torch.nn.Linear(24, 40).to(torch.bfloat16)
    model = Lambda(lambda x, r: torch.nn.functional.gelu(lin(x)) + r)
    x, r = torch.randn(3, 24, dtype=torch.bfloat16), torch.randn(3, 40, dtype=torch.bfloat16)
    cm = mlirfuse.compile(model, (x, r), dynamic_shapes=_varargs({0: Dim("n")}, {0: Dim("n")}))
    assert [k.kind for k in cm.kernels.values()] == ["matmul"] and cm.stats["unfused_ops"] == 0
    for n in (3, 1, 70):
        x, r = torch.randn(n, 24, dtype=torch.bfloat16), torch.randn(n, 40, dtype=torch.bfloat16)
        with torch.no_grad():  # bf16's tolerances: the default precision keeps the GEMM's result in f32 for gelu
            torch.testing.assert_close(cm(x, r), model(x, r), atol=1e-2, rtol=1.6e-2)


def test_gpt2_block_over_dynamic_batch_and_sequence_keeps_its_gemms_and_attention():
    # Issue 20's acceptance: one compile serves (1, 7), (4, 64), (2, 129) with the GEMMs and the attention as
    # kernels (no ATen matmul), matching eager. The causal mask buffer (160) bounds the sequence.
    torch.manual_seed(0)
    model = TinyBlock(32, 2, 160).eval()
    cm = mlirfuse.compile(model, torch.randn(2, 8, 32), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq", max=159)},))
    aten = {s.name for s in cm.program.flat_steps() if s.kind == "aten" and not s.view}
    assert aten <= {"torch.aten.size.int"}, aten
    kinds = sorted(k.kind for k in cm.kernels.values())
    assert "attention" in kinds and kinds.count("matmul") >= 3, kinds
    assert all(k.dynamic is not None for k in cm.kernels.values() if k.kind in ("attention", "matmul"))
    cm(torch.randn(2, 8, 32))
    _check_sizes(cm, model, [(1, 7, 32), (4, 64, 32), (2, 129, 32)])
    assert cm.guard_stats["compiles"] == 1


def test_sdpa_over_dynamic_lengths_is_one_kernel():
    class Attend(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) * 2

    model = Attend()
    q = torch.randn(2, 3, 5, 16)
    seq = Dim("seq", max=300)
    cm = mlirfuse.compile(model, (q, q.clone(), q.clone()), dynamic_shapes=({0: Dim("b"), 2: seq},) * 3)
    # The attention, then its `* 2` (attention takes no epilogue yet); no ATen call.
    assert [k.kind for k in cm.kernels.values()] == ["attention", "pointwise"] and cm.stats["unfused_ops"] == 0
    assert "? queries, ? keys" in next(iter(cm.kernels.values())).source
    for b, n in ((2, 5), (1, 1), (3, 70), (1, 257)):
        q, k, v = (torch.randn(b, 3, n, 16) for _ in range(3))
        torch.testing.assert_close(cm(q, k, v), model(q, k, v))
    assert cm.guard_stats["compiles"] == 1


def test_a_gemm_over_dynamic_rows_takes_its_tile_rows_from_each_launch():
    # "Block sizes chosen per launch from the actual sizes, within a small compiled set": on a GPU, the rows of
    # the tile follow this launch's M (16 for a 7-token call, the table's 128 for 4 x 64 tokens), and the grid.
    from mlirfuse.lowering.kernel_kinds import Launch, kernel_kind

    model = MLP(16, 32).eval()
    cm = mlirfuse.compile(model, torch.randn(2, 3, 16), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},))
    gemm = next(k for k in cm.kernels.values() if k.kind == "matmul")
    schedule = kernel_kind(gemm.kind)

    def launch(*shape):
        n = math.prod(shape)
        return Launch(False, shape, n, n, 1, lambda: 90, lambda: False, lambda: 8)

    small, big = schedule.blocks(gemm, launch(1, 7, 32)), schedule.blocks(gemm, launch(4, 64, 32))
    assert small["BLOCK_M"] == 16 and big["BLOCK_M"] == 128
    sizes, grid, _ = schedule.launch_args(gemm, launch(4, 64, 32), big)
    assert sizes[0] == 256 and grid == (2 * math.ceil(32 / big["BLOCK_N"]), 1)
    assert schedule.launch_args(gemm, launch(0, 64, 32), big) is None  # no rows: nothing to launch


def test_dynamic_gemm_and_attention_compile_for_sm80_and_sm90():
    from mlirfuse.runtime.aot import compile_kernels, signature

    model = TinyBlock(32, 2, 16).eval()
    cm = mlirfuse.compile(model, torch.randn(2, 8, 32), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq", max=15)},))
    gemm = next(k for k in cm.kernels.values() if k.kind == "matmul")
    attention = next(k for k in cm.kernels.values() if k.kind == "attention")
    assert signature(gemm)["M"] == "i64" and signature(attention)["lq"] == "i64"
    for arch in (80, 90):
        for compiled in compile_kernels([gemm, attention], arch=arch, jobs=1):
            assert compiled.cubin and not compiled.spilled(), (compiled.name, arch)


def test_reductions_over_a_dynamic_dim_loop_over_it():
    # softmax, amax and mean over a `?` row: one looped kernel; rows longer than one RBLOCK too.
    model = Lambda(lambda x: (x.softmax(-1), x.amax(-1), x.mean(-1)))
    cm = mlirfuse.compile(model, torch.randn(3, 6), dynamic_shapes=_varargs({1: Dim("n")}))
    assert [k.kind for k in cm.kernels.values()] == ["reduction"] and cm.stats["unfused_ops"] == 0
    for n in (6, 3, 2500):
        x = torch.randn(3, n)
        for got, want in zip(cm(x), model(x)):
            torch.testing.assert_close(got, want)
    # An empty row: eager's amax raises, and so does the kernel (not -inf).
    with pytest.raises(IndexError, match="empty"):
        cm(torch.randn(3, 0))
    assert cm.guard_stats["compiles"] == 1


def test_dtype_change_recompiles_once():
    model = Lambda(lambda x: torch.relu(x * 3).sum(-1))
    cm = mlirfuse.compile(model, torch.randn(4, 8), dynamic_shapes=_varargs({0: Dim("n")}))
    for n in (4, 6, 2):
        x = torch.randn(n, 8, dtype=torch.float64)
        out = cm(x)
        assert out.dtype == torch.float64
        torch.testing.assert_close(out, model(x))
    # One more compile for float64, itself dynamic: the next float64 sizes are hits.
    assert cm.guard_stats == {"compiles": 2, "hits": 2, "eager_calls": 0}


def test_sizes_outside_the_dims_range_compile_a_static_specialization():
    model = Lambda(lambda x: torch.exp(x) + 1)
    cm = mlirfuse.compile(model, torch.randn(3, 8), dynamic_shapes=_varargs({0: Dim("n", max=4)}))
    for n in (2, 4, 9, 9):
        x = torch.randn(n, 8)
        torch.testing.assert_close(cm(x), model(x))
    assert cm.guard_stats == {"compiles": 2, "hits": 3, "eager_calls": 0}


def test_past_the_bound_runs_eagerly_and_warns(caplog):
    model = Lambda(lambda x: torch.tanh(x) * 2)
    cm = mlirfuse.compile(model, torch.randn(3, 8), dynamic_shapes=_varargs({0: Dim("n")}), max_specializations=1)
    x = torch.randn(5, 8)
    torch.testing.assert_close(cm(x), model(x))  # covered: no new specialization
    x64 = torch.randn(5, 8, dtype=torch.float64)
    with caplog.at_level(logging.WARNING, logger="mlirfuse"), pytest.warns(mlirfuse.RecompileLimitWarning):
        torch.testing.assert_close(cm(x64), model(x64))
    assert cm.guard_stats == {"compiles": 1, "hits": 1, "eager_calls": 1}


def test_strict_serves_covered_sizes_and_raises_on_others():
    model = Lambda(lambda x: torch.sigmoid(x) - 1)
    cm = mlirfuse.compile(model, torch.randn(3, 8), dynamic_shapes=_varargs({0: Dim("n")}), strict=True)
    x = torch.randn(7, 8)
    torch.testing.assert_close(cm(x), model(x))
    with pytest.raises(mlirfuse.InputMismatchError):
        cm(torch.randn(7, 9))


# A kernel no fusion pass builds: zeros_like reads its input for the shape only, so no loaded
# input has the `?` size and the launcher could not size the kernel at call time.
_UNSIZABLE = """
"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[?,8],f32>, %b: !torch.vtensor<[8],f32>):
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int1 = torch.constant.int 1
  %0 = torch.aten.zeros_like %a, %none, %none, %none, %false, %none : !torch.vtensor<[?,8],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,8],f32>
  %1 = torch.aten.add.Tensor %0, %b, %int1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
  "fusion.yield"(%1) : (!torch.vtensor<[?,8],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()
func.func @forward(%x: !torch.vtensor<[?,8],f32>, %b: !torch.vtensor<[8],f32>, %c: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) {
  %0 = "fusion.launch"(%x, %b) {kernel = @k} : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[?,8],f32>
  %1 = "fusion.launch"(%x, %c) {kernel = @k} : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[?,8],f32>
  return %0, %1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>
}
"""


def test_kernel_the_lowering_cannot_size_runs_as_aten_ops():
    from mlirfuse.dialect import make_context
    from mlirfuse.ir import ir
    from mlirfuse.runtime.program import Program

    with make_context():
        module = ir.Module.parse(_UNSIZABLE)
        func = next(op for op in module.body.operations if op.operation.name == "func.func")
        program = Program(func, module)
    assert "not a dim of any input it loads" in program.aten_kernels["k"]
    assert not any(step.kind == "launch" for step in program.steps)
    b, c = torch.randn(8), torch.randn(8)
    for n in (3, 5):
        x = torch.randn(n, 8)
        first, second = program.run([x, b, c])  # each launch has its own values: the second does not overwrite the first
        torch.testing.assert_close(first, b.expand(n, 8))
        torch.testing.assert_close(second, c.expand(n, 8))


# The same kernel scaling its result by a scalar argument (fusion-outline's lift-constants), launched with 2 and -3.
_UNSIZABLE_SCALED = _UNSIZABLE.replace(
    '"fusion.yield"(%1) : (!torch.vtensor<[?,8],f32>) -> ()',
    "%s = torch.constant.float 2.0 {fusion.scalar = 0 : i64}\n"
    "  %2 = torch.aten.mul.Scalar %1, %s : !torch.vtensor<[?,8],f32>, !torch.float -> !torch.vtensor<[?,8],f32>\n"
    '  "fusion.yield"(%2) : (!torch.vtensor<[?,8],f32>) -> ()',
).replace("{kernel = @k}", "{kernel = @k, scalars = array<f64: 2.0>}", 1).replace("{kernel = @k}", "{kernel = @k, scalars = array<f64: -3.0>}")


def test_kernel_run_as_aten_ops_takes_each_launchs_scalar_arguments():
    from mlirfuse.dialect import make_context, verify_fusion_ops
    from mlirfuse.ir import ir
    from mlirfuse.runtime.program import Program

    with make_context():
        module = ir.Module.parse(_UNSIZABLE_SCALED)
        assert verify_fusion_ops(module.operation)
        func = next(op for op in module.body.operations if op.operation.name == "func.func")
        program = Program(func, module)
    assert "k" in program.aten_kernels
    x, b, c = torch.randn(3, 8), torch.randn(8), torch.randn(8)
    first, second = program.run([x, b, c])
    torch.testing.assert_close(first, (b * 2).expand(3, 8))
    torch.testing.assert_close(second, (c * -3).expand(3, 8))


def test_bad_dynamic_shapes_is_an_error_naming_the_dim():
    model = Lambda(lambda x: x[:4] * 2)  # slicing at 4 specializes the size
    with pytest.raises(mlirfuse.UnsupportedModelError, match="n"):
        mlirfuse.compile(model, torch.randn(8, 3), dynamic_shapes=_varargs({0: Dim("n", max=3)}))


def test_question_mark_sizes_that_broadcast_at_run_time_are_refused():
    # Hand-written IR (not torch.export's): two `?` rows the fuser takes to be one size.
    from mlirfuse.compiler import run_pipeline
    from mlirfuse.dialect import make_context
    from mlirfuse.ir import ir
    from mlirfuse.runtime.program import Program

    text = """
    func.func @f(%x: !torch.vtensor<[?,8],f32>, %y: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
      %int1 = torch.constant.int 1
      %0 = torch.aten.add.Tensor %x, %y, %int1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
      %1 = torch.aten.exp %0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
      return %1 : !torch.vtensor<[?,8],f32>
    }"""
    context = make_context()
    with context:
        module = ir.Module.parse(text)
    run_pipeline(module, context)
    func = next(op for op in module.body.operations if op.operation.name == "func.func")
    program = Program(func, module)
    assert [s.kind for s in program.steps] == ["launch"]
    x, y = torch.randn(5, 8), torch.randn(5, 8)
    torch.testing.assert_close(program.run([x, y])[0], torch.exp(x + y))
    with pytest.raises(ValueError, match="may not broadcast"):
        program.run([torch.randn(1, 8), y])
