"""Convolution template instances compile for sm_80 and sm_90 without register spills and within shared memory.

As tests/test_matmul_aot.py does for the GEMMs: compiled ahead of time (no
GPU), registers and the stack frame from `cuobjdump -res-usage`, shared
memory from the compiled kernel's metadata. ResNet-18's first stages at
their real sizes (batch 8, 56x56): a basic block in f32 with its BN/ReLU
and residual epilogues, the strided block with its 1x1 downsample in bf16,
a depthwise 3x3 in f16, and a conv1d.
"""

from __future__ import annotations

import pytest
import torch
from test_conv import ConvBnAct, ResNetBlock

import mlirfuse
from mlirfuse.runtime.aot import AotCompiles
from helpers import Lambda, gpu_launch_specializations

SHARED_LIMIT = {80: 163 * 1024, 90: 227 * 1024}


@pytest.fixture(scope="module")
def conv_kernels():
    """The conv kernels of the models below, compiled once for the module (the tests only read them)."""
    torch.manual_seed(0)
    models = [
        (ResNetBlock(64, 64), (torch.randn(8, 64, 56, 56),)),
        (ResNetBlock(64, 128, stride=2).to(torch.bfloat16), (torch.randn(8, 64, 56, 56, dtype=torch.bfloat16),)),
        (ConvBnAct(96, 96, groups=96).to(torch.float16), (torch.randn(8, 96, 56, 56, dtype=torch.float16),)),
        (Lambda(lambda x, w: torch.nn.functional.conv1d(x, w, padding=2).relu()), (torch.randn(8, 256, 1000), torch.randn(256, 256, 5))),
    ]
    kernels = []  # (kernel, {arch: its launch's specialization})
    with torch.no_grad():
        for model, inputs in models:
            cm = mlirfuse.compile(model.eval(), inputs)
            launches = {arch: gpu_launch_specializations(cm, model, arch) for arch in (80, 90)}
            kernels += [(k, {arch: launches[arch][k.name] for arch in launches})
                        for k in cm.kernels.values() if k.kind == "conv"]
    return kernels


@pytest.mark.parametrize("arch", [80, 90])
def test_conv_kernels_compile_without_spills(conv_kernels, arch):
    """Each kernel as a GPU launches it (its launch's specialization)."""
    assert len(conv_kernels) == 7, [k.name for k, _ in conv_kernels]
    for compiled in AotCompiles().results([(k, arch, launches[arch]) for k, launches in conv_kernels]):
        usage = compiled.resources()
        assert usage["stack"] == 0 and usage["local"] == 0, (compiled.name, usage)
        assert 0 < usage["reg"] <= 255, (compiled.name, usage)
        assert 0 < compiled.shared <= SHARED_LIMIT[arch], (compiled.name, compiled.shared)
