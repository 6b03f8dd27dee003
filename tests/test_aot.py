"""Generated kernels compile for real GPUs (sm_80, sm_90) with the Triton compiler.

The interpreter accepts some programs the compiler rejects (types, constexpr
use), so every kernel shape we emit is also compiled ahead of time here, in
worker subprocesses, without a GPU.
"""

import pytest
import torch

import mlirfuse
from mlirfuse.runtime.aot import compile_kernels, signature
from helpers import Lambda


@pytest.fixture(scope="module")
def kernels():
    """The kernels of every model below, compiled once for the module (the tests only read them)."""
    torch.manual_seed(0)
    x = torch.randn(4, 16)
    h = torch.randn(4, 16, dtype=torch.float16)
    m = torch.rand(4, 16) > 0.5
    models = [
        (lambda a, b: torch.sigmoid(torch.tanh(torch.relu(a * b + 1))), (x, x)),  # chain
        (lambda a, b: torch.nn.functional.gelu(a + b, approximate="tanh"), (x, torch.randn(16))),  # broadcast
        (lambda a: (a * 2).relu().to(torch.float32), (h,)),  # f16 compute in f32
        (lambda a, k: a.masked_fill(~k, float("-inf")).clamp(min=-1.0), (x, m)),  # bool, -inf scalar
        (lambda a: (a > 0.5) & (a < 2.0), (x,)),  # bool result
        (lambda a, b: torch.sigmoid((a + b).chunk(2, 1)[0]) * torch.tanh((a + b).chunk(2, 1)[1]), (x, x)),  # slices
        (lambda a: torch.softmax(a, -1), (x,)),  # persistent reduction
        (lambda a: torch.softmax(a, -1), (x.to(torch.bfloat16),)),  # bf16 result: round_to_bf16 helper
        (lambda a, b: torch.relu(a.view(4, 4, 4).transpose(0, 1)) * b, (x, torch.randn(4, 4, 4))),  # view sites
        (lambda a, b: torch.cat([torch.exp(a), torch.neg(b)], 1), (x, torch.randn(4, 8))),  # concat exit
        # pads and cats of computed values: where with a NaN pad value, a bool pad, circular, a computed cat piece
        (
            lambda a, b: (
                torch.nn.functional.pad(a.exp(), (1, 2), value=float("nan")) * 2,
                torch.nn.functional.pad(a > 0, (2, 1), value=1.0) & (b > 0),
                torch.nn.functional.pad(a.cos(), (3, 0), mode="circular") + torch.cat([a.sin(), b[:, :3]], 1),
            ),
            (x, torch.randn(4, 19)),
        ),
        (lambda a: torch.max(a, 1), (x,)),  # argmax: tl.reduce over (value, index) pairs
        (lambda a: a.prod(1), (x,)),  # prod: tl.reduce with a multiply helper
        # indexing (lowering/indexing.py): a gather at int64 offsets, an atomic scatter, creation from coordinates
        (lambda i, w: torch.nn.functional.embedding(i, w) * 2, (torch.randint(0, 4, (2, 3)), x)),
        (lambda a, i, v: torch.index_put(a, (i,), v.relu(), accumulate=True), (x, torch.tensor([0, -1]), x[:2])),
        (lambda a: a.masked_fill(torch.ones(4, 16, dtype=torch.bool).triu(1), 0.0).softmax(-1) + torch.arange(16), (x,)),
        # pools (lowering/pooling.py): window loops carrying (value, int64 index), a bf16 window prologue; upsampling
        (lambda a: torch.nn.functional.max_pool2d(torch.relu(a + 1), 3, 2, 1, return_indices=True),
         (x.view(1, 2, 4, 8).to(torch.bfloat16),)),
        (lambda a: torch.nn.functional.adaptive_avg_pool2d(a, (3, 5)) + torch.nn.functional.interpolate(a, size=(3, 5)),
         (x.view(1, 2, 4, 8),)),
    ]
    kernels = []
    for fn, inputs in models:
        kernels.extend(mlirfuse.compile(Lambda(fn), inputs).kernels.values())
    return kernels + wide_kernels()


# Kernels over more than 2^31 - 1 elements, lowered from IR (no tensor that large is made): their offsets are int64.
WIDE = """
func.func @wide_exp(%x: !torch.vtensor<[65536,32769],f32>) -> !torch.vtensor<[65536,32769],f32> {
  %0 = torch.aten.exp %x : !torch.vtensor<[65536,32769],f32> -> !torch.vtensor<[65536,32769],f32>
  return %0 : !torch.vtensor<[65536,32769],f32>
}
func.func @wide_sum(%x: !torch.vtensor<[65536,32769],f32>) -> !torch.vtensor<[65536,1],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %none = torch.constant.none
  %1 = torch.aten.sum.dim_IntList %x, %0, %true, %none : !torch.vtensor<[65536,32769],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[65536,1],f32>
  return %1 : !torch.vtensor<[65536,1],f32>
}
func.func @wide_linear(%x: !torch.vtensor<[65536,64],bf16>, %w: !torch.vtensor<[32768,64],bf16>) -> !torch.vtensor<[65536,32768],bf16> {
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[65536,64],bf16>, !torch.vtensor<[32768,64],bf16>, !torch.none -> !torch.vtensor<[65536,32768],bf16>
  return %0 : !torch.vtensor<[65536,32768],bf16>
}
func.func @wide_attention(%q: !torch.vtensor<[64,32,8192,128],bf16>, %k: !torch.vtensor<[64,32,8192,128],bf16>, %v: !torch.vtensor<[64,32,8192,128],bf16>) -> !torch.vtensor<[64,32,8192,128],bf16> {
  %none = torch.constant.none
  %float0 = torch.constant.float 0.000000e+00
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %none, %float0, %true, %none, %false : !torch.vtensor<[64,32,8192,128],bf16>, !torch.vtensor<[64,32,8192,128],bf16>, !torch.vtensor<[64,32,8192,128],bf16>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[64,32,8192,128],bf16>
  return %0 : !torch.vtensor<[64,32,8192,128],bf16>
}
"""


def wide_kernels() -> list:
    from mlirfuse.compiler import run_pipeline
    from mlirfuse.embed import load_dialect
    from mlirfuse.ir import ir, torch_context
    from mlirfuse.lowering.triton import lower_kernel

    context = torch_context()
    load_dialect(context)
    with context, ir.Location.unknown():
        module = ir.Module.parse(WIDE)
        run_pipeline(module, context)
        kernels = [lower_kernel(op) for op in module.body.operations if op.operation.name == "fusion.kernel"]
    assert len(kernels) == 4 and all("tl.int64" in k.source for k in kernels)
    return kernels


@pytest.mark.parametrize("arch", [80, 90])
def test_int64_templates_compile_without_spills(arch):
    # A GEMM and an attention kernel past 2^31 - 1 elements index in int64: still no spill at real sizes.
    templates = [k for k in wide_kernels() if k.kind in ("matmul", "attention")]
    assert len(templates) == 2
    for compiled in compile_kernels(templates, arch=arch):
        usage = compiled.resources()
        assert usage["stack"] == 0 and usage["local"] == 0, (compiled.name, usage)


@pytest.mark.parametrize("arch", [80, 90])
def test_generated_kernels_compile_for_gpu(kernels, arch):
    reported = []
    compiled = compile_kernels(kernels, arch=arch, on_done=lambda i, n, name: reported.append((i, n, name)))
    assert [c.name for c in compiled] == [k.name for k in kernels]
    # Progress (mlirfuse demo): each kernel once as it finishes, counted 0..n-1 in finishing order.
    assert sorted(name for _, _, name in reported) == sorted(k.name for k in kernels)
    assert sorted(i for i, _, _ in reported) == list(range(len(kernels))) and {n for _, n, _ in reported} == {len(kernels)}
    for c in compiled:
        assert c.cubin[:4] == b"\x7fELF", f"{c.name}: not an ELF cubin"


def test_signature_matches_kernel_parameters(kernels):
    kernel = kernels[1]
    sig = signature(kernel)
    header = kernel.source.split(f"def {kernel.name}(", 1)[1].split(")")[0]
    params = [p.split(":")[0].strip() for p in header.split(",")]
    assert list(sig) == params
    assert sig["in0"] == "*fp32" and sig["XBLOCK"] == "constexpr"


def test_dynamic_kernels_compile_with_their_wide_flag():
    # A kernel over `?` sizes takes `WIDE` (64-bit offsets per launch); ahead of time its sizes may be any: WIDE=True.
    class Model(torch.nn.Module):
        def forward(self, x, w):
            return torch.nn.functional.gelu(x + w).softmax(-1)

    batch = torch.export.Dim("batch", min=2, max=64)
    cm = mlirfuse.compile(Model(), (torch.randn(8, 16), torch.randn(16)), dynamic_shapes=({0: batch}, None))
    kernels = list(cm.kernels.values())
    assert kernels and all(k.wide_flag for k in kernels)
    for c in compile_kernels(kernels, arch=90):
        assert c.cubin[:4] == b"\x7fELF", c.name


@pytest.mark.parametrize("dtype, value", [(torch.int64, 1.5), (torch.int32, -2.7), (torch.bool, 0.5)], ids=str)
def test_scatter_of_a_float_number_into_integers_compiles(dtype, value):
    # Fuzz seed 2800028 with --aot: scatter(int64 x, 0, index, 1.5) filled with tl.full([XBLOCK], 1.5, tl.int64),
    # which the interpreter runs but Triton's compiler refuses. Eager converts the number to the dtype (1.5 -> 1).
    x, index = torch.zeros(3, 4, dtype=dtype), torch.tensor([[0, 1, 2, 0]])
    fn = Lambda(lambda x, i: torch.scatter(x * 1, 0, i, value))
    cm = mlirfuse.compile(fn, (x, index))
    assert torch.equal(cm(x, index), fn(x, index))
    compiled = compile_kernels(list(cm.kernels.values()), arch=80)
    assert compiled and not any(k.spilled() for k in compiled)
