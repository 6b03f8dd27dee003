"""The benchmarks' device-call counting (bench/device_calls.py) on models whose counts are known by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from device_calls import count_inductor, count_inductor_launches, measure_inductor  # noqa: E402
from helpers import Lambda  # noqa: E402


def test_inductor_counts_one_extern_matmul_and_one_fused_kernel():
    # relu(x @ w) + 1: the matmul is a library call, relu and the add one generated kernel.
    w = torch.randn(8, 4)
    model = Lambda(lambda x: torch.relu(x @ w) + 1)
    counts = measure_inductor(model, (torch.randn(3, 8),))
    assert (counts["kernels"], counts["launches"], counts["externs"], counts["device_calls"]) == (1, 1, 1, 2)
    assert counts["err"] < 1e-5


def test_comments_and_allocations_are_not_calls():
    code = '''
cpp_fused_add_relu_0 = async_compile.cpp_pybinding(['float*'], r"""...""")

def call(args):
    buf0 = empty_strided_cpu((3, 4), (4, 1), torch.float32)
    # Topologically Sorted Source Nodes: [matmul], Original ATen: [aten.mm]
    extern_kernels.mm(arg0_1, arg1_1, out=buf0)
    cpp_fused_add_relu_0(buf0)
    return (reinterpret_tensor(buf0, (4, 3), (1, 4), 0), )

def benchmark_compiled_module():
    aten.mm(a, b)
'''
    assert count_inductor(code) == (1, 1)
    assert count_inductor_launches(code) == 1  # the call in the comment is not a launch


def test_custom_op_fallbacks_are_extern_calls():
    # A model's custom op (transformers' MoE grouped_mm_fallback) runs as a fallback call like an ATen op;
    # its name in assert_size_stride's message is a string, not a call.
    code = '''
def call(self, args):
    buf1 = torch.ops.transformers.grouped_mm_fallback.default(buf0, arg1_1, arg2_1)
    assert_size_stride(buf1, (32, 128), (128, 1), 'torch.ops.transformers.grouped_mm_fallback.default')
    buf2 = torch.ops.aten.histc.default(buf1, 4, 0, 3)
    return (buf2, )
'''
    assert count_inductor(code) == (0, 2)
