"""Issue 21's classes found by inputs nobody here wrote, each against eager PyTorch.

Each test failed before its fix (the message says how).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from helpers import Lambda, compile_and_compare, gpu_launch_specializations


@pytest.mark.parametrize(
    "shapes",
    [((8, 16), (16, 32)), ((2, 8, 16), (2, 16, 32)), ((2, 8, 16), (16, 32))],
    ids=["mm", "bmm", "broadcast_b"],
)
def test_gemm_b_prologue_reads_a_0d_tensor(shapes):
    # k / sqrt(scale) as a GEMM's B prologue, scale 0-d (a transformer encoder's key scaling): the scalar
    # was loaded in A's [1, BLOCK_K] orientation beside B's [BLOCK_K, BLOCK_N] tile, "Cannot
    # make_shape_compatible: incompatible dimensions at index 1: 32 and 16" at run time.
    q, k = (torch.randn(s) for s in shapes)
    cm = compile_and_compare(lambda q, k, s: torch.matmul(q, k / torch.sqrt(s)), (q, k, torch.tensor(4.0)))
    assert cm.stats["launches"] == 1, cm.mlir


def test_linear_weight_prologue_reads_a_0d_tensor():
    # The transposed-B form (linear's [N, K] weight) with the same 0-d scalar.
    x, w = torch.randn(8, 16), torch.randn(32, 16)
    compile_and_compare(lambda x, w, s: F.linear(x, w * s), (x, w, torch.tensor(0.5)))


@pytest.mark.parametrize("grad_dtype", [torch.int64, torch.int32, torch.bool], ids=str)
def test_threshold_backward_promotes_like_eager(grad_dtype):
    # torch._decomp's where(x <= t, 0, grad) kept the gradient's dtype: int64 where eager gives float32.
    grad = torch.randint(-3, 3, (4, 5)).to(grad_dtype)
    x = torch.randn(4, 5)
    cm = compile_and_compare(lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.5), (grad, x))
    assert cm(grad, x).dtype == torch.float32


@pytest.mark.parametrize("grad_dtype", [torch.int64, torch.bool], ids=str)
def test_threshold_backward_promotes_like_eager_where_it_is_read(grad_dtype):
    # Fuzz seed 2780425: torch's meta function types threshold_backward as its gradient (int64) and the trace
    # asserts that dtype where the result is read (here by a cast): the result came out int64, eager's bfloat16.
    grad = torch.randint(-3, 3, (4, 5)).to(grad_dtype)
    x = torch.randn(1, 5).to(torch.bfloat16)

    def fn(g, x):
        v = torch.ops.aten.threshold_backward(g, x, 0)
        return torch.reciprocal(v.float()), v

    cm = compile_and_compare(fn, (grad, x))
    assert cm(grad, x)[1].dtype == torch.bfloat16


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda x, y: torch.cat([x[:, 5:5].exp(), y * 2], 1), [(3, 7), (3, 4)]),
        (lambda x, y: torch.cat([x[:, :, 8:], y + 1], 2), [(2, 3, 7), (2, 3, 4)]),
        (lambda x, y: torch.cat([x, y.sin()], 0), [(0, 4), (3, 4)]),
        (lambda x, y: torch.cat([y.sin(), x * 3], 1), [(3, 0), (3, 4)]),
    ],
    ids=["empty_slice", "slice_past_end", "empty_input", "empty_computed_last"],
)
def test_cat_with_an_empty_piece(fn, shapes):
    # The concat kernel's masked-in lanes loaded from the empty piece: under MLIRFUSE_CHECK_BOUNDS=1
    # (tests/conftest.py) "12 masked-in lanes load from outside in0 ... 0 bytes", SIGSEGV without it.
    compile_and_compare(fn, tuple(torch.randn(s) for s in shapes), fused=False)


# --- precision="eager" (item 8) -------------------------------------------------------------------

CHAINS = {
    "arith": lambda x, y: (x * y + x) / (y - 3.0) * 1.7,
    "gelu_is_x": lambda x, y: (F.gelu(x) == x).to(x.dtype) + x,  # the rounding points
    "near_tie_where": lambda x, y: torch.where(x * 1.1 < y * 0.9, x + y, x - y),
    "transcendental": lambda x, y: torch.tanh(x.exp() * y).sigmoid() + F.silu(y),
    # Composite ops eager rounds inside (fuzz seeds 2750077, 2750142: bf16 pow(x, 3) is x*x rounded, times x)
    # or not at all (2750712: an f16 inference batch norm is one fma of f32 per-channel factors).
    "pow": lambda x, y: torch.pow(x * 3, 3) - torch.pow(y, -2) + torch.pow(x, 2),
    "batch_norm": lambda x, y: F.batch_norm(x * x - 0.3, y[0] * 2, y[1].abs() + 0.1, y[2], y[3], training=False),
    "addcmul": lambda x, y: torch.addcmul(x, y, x * 3, value=-0.7),
    # Python numbers no f16/bf16 can hold: ATen's CPU add/sub/rsub/fmod/remainder round them (and alpha) to
    # the tensor's dtype first, mul and div do not.
    "scalars": lambda x, y: (0.1 - (x + 0.1) * 1.7 / 0.3) + torch.fmod(y, 0.3) + torch.add(x, y, alpha=0.3),
}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("chain", list(CHAINS))
def test_precision_eager_pointwise_chains_equal_eager(chain, dtype):
    # One kernel either way; in the fast mode (default) f16/bf16 intermediates stay in f32, so the
    # chains differ from eager at rounding points; precision="eager" rounds each op's result.
    torch.manual_seed(0)
    x, y = torch.randn(64, 65).to(dtype), torch.randn(64, 65).to(dtype)
    fn = CHAINS[chain]
    cm = mlirfuse.compile(Lambda(fn), (x, y), options={"precision": "eager"})
    assert cm.stats["launches"] == 1 and 'precision = "eager"' in cm.mlir
    assert torch.equal(cm(x, y), fn(x, y))


def test_precision_eager_f16_pow_follows_the_device():
    # ATen's f16 pow(x, 3) is std::pow on CPU (one rounding) but multiplies c10::Half values on CUDA (x * x
    # rounded first): the kernel asks where it runs (interpreted: CPU tensors), and the chains test above
    # holds the CPU branch to eager here.
    x = torch.randn(8).to(torch.float16)
    cm = mlirfuse.compile(Lambda(lambda x: torch.pow(x, 3)), (x,), options={"precision": "eager"})
    (source,) = [k.source for k in cm.kernels.values()]
    assert "half_square(" in source and "def on_cpu" in source


def test_precision_fast_is_the_default_and_differs():
    # The test above could pass by accident if the modes were the same: the default differs somewhere.
    torch.manual_seed(0)
    x, y = torch.randn(64, 65).to(torch.bfloat16), torch.randn(64, 65).to(torch.bfloat16)
    cm = mlirfuse.compile(Lambda(CHAINS["arith"]), (x, y))
    assert "precision" not in cm.mlir and not torch.equal(cm(x, y), CHAINS["arith"](x, y))


def test_precision_rejects_an_unknown_mode():
    x = torch.randn(4).to(torch.bfloat16)
    with pytest.raises(mlirfuse.PipelineError, match="precision.*fast, eager.*'exact'"):
        mlirfuse.compile(Lambda(torch.exp), (x,), options={"precision": "exact"})


def test_pad_by_nothing_of_a_computed_value():
    # Fuzz seed 2610451: F.pad(sgn(x), [0, 0]) read sgn only through a pad that pads by nothing; the
    # value was looked up where it had not been emitted: "LoweringError: ... 'torch.aten.pad' of a constant".
    compile_and_compare(lambda x: F.pad(torch.sgn(x), [0, 0], value=0.0), (torch.randn(2),))
    compile_and_compare(lambda x: F.pad(x.exp() * 2, [0, 0, 1, 0]), (torch.randn(3, 4),))


# Found with real launches on an H100 (bench/gpu.py, MLIRFUSE_FUZZ_DEVICE=cuda): what compiled code does
# differently from the interpreter.


def test_bf16_cast_keeps_a_gpu_nan():
    # A GPU's canonical NaN is 0x7FFFFFFF; the round-to-nearest-even carry of round_to_bf16 turned it
    # into 0x8000 (-0.0) and its negative into +0.0 (fuzz seeds 2620012, 2620035: "got -0.0, eager nan").
    bits = torch.tensor([0x7FFFFFFF, -1, 0x7FC00000, 0x7F800000, 0x3F800001], dtype=torch.int32)
    x = bits.view(torch.float32)
    cm = compile_and_compare(lambda x: (x * 2).to(torch.bfloat16), (x,), equal_nan=True)
    assert cm.stats["launches"] == 1
    got = cm(x)
    assert torch.isnan(got[:3]).all(), got


@pytest.mark.parametrize(
    "fn, helper",
    [
        (lambda a, b: torch.div(a, b, rounding_mode="trunc"), "tl.math.div_rn"),  # x / x was 0.99999994: trunc 0
        (lambda a, b: a / b, "tl.math.div_rn"),
        (lambda a, b: torch.fmod(a, b), "def fmod("),  # fmod(-3, -3) was +0.0
    ],
    ids=["trunc_div", "true_div", "fmod"],
)
def test_division_is_ieee_and_fmod_keeps_the_dividends_sign(fn, helper):
    # Compiled Triton divides f32 with div.full.f32 (2 ulp) and takes a float `%` as +0.0 for a
    # negative dividend; the interpreter (numpy) does neither, so the kernel's source is what is
    # checked here, the values against eager as everywhere.
    a = torch.tensor([3.0, -3.0, 7.0, -0.0, 0.1, 1e-30, -5.5, 2.0])
    b = torch.tensor([3.0, -3.0, 7.0, 2.0, 0.1, 1e-30, 5.5, -0.0])
    cm = compile_and_compare(fn, (a, b), equal_nan=True)
    assert torch.equal(cm(a, b).signbit(), fn(a, b).signbit())
    source = "".join(k.source for k in cm.kernels.values())
    assert helper in source, source


def test_a_0d_cpu_tensor_runs_on_the_other_inputs_device():
    # index_put's value torch.tensor(-2) is a CPU constant beside CUDA inputs; a kernel whose first input
    # it was ran on the CPU ("Pointer argument cannot be accessed from Triton (cpu tensor?)", seed 2620056).
    from mlirfuse.runtime.kernels import _launch_device

    scalar, meta = torch.tensor(2.0), torch.empty(3, device="meta")
    assert _launch_device([scalar, meta], None) == meta.device
    assert _launch_device([scalar], None).type == "cpu"
    assert _launch_device([], "meta").type == "meta"


def test_compiled_mode_launches_skip_the_swap_unless_an_interpreted_launch_leaked(tmp_path):
    # On a GPU the swap and restore of triton.language cost more host time than the launch (profiled:
    # ~150 us per kernel); they are skipped while Triton is as imported in compiled mode.
    script = tmp_path / "probe.py"
    script.write_text(
        "import torch, triton, triton.language as tl\n"
        "from mlirfuse.runtime.triton_mode import already_compiled, triton_mode\n"
        "assert already_compiled()\n"
        "@triton.jit\n"
        "def k(x):\n"
        "    tl.store(x + tl.arange(0, 4), tl.sum(tl.load(x + tl.arange(0, 4))))\n"
        "with triton_mode(True):\n"
        "    assert not already_compiled()\n"
        "    from triton.runtime.interpreter import InterpretedFunction\n"
        "    InterpretedFunction(k.fn)[(1,)](torch.ones(4))\n"
        "assert already_compiled(), 'the interpreted launch was not undone'\n"
        "tl.core.tensor.__index__ = lambda self: 0  # what a launch outside triton_mode leaves behind\n"
        "assert not already_compiled()\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "ok", out.stderr[-3000:]


# 64-bit indices in the templates (issue 21 item 5): a GEMM, a back-to-back GEMM pair and attention over
# tensors past 2^31 - 1 elements index in int64 (lit: Lowering/triton-int64-offsets.mlir). Such tensors do not
# fit this machine's interpreter, so the threshold is lowered: small problems then take the int64 form, which
# must still equal eager; before, the GEMM template had no int64 form (it refused the GEMM) and attention
# indexed in int32 at any size.
class _Wide(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = torch.nn.Linear(16, 32), torch.nn.Linear(32, 16)

    def forward(self, x, q, k, v):
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.down(torch.relu(self.up(x))) + 1.0, torch.bmm(x.unsqueeze(0), self.up.weight.t().unsqueeze(0)), a * 2.0


def test_templates_index_in_int64_past_int32(monkeypatch):
    from mlirfuse.lowering import emitter

    monkeypatch.setattr(emitter, "INT32_MAX", 100)
    torch.manual_seed(0)
    model = _Wide().eval()
    inputs = (torch.randn(24, 16), torch.randn(2, 2, 12, 8), torch.randn(2, 2, 12, 8), torch.randn(2, 2, 12, 8))
    cm = mlirfuse.compile(model, inputs)
    kinds = {k.kind for k in cm.kernels.values() if "to(tl.int64)" in k.source}
    assert {"matmul", "matmul-chain", "attention"} <= kinds, {k.name: k.kind for k in cm.kernels.values()}
    for actual, expected in zip(cm(*inputs), model(*inputs)):
        torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)


def test_a_dynamic_kernel_picks_64_bit_offsets_per_launch(monkeypatch):
    # Kernels over `?` sizes indexed in int32 whatever the sizes at run time (issue 21 item 5); now their
    # `WIDE` constexpr is set per launch from the tensors it touches.
    from mlirfuse.lowering import emitter
    from mlirfuse.runtime.kernels import needs_wide

    meta = torch.empty(2**31, device="meta")
    assert not needs_wide(1024, [torch.empty(4, 4, device="meta")])
    assert needs_wide(1024, [meta]) and needs_wide(2**31, [])
    assert needs_wide(16, [meta.as_strided((2, 2), (2**31 - 1, 1))])  # few elements, far apart
    assert not needs_wide(16, [meta[:10].expand(4, 10)]) and not needs_wide(0, [meta[:0]])

    batch = torch.export.Dim("batch", min=2, max=64)
    class Model(torch.nn.Module):
        def forward(self, x, w):
            return torch.nn.functional.gelu(x + w).softmax(-1)

    model, w = Model(), torch.randn(16)
    cm = mlirfuse.compile(model, (torch.randn(8, 16), w), dynamic_shapes=({0: batch}, None))
    assert all("WIDE: tl.constexpr" in k.source for k in cm.kernels.values())
    monkeypatch.setattr(emitter, "INT32_MAX", 100)  # 4 x 16 stays narrow, 24 x 16 takes the int64 form
    for rows in (4, 24):
        x = torch.randn(rows, 16)
        torch.testing.assert_close(cm(x, w), model(x, w))


def _compiled_for_gpus(fn, *inputs):
    """Every kernel of `fn` compiled for sm_80 and sm_90 as a GPU launch would take it (blocks, warps, and the
    launch's specialization: strides of 1 and 16-divisible sizes)."""
    from mlirfuse.runtime.aot import compile_kernels

    model = Lambda(fn)
    cm = compile_and_compare(model, inputs)
    return [c for arch in (80, 90) for c in compile_kernels(list(cm.kernels.values()), arch=arch,
                                                            specialized=gpu_launch_specializations(cm, model, arch))]


def _rope_cos_sin(inv_freq, x):
    """A Llama-style rotary embedding's cos and sin (positions times frequencies, the halves repeated)."""
    freqs = torch.arange(x.shape[1], dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat([freqs, freqs], -1)
    return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


@pytest.mark.parametrize(
    "fn, inputs",
    [
        # 8 int64 values a thread (a 1024 block on 4 warps) spilled 8 bytes on sm_90 (fuzz seed 2720008, --aot)
        (lambda x, s, y: torch.bitwise_right_shift(x, s) != y,
         (torch.randint(-5, 6, (32, 64)), torch.randint(0, 8, (1, 1)), torch.randint(-5, 6, (32, 64)))),
        # integer pow unrolled 63 squarings: 254 registers and 32 bytes of spills on sm_90 (seeds 2720103, 2730151)
        (lambda x, y: torch.pow(x, y), (torch.randint(-5, 6, (3, 2, 3, 4)), torch.randint(0, 8, (3, 2, 1, 1)))),
        # a 32 x 16 f32 GEMM tile on 1 warp spilled 24 bytes on sm_90 (seed 2720160)
        (lambda a, b: (a @ b, (a @ b).clone()), (torch.randn(4, 8, 3), torch.randn(3, 5))),
        # RoPE's cos and sin, 4 elements a thread: 40 registers and 4 bytes of spills on sm_80 as launched
        # (bench/spills.py --zoo: every Llama-style decoder); 2 a thread (kernel_kinds.SIN_COS_PER_THREAD)
        (_rope_cos_sin, (1.0 / 10000 ** (torch.arange(0, 64, 2).float() / 64), torch.randn(1, 16, 8, dtype=torch.bfloat16))),
    ],
)
def test_kernels_compile_for_sm80_and_sm90_without_spills(fn, inputs):
    for compiled in _compiled_for_gpus(fn, *inputs):
        assert not compiled.spilled(), (compiled.name, compiled.arch, compiled.resources())


def test_a_stack_frame_of_local_arrays_is_no_spill():
    # libdevice's f32 sin keeps a local array for its large-argument reduction (fuzz seed 2720147): a stack
    # frame on sm_80, ptxas reports no spill store or load; the fuzzer and bench/spills.py count spills only.
    compiled = _compiled_for_gpus(lambda x: torch.sin(torch.floor_divide(x, torch.maximum(x, torch.tensor(-1.5))).float()),
                                  torch.randn(4, 4, dtype=torch.bfloat16))
    usage = [c.resources() for c in compiled]
    assert any(u["stack"] for u in usage)
    assert all(u["spill_stores"] == 0 and u["spill_loads"] == 0 for u in usage)
    assert not any(c.spilled() for c in compiled)


@pytest.mark.parametrize("fn", [torch.fmin, torch.fmax], ids=["fmin", "fmax"])
def test_fmin_fmax_of_equal_zeros_give_the_first_operand_as_eager(fn):
    # Fuzz seed 2750020: fmin(+0.0, -0.0) was -0.0; eager gives the first operand (scalar and vector loops).
    x = torch.tensor([0.0, -0.0, 1.0, float("nan"), 2.0, -0.0] * 8)
    y = torch.tensor([-0.0, 0.0, float("nan"), 1.0, 2.0, -0.0] * 8)
    expected = fn(x, y)
    actual = mlirfuse.compile(Lambda(fn), (x, y))(x, y)
    assert torch.equal(actual, expected) and torch.equal(actual.signbit(), expected.signbit())
