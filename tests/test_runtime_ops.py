"""Ops the runtime must run as they come from torch-mlir (issues 9 and 13)."""

import pytest
import torch
import torch.nn.functional as F

import mlirfuse
from mlirfuse.ir import ir
from helpers import Lambda


@pytest.mark.parametrize("divisor", [3, -4])
def test_integer_trunc_division_by_a_python_int(divisor):
    """`div(x, 3, rounding_mode='trunc')` imports as div.Tensor_mode of a `prim.NumToTensor.Scalar`."""
    x = torch.randint(-20, 20, (4, 5))
    fn = lambda a: torch.div(a, divisor, rounding_mode="trunc") + a  # noqa: E731
    got = mlirfuse.compile(Lambda(fn), (x,))(x)
    assert got.dtype == torch.int64
    assert torch.equal(got, fn(x))


def test_extern_call_with_a_list_operand():
    """`x.t().flip([0, b.numel() - 3])`: the extern group around aten.flip takes its dims as a list.

    (`x.t()[i]` and `x.t().repeat(...)` were the case here; index.Tensor is a kernel now,
    tests/test_indexing.py, and repeat is decomposed into a copied expand, tests/test_decompositions.py.)
    """
    x, i = torch.randn(6, 5), torch.tensor([0, 2, 2, 4])
    fn = lambda a, b: a.t().flip([0, b.numel() - 3]) + b.sum()  # noqa: E731
    cm = mlirfuse.compile(Lambda(fn), (x, i))
    assert cm.stats["operand_views"] == 1
    assert torch.equal(cm(x, i), fn(x, i))


SDPA_CASES = {
    "causal": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    "gqa": lambda q, k, v, m: F.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True),
    "bool_mask": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3),
    "float_mask": lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m * -1e4),
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_stays_one_aten_call(case):
    """The frontend exports with no decomposition table: SDPA reaches the runtime as one ATen op."""
    fn = SDPA_CASES[case]
    q, k, v = torch.randn(2, 4, 8, 8), torch.randn(2, 4, 8, 8), torch.randn(2, 4, 8, 8)
    m = torch.rand(2, 1, 8, 8) > 0.3
    if case == "float_mask":
        m = m.float()
    cm = mlirfuse.compile(Lambda(fn), (q, k, v, m))
    assert cm.mlir.count("torch.aten.scaled_dot_product_attention") == 1
    torch.testing.assert_close(cm(q, k, v, m), fn(q, k, v, m))


# --- issue 13, item 3: every op torch-mlir imports runs, or is named with its location ---------


def _run_frozen(model, *inputs):
    """Import `model` as torch-mlir's default path does (weights as `torch.vtensor.literal`), fuse, run."""
    from torch_mlir.extras.fx_importer import FxImporter

    from mlirfuse.compiler import run_pipeline
    from mlirfuse.dialect import make_context
    from mlirfuse.runtime.program import Program

    context = make_context()
    importer = FxImporter(context=context)
    importer.import_frozen_program(torch.export.export(model, inputs), func_name="forward")
    module = importer.module
    text = str(module)
    run_pipeline(module, context)
    func = next(op for op in module.body.operations if op.operation.name == "func.func")
    return text, Program(func, module).run(list(inputs))


class Affine(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(5, 3))
        self.b = torch.nn.Parameter(torch.randn(3))
        self.one = torch.nn.Parameter(torch.tensor([0.5]))
        self.register_buffer("mask", torch.tensor([True, False, True]))

    def forward(self, x):
        return torch.where(self.mask, x.t() @ self.w + self.b, self.one)


def test_literal_weights_stored_as_dense_resource_blobs():
    """Frozen weights are `dense_resource` blobs (splats for one element); an extern group reads them as operands."""
    model, x = Affine(), torch.randn(5, 4)
    text, (got,) = _run_frozen(model, x)
    assert "dense_resource<" in text and "dialect_resources" in text
    torch.testing.assert_close(got, model(x))


# bf16 literals need the `ml_dtypes` package in the importer; the dense form is checked below from IR text.
@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.float16])
def test_literals_of_every_dtype(dtype):
    class Const(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = torch.nn.Parameter(torch.arange(6).reshape(2, 3).to(dtype), requires_grad=False)
            self.s = torch.nn.Parameter(torch.ones(1, dtype=dtype), requires_grad=False)

        def forward(self, x):
            # Two bool literals in one graph trip a torch-mlir importer bug (the second gets the first's blob).
            return x + self.c, (x if dtype == torch.bool else x + self.s)

    model = Const()
    x = torch.ones(2, 3, dtype=dtype)
    _, got = _run_frozen(model, x)
    for g, e in zip(got, model(x)):
        assert torch.equal(g, e), (g, e)


def test_dense_bf16_literals():
    from mlirfuse.dialect import make_context
    from mlirfuse.runtime.program import Program

    text = """
    func.func @forward(%arg0: !torch.vtensor<[2],bf16>) -> (!torch.vtensor<[2],bf16>, !torch.vtensor<[1],bf16>) {
      %0 = torch.vtensor.literal(dense<[1.5, -2.0e+03]> : tensor<2xbf16>) : !torch.vtensor<[2],bf16>
      %1 = torch.vtensor.literal(dense<0.375> : tensor<1xbf16>) : !torch.vtensor<[1],bf16>
      %int1 = torch.constant.int 1
      %2 = torch.aten.add.Tensor %arg0, %0, %int1 : !torch.vtensor<[2],bf16>, !torch.vtensor<[2],bf16>, !torch.int -> !torch.vtensor<[2],bf16>
      return %2, %1 : !torch.vtensor<[2],bf16>, !torch.vtensor<[1],bf16>
    }"""
    with make_context():
        module = ir.Module.parse(text)
        x = torch.tensor([1.0, 2.0], dtype=torch.bfloat16)
        got, splat = Program(module.body.operations[0], module).run([x])
    assert torch.equal(got, x + torch.tensor([1.5, -2000.0], dtype=torch.bfloat16))
    assert torch.equal(splat, torch.tensor([0.375], dtype=torch.bfloat16))


def test_quantize_dequantize_ops_run():
    import torch.ao.quantization.fx._decomposed  # noqa: F401 - registers torch.ops.quantized_decomposed

    q = torch.ops.quantized_decomposed

    def fn(x, s):
        a = q.quantize_per_tensor(x, 0.05, 3, -128, 127, torch.int8)
        b = q.dequantize_per_tensor(a, 0.05, 3, -128, 127, torch.int8)
        c = q.quantize_per_tensor.tensor(x, s, torch.tensor(0), 0, 255, torch.uint8)
        return b * 2, q.dequantize_per_tensor.tensor(c, s, torch.tensor(0), 0, 255, torch.uint8), a

    x, s = torch.randn(4, 8), torch.tensor(0.02)
    cm = mlirfuse.compile(Lambda(fn), (x, s))
    for got, want in zip(cm(x, s), fn(x, s)):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_forward_takes_python_scalars():
    """ints, floats and bools as forward arguments: the compiled module is specialised to their values."""

    def fn(x, n, scale, flag):
        y = x * scale + n
        return (y.relu() if flag else y) + x.shape[0] * n

    x = torch.randn(3, 4)
    cm = mlirfuse.compile(Lambda(fn), (x, 2, 0.5, True))
    torch.testing.assert_close(cm(x, 2, 0.5, True), fn(x, 2, 0.5, True))
    # A new value is a new specialization (guards), or an error with strict=True.
    torch.testing.assert_close(cm(x, 3, 0.5, False), fn(x, 3, 0.5, False))
    assert cm.guard_stats["compiles"] == 2
    strict = mlirfuse.compile(Lambda(fn), (x, 2, 0.5, True), strict=True)
    with pytest.raises(mlirfuse.InputMismatchError, match="value"):
        strict(x, 3, 0.5, True)


def test_out_argument_writes_the_caller_buffer():
    """`torch.add(x, y, out=buf)`: export makes it functional plus a write back into `buf`."""

    def fn(x, y, buf):
        torch.add(x, y, out=buf)
        return buf * 2

    x, y = torch.randn(3, 4), torch.randn(3, 4)
    buf, expected_buf = torch.zeros(3, 4), torch.zeros(3, 4)
    expected = fn(x, y, expected_buf)
    got = mlirfuse.compile(Lambda(fn), (x, y, torch.zeros(3, 4)))(x, y, buf)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(buf, expected_buf)


AS_STRIDED_CASES = {
    "input": lambda x: torch.as_strided(x, (3, 2), (1, 3), 1),
    "computed": lambda x: torch.as_strided(x.exp(), (2, 3), (1, 2), 2) + 1,
    # Eager's `t() * 2` keeps the transposed strides: as_strided then reads that storage order.
    "computed_transposed": lambda x: torch.as_strided(x.t() * 2, (4, 2), (2, 1)),
    "of_a_view": lambda x: x[1:].as_strided((2, 2), (1, 4)) * 3,
}


@pytest.mark.parametrize("case", list(AS_STRIDED_CASES))
def test_as_strided_matches_eager(case):
    fn = AS_STRIDED_CASES[case]
    x = torch.randn(4, 4)
    torch.testing.assert_close(mlirfuse.compile(Lambda(fn), (x,))(x), fn(x))


EXTERN_OPERANDS = {
    "constant_dim": lambda x, i: torch.logcumsumexp(x.t(), 0),
    "constant_list": lambda x, i: F.pad(x.t(), (1, 2), value=0.5),
    "tensor_list": lambda x, i: torch.cat([x.t(), x.t() * 2], dim=1).logcumsumexp(1),
    "index_list_with_none": lambda x, i: x.t()[:, i],
    "scalar_tensor": lambda x, i: torch.index_select(x.t(), 1, i).logcumsumexp(0),
}


@pytest.mark.parametrize("case", list(EXTERN_OPERANDS))
def test_extern_groups_with_constant_list_and_tensor_operands(case):
    fn = EXTERN_OPERANDS[case]
    x, i = torch.randn(6, 5), torch.tensor([0, 2, 2, 4])
    torch.testing.assert_close(mlirfuse.compile(Lambda(fn), (x, i))(x, i), fn(x, i))


def test_ops_that_cannot_run_are_named_with_their_location():
    from mlirfuse.dialect import make_context
    from mlirfuse.runtime.program import Program

    text = """
    func.func @forward(%arg0: !torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32> {
      %0 = torch.operator "torch.nowhere.frobnicate"(%arg0) : (!torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32> loc("model.py":7:3)
      return %0 : !torch.vtensor<[3],f32>
    }"""
    with make_context():
        module = ir.Module.parse(text)
        func = module.body.operations[0]
        with pytest.raises(mlirfuse.UnsupportedModelError, match=r"torch\.nowhere\.frobnicate.*model\.py.*7"):
            Program(func, module)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.float64, torch.int16])
def test_dtype_arguments_decoded_with_the_importers_codes(dtype):
    """The importer writes complex64 as 10 (torch's ComplexDouble): ATen must get complex64 back.

    Also a layout and a memory format passed through an unfused op.
    """

    def fn(x):
        y = x.to(dtype)
        return y, torch.empty_like(x, dtype=dtype, layout=torch.strided, memory_format=torch.contiguous_format).shape, y * 2

    x = torch.randn(3, 4)
    got = mlirfuse.compile(Lambda(fn), (x,))(x)
    want = fn(x)
    assert got[0].dtype == dtype and got[2].dtype == dtype
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[2], want[2])


def test_aten_call_keeps_the_dtype_eager_gives():
    """`where(c, True, b)` imports its bool as `torch.aten.Int.bool`; ATen's where(c, 1, b) would give int64 (fuzz seed 123016)."""
    x, i = torch.rand(5, 1, 1, 2) > 0.5, torch.tensor([0])
    fn = lambda a, j: torch.where(a[:, j] > 0, True, a[:, j])  # noqa: E731
    cm = mlirfuse.compile(Lambda(fn), (x, i))
    assert cm.stats["unfused_ops"] >= 1  # the where runs through ATen
    got = cm(x, i)
    assert got.dtype == torch.bool
    assert torch.equal(got, fn(x, i))
