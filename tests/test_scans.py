"""cumsum / cumprod as scan kernels with their pointwise prologue and epilogue, against eager PyTorch (issue 22).

Eager's CPU kernels add in sequence, keeping totals in int64 (integers and
bools), f64 (f32) or f32 (f16/bf16); a scan kernel keeps the same totals
and adds in a tree within a tile. Integer results are exact, float ones
are checked at their dtype's default tolerances (in those wider totals the
order's rounding rarely reaches the result).
"""

from __future__ import annotations

import pytest
import torch

import mlirfuse
from mlirfuse.runtime.aot import AotCompiles
from helpers import Lambda, assert_fully_fused, gpu_launch_specializations, unfused_ops


def _check(fn, *inputs, launches: int = 1, **tolerances):
    """Compile `fn`, compare every output with eager (dtype included), return the compiled module."""
    cm = mlirfuse.compile(Lambda(fn), inputs)
    expected, actual = fn(*inputs), cm(*inputs)
    torch.testing.assert_close(actual, expected, **tolerances)
    assert_fully_fused(cm)
    assert cm.stats["launches"] == launches, cm.mlir
    return cm


class Positions(torch.nn.Module):
    """A decoder's position ids from its attention mask (left padding): the cumsum and its epilogue."""

    def forward(self, mask):
        pos = (mask.cumsum(-1) - 1) * mask
        return pos.masked_fill(mask == 0, 1)


def test_position_ids_from_a_mask_are_one_kernel():
    mask = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1]])
    cm = mlirfuse.compile(Positions(), (mask,))
    torch.testing.assert_close(cm(mask), Positions()(mask), rtol=0, atol=0)
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, unfused_ops(cm)
    (kernel,) = cm.kernels.values()
    assert "tl.cumsum" in kernel.source and kernel.kind == "scan"


INTEGER_CASES = {
    "int64": (lambda x: x.cumsum(1), torch.int64),
    "int32_to_int64": (lambda x: x.cumsum(0), torch.int32),
    "uint8_to_int64": (lambda x: x.cumsum(-1), torch.uint8),
    "bool_to_int64": (lambda x: (x > 2).cumsum(1), torch.int64),
    "dtype_int32": (lambda x: x.cumsum(1, dtype=torch.int32), torch.int64),
    "dtype_float": (lambda x: x.cumsum(1, dtype=torch.float32), torch.int64),
    "int8_wraps_as_eager": (lambda x: (x * 40).to(torch.int8).cumsum(1, dtype=torch.int8), torch.int64),
    "cumprod_int": (lambda x: (x - 2).cumprod(0), torch.int64),
    "cumprod_wraps_int64": (lambda x: (x + 1000).cumprod(1), torch.int64),
}


@pytest.mark.parametrize("case", list(INTEGER_CASES))
def test_integer_and_bool_scans_are_exact(case):
    fn, dtype = INTEGER_CASES[case]
    x = torch.randint(0, 5, (5, 9), generator=torch.Generator().manual_seed(0)).to(dtype)
    _check(fn, x, rtol=0, atol=0)


FLOAT_CASES = {  # fn, shape, dtype
    "last_dim": (lambda x: x.cumsum(-1), (4, 37), torch.float32),
    "first_dim": (lambda x: x.cumsum(0), (37, 4), torch.float32),
    "middle_dim_3d": (lambda x: x.cumsum(1) * 2, (3, 17, 5), torch.float32),
    "negative_dim_4d": (lambda x: x.cumsum(-3), (2, 5, 3, 4), torch.float32),
    "f64": (lambda x: x.cumsum(1), (3, 50), torch.float64),
    "bf16": (lambda x: x.cumsum(-1), (4, 300), torch.bfloat16),
    "f16": (lambda x: x.cumsum(0), (200, 3), torch.float16),
    "bf16_input_f32_result": (lambda x: x.cumsum(1, dtype=torch.float32), (3, 100), torch.bfloat16),
    "f32_input_bf16_result": (lambda x: x.cumsum(1, dtype=torch.bfloat16), (3, 100), torch.float32),
    "cumprod": (lambda x: x.cumprod(1), (4, 40), torch.float32),
    "cumprod_bf16": (lambda x: x.cumprod(-1), (4, 40), torch.bfloat16),
    "cumprod_f16_to_f32": (lambda x: x.cumprod(0, dtype=torch.float32), (40, 4), torch.float16),
}


@pytest.mark.parametrize("case", list(FLOAT_CASES))
def test_float_scans_match_eager(case):
    fn, shape, dtype = FLOAT_CASES[case]
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    x = (1 + 0.1 * x if case.startswith("cumprod") else x).to(dtype)  # products near 1: no overflow
    _check(fn, x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_rows_longer_than_a_tile_carry_the_running_total(dtype):
    # The interpreter's tiles hold at most 2048 columns: these rows take three tiles.
    x = torch.randn(3, 5000, generator=torch.Generator().manual_seed(2))
    x = x if dtype.is_floating_point else (x * 4).to(dtype)
    cm = _check(lambda a: a.cumsum(1) + 1, x, **({} if dtype.is_floating_point else {"rtol": 0, "atol": 0}))
    assert "carry0 = carry0 +" in next(iter(cm.kernels.values())).source


def test_f32_totals_are_kept_in_f64_as_eager_keeps_them_on_cpu():
    # 1e30 * 1e30 is past f32's range: eager stores inf there but carries 1e60 on, back to 1e30 and 1.
    x = torch.tensor([[1e30, 1e30, 1e-30, 1e-30], [3e38, 3e38, -3e38, -3e38]])
    _check(lambda a: a.cumprod(1), x[:1].clone())
    _check(lambda a: a.cumsum(1), x[1:].clone())
    assert x[:1].cumprod(1)[0, 1].isinf() and x[:1].cumprod(1)[0, 3] == 1  # what eager gives, checked above


def test_long_cumprod_carries_the_running_product():
    x = 1 + 1e-4 * torch.randn(2, 4500, generator=torch.Generator().manual_seed(3))
    _check(lambda a: a.cumprod(-1), x)


@pytest.mark.parametrize("shape, dim", [((3, 0), 1), ((0, 4), 1), ((2, 0, 3), 2), ((4, 1), 1), ((1, 6), 0), ((1,), 0)])
def test_empty_and_one_element_dims(shape, dim):
    x = torch.randn(shape)
    _check(lambda a: a.cumsum(dim) * 3, x)


def test_prologue_and_epilogue_with_broadcast_operands_are_one_kernel():
    x, w, b = torch.randn(3, 8), torch.randn(8), torch.randn(3, 1)
    cm = _check(lambda x, w, b: torch.cumsum(x.exp() * w, 1) / (b.abs() + 1), x, w, b)
    assert cm.stats["kernels"] == 1


def test_strided_input_and_an_exported_prologue_value():
    x = torch.randn(6, 5)

    def fn(a):
        y = a.t() * 2  # read through a transposed view by index arithmetic; also returned
        return y.cumsum(1), y

    _check(fn, x)


def test_two_scans_along_one_dim_share_a_kernel():
    x = torch.randn(4, 9)
    _check(lambda a: torch.cumsum(a.cumsum(1).sigmoid(), 1) + a.cumprod(1), x)


def test_limits_scans_along_two_dims_and_a_scan_feeding_a_sum_are_two_kernels():
    x = torch.randn(4, 9)
    _check(lambda a: a.cumsum(1).cumsum(0), x, launches=2)
    cm = _check(lambda a: a.cumsum(1).sum(1), x, launches=2)
    kinds = sorted(k.kind for k in cm.kernels.values())
    assert kinds == ["persistent-reduction", "scan"], kinds


def test_limits_a_dynamic_length_stays_an_aten_call():
    x = torch.randn(3, 8)
    dynamic = (({1: torch.export.Dim("t", min=2)},),)  # Lambda's forward takes *args
    cm = mlirfuse.compile(Lambda(lambda a: a.cumsum(1) + 1), (x,), dynamic_shapes=dynamic, explain=True)
    torch.testing.assert_close(cm(x), x.cumsum(1) + 1)
    assert "torch.aten.cumsum" in unfused_ops(cm)
    reasons = [r for rs in cm.explain().values() for r in rs]
    assert any("torch.aten.cumsum: scan over a dynamic shape" in r for r in reasons), reasons


def test_logcumsumexp_runs_through_aten():
    x = torch.randn(3, 8)
    cm = mlirfuse.compile(Lambda(lambda a: torch.logcumsumexp(a, 1)), (x,))
    torch.testing.assert_close(cm(x), torch.logcumsumexp(x, 1))
    assert unfused_ops(cm) == ["torch.aten.logcumsumexp"]


@pytest.mark.parametrize("arch", [80, 90])
def test_scan_kernels_compile_for_gpu_without_spills(arch):
    # Compiled with the blocks a GPU launch takes for their shapes (ScanKind.aot_constants): short rows
    # many to a program ([1024, 16], [512, 2]), long rows a tile of 1024 at a time ([8, 5000]); int64 and f64 totals.
    torch.manual_seed(0)
    models = [
        (Positions(), (torch.ones(1024, 16, dtype=torch.long),)),
        (Positions(), (torch.ones(8, 5000, dtype=torch.long),)),
        (Lambda(lambda a: (a * 0.1 + 1).cumprod(0).to(torch.bfloat16) * a), (torch.randn(16, 64),)),
        (Lambda(lambda a: (a * 0.1 + 1).cumprod(1) * a), (torch.randn(8, 3000),)),
        (Lambda(lambda a: (a * 0.1 + 1).cumprod(1) - a), (torch.randn(512, 2),)),
        (Lambda(lambda a: a.to(torch.bfloat16).cumsum(1, dtype=torch.float32).cumsum(1)), (torch.randn(2, 5000),)),
    ]
    requests = []  # each kernel as a GPU launches it (its launch's specialization)
    for model, inputs in models:
        cm = mlirfuse.compile(model, inputs)
        launches = gpu_launch_specializations(cm, model, arch)
        requests += [(k, arch, launches[k.name]) for k in cm.kernels.values()]
    assert {k.kind for k, _, _ in requests} == {"scan"}
    for compiled in AotCompiles().results(requests):
        usage = compiled.resources()
        assert usage["stack"] == 0 and usage["local"] == 0, f"{compiled.name} spills on sm_{arch}: {usage}"


def test_cost_of_the_position_ids_kernel_is_its_lower_bound():
    # One [2, 16] int64 mask read (256 bytes) and the positions written (256): the program's lower bound.
    # Five ops of 32 elements each (eq, cumsum, sub, mul, masked_fill): 160 FLOPs. (As an ATen cumsum
    # beside a kernel it moved 1280 bytes.)
    cm = mlirfuse.compile(Positions(), (torch.ones(2, 16, dtype=torch.long),))
    assert (cm.stats["bytes"], cm.stats["bytes_lower_bound"], cm.stats["flops"]) == (512, 512, 160), cm.stats


def test_fusion_report_names_the_scan_kernel_and_why_a_sum_stays_apart():
    from mlirfuse.tools.main import fusion_report

    cm = mlirfuse.compile(Lambda(lambda a: a.cumsum(1).sum(1)), (torch.randn(4, 9),), explain=True)
    report = fusion_report(cm)
    assert "cumsum" in report and "unfused: none" in report, report
    assert "a scan and a reduction (a scan kernel computes no reduction)" in report, report


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_precision_eager_rounds_the_scan_result_before_its_epilogue(dtype):
    # Eager rounds the cumsum to the dtype before `* 1.7 + x`; precision="eager" does too (the default keeps it in f32).
    x = torch.randn(8, 65, generator=torch.Generator().manual_seed(4)).to(dtype)
    fn = lambda a: a.cumsum(1) * 1.7 + a  # noqa: E731
    cm = mlirfuse.compile(Lambda(fn), (x,), options={"precision": "eager"})
    assert cm.stats["launches"] == 1 and torch.equal(cm(x), fn(x))
