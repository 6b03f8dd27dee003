"""Convolutions as Triton implicit GEMMs (kind "conv", lowering/conv.py) against eager.

conv1d / conv2d with stride, padding, dilation, groups (depthwise too),
bias, "same"/"valid" padding, in f32 / f16 / bf16, on tiny shapes (the CPU interpreter runs them):
each is one launch and no ATen convolution. Batch norm in inference (after
fusion-decompose: pointwise on the conv's result), activations and a
residual add are the kernel's epilogue; a pointwise op on the input its
prologue (zero padding applies to the prologue's result, as in eager).
A ResNet basic block, with and without a strided 1x1 downsample, runs with
no ATen convolution. Transposed convolutions stay ATen calls, with the
reason in explain.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.dialect import GroupKind
from helpers import Lambda, unfused_ops

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from launches import ResNetBlock  # noqa: E402  (torchvision's BasicBlock, BN statistics drawn)

F = torch.nn.functional
TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2),
}
DTYPES = list(TOL)


def _kinds(cm) -> list[str]:
    return [k.kind for k in cm.kernels.values()]


def _convs_left(cm) -> list[str]:
    return [op for op in unfused_ops(cm) if "conv" in op]


def _compare(fn, *inputs, dtype=torch.float32, launches=1):
    model = Lambda(fn)
    with torch.no_grad():
        expected = model(*inputs)
        cm = mlirfuse.compile(model, inputs)
        actual = cm(*inputs)
    torch.testing.assert_close(actual, expected, **TOL[dtype])
    assert _convs_left(cm) == [], unfused_ops(cm)
    assert cm.stats["launches"] == launches and cm.stats["unfused_ops"] == 0, (cm.stats, unfused_ops(cm))
    assert GroupKind.CONV in _kinds(cm)
    return cm


# (in channels, out channels, kernel, stride, padding, dilation, groups, H, W)
CONV2D = {
    "3x3": (3, 5, 3, 1, 1, 1, 1, 7, 6),
    "stride2": (4, 6, 3, 2, 1, 1, 1, 9, 8),
    "pad0_rect": (3, 4, (2, 3), 1, 0, 1, 1, 6, 7),
    "asym_pad_stride": (2, 3, 3, (2, 1), (0, 2), 1, 1, 7, 5),
    "dilation2": (3, 4, 3, 1, 2, 2, 1, 8, 8),
    "groups2": (4, 6, 3, 1, 1, 1, 2, 6, 6),
    "depthwise": (6, 6, 3, 2, 1, 1, 6, 7, 7),
    "depthwise_mult2": (3, 6, 3, 1, 1, 1, 3, 5, 5),
    "1x1_stride2": (8, 4, 1, 2, 0, 1, 1, 6, 6),
    "wide_k": (20, 17, 3, 1, 1, 1, 1, 5, 5),  # K = 180: several K blocks
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", list(CONV2D))
def test_conv2d_against_eager(case, dtype):
    cin, cout, k, stride, padding, dilation, groups, h, w = CONV2D[case]
    torch.manual_seed(0)
    x = torch.randn(2, cin, h, w, dtype=dtype)
    weight = torch.randn(cout, cin // groups, *((k, k) if isinstance(k, int) else k), dtype=dtype)
    _compare(lambda x, w: F.conv2d(x, w, None, stride, padding, dilation, groups), x, weight, dtype=dtype)


@pytest.mark.parametrize("seed", range(12))
def test_random_conv_geometries(seed):
    """Random channels, groups, window, stride, padding (up to past the window), dilation, sizes and layout."""
    g = torch.Generator().manual_seed(seed)

    def pick(*options):
        return options[int(torch.randint(len(options), (), generator=g))]

    groups = pick(1, 1, 2, 3)
    cin, cout = groups * pick(1, 2, 5), groups * pick(1, 3, 4)
    spatial = pick(1, 2, 2)
    window = tuple(pick(1, 2, 3, 4) for _ in range(spatial))
    stride, dilation = tuple(pick(1, 2, 3) for _ in range(spatial)), tuple(pick(1, 1, 2) for _ in range(spatial))
    padding = tuple(pick(0, 1, 2, 4) for _ in range(spatial))
    size = tuple(d * (k - 1) + pick(1, 3, 7) for k, d in zip(window, dilation))
    x = torch.randn(pick(1, 2, 3), cin, *size, generator=g)
    if spatial == 2 and pick(False, True):
        x = x.to(memory_format=torch.channels_last)
    w = torch.randn(cout, cin // groups, *window, generator=g)
    conv = F.conv2d if spatial == 2 else F.conv1d
    _compare(lambda x, w: conv(x, w, None, stride, padding, dilation, groups).relu(), x, w)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_conv2d_bias_kept_in_the_conv(dtype):
    # Nothing fusible reads the result: fusion-split-bias leaves the bias in the conv, the template adds it.
    torch.manual_seed(1)
    x, w, b = torch.randn(2, 3, 5, 5, dtype=dtype), torch.randn(4, 3, 3, 3, dtype=dtype), torch.randn(4, dtype=dtype)
    cm = _compare(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, b, dtype=dtype)
    assert "torch.aten.add" not in cm.mlir


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("stride, padding, dilation, groups", [(1, 1, 1, 1), (2, 2, 2, 1), (1, 0, 1, 2), (1, 1, 1, 4)])
def test_conv1d_against_eager(stride, padding, dilation, groups, dtype):
    torch.manual_seed(2)
    x, w, b = torch.randn(3, 4, 11, dtype=dtype), torch.randn(8, 4 // groups, 3, dtype=dtype), torch.randn(8, dtype=dtype)
    _compare(lambda x, w, b: F.relu(F.conv1d(x, w, b, stride, padding, dilation, groups)), x, w, b, dtype=dtype)


@pytest.mark.parametrize("conv, padding, window, dilation", [
    (F.conv2d, "same", (3, 3), 1), (F.conv2d, "same", (3, 5), 2), (F.conv2d, "valid", (2, 3), 1), (F.conv1d, "same", (5,), 1),
    # An even window: eager pads the end one more than the start.
    (F.conv2d, "same", (2, 4), 1), (F.conv2d, "same", (2, 3), 3), (F.conv1d, "same", (4,), 1),
])
def test_named_padding(conv, padding, window, dilation):
    torch.manual_seed(10)
    x, w = torch.randn(2, 3, *(7, 6)[2 - len(window):]), torch.randn(4, 3, *window)
    _compare(lambda x, w: conv(x, w, padding=padding, dilation=dilation).relu(), x, w)


def test_channels_last_input_is_read_through_its_strides():
    torch.manual_seed(3)
    x = torch.randn(2, 5, 6, 7).to(memory_format=torch.channels_last)
    w = torch.randn(3, 5, 3, 3).to(memory_format=torch.channels_last)
    cm = _compare(lambda x, w: F.conv2d(x, w, padding=1, stride=2), x, w)
    # The same kernel on a contiguous input (a new specialization or not): still eager's values.
    xc = x.contiguous()
    torch.testing.assert_close(cm(xc, w), F.conv2d(xc, w, padding=1, stride=2), **TOL[torch.float32])


class ConvBnAct(nn.Module):
    def __init__(self, cin=3, cout=5, stride=1, groups=1, act=torch.relu, bias=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride, 1, groups=groups, bias=bias)
        self.bn = nn.BatchNorm2d(cout)
        self.act = act
        with torch.no_grad():
            self.bn.running_mean.normal_()
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.normal_()
            self.bn.bias.normal_()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("act", [torch.relu, F.silu, F.hardtanh], ids=lambda f: f.__name__)
def test_conv_bias_batch_norm_activation_is_one_kernel(act, dtype):
    torch.manual_seed(4)
    model = ConvBnAct(act=act).eval().to(dtype)
    x = torch.randn(2, 3, 6, 6, dtype=dtype)
    with torch.no_grad():
        cm = mlirfuse.compile(model, (x,))
        torch.testing.assert_close(cm(x), model(x), **TOL[dtype])
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, (cm.stats, unfused_ops(cm))
    assert _kinds(cm) == [GroupKind.CONV]


def test_depthwise_separable_block():
    torch.manual_seed(5)
    model = nn.Sequential(ConvBnAct(4, 4, stride=2, groups=4), nn.Conv2d(4, 6, 1), nn.ReLU()).eval()
    x = torch.randn(2, 4, 9, 9)
    with torch.no_grad():
        cm = mlirfuse.compile(model, (x,))
        torch.testing.assert_close(cm(x), model(x), **TOL[torch.float32])
    assert cm.stats["launches"] == 2 and _kinds(cm) == [GroupKind.CONV] * 2 and not unfused_ops(cm), cm.stats


def test_pointwise_prologue_is_zero_padded_after_it():
    # exp(x) is 1 at a padded position if computed there: the template zeroes the prologue's result.
    torch.manual_seed(6)
    x, w = torch.randn(2, 3, 5, 5), torch.randn(4, 3, 3, 3)
    cm = _compare(lambda x, w: F.conv2d(torch.exp(x) * 0.5, w, padding=1), x, w)
    assert "torch.aten.exp" in cm.mlir.partition("func.func @forward")[0]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("cin, cout, stride, launches", [(8, 8, 1, 2), (4, 8, 2, 3)], ids=["identity", "downsample"])
def test_resnet_basic_block_has_no_aten_convolution(cin, cout, stride, launches, dtype):
    torch.manual_seed(7)
    model = ResNetBlock(cin, cout, stride).eval().to(dtype)
    x = torch.randn(2, cin, 8, 8, dtype=dtype)
    with torch.no_grad():
        cm = mlirfuse.compile(model, (x,))
        torch.testing.assert_close(cm(x), model(x), **TOL[dtype])
    assert _convs_left(cm) == [] and cm.stats["unfused_ops"] == 0, unfused_ops(cm)
    assert cm.stats["launches"] == launches and set(_kinds(cm)) == {GroupKind.CONV}, cm.stats


def test_transposed_convolution_stays_aten_with_its_reason():
    torch.manual_seed(8)
    x, w = torch.randn(2, 4, 5, 5), torch.randn(4, 3, 3, 3)
    model = Lambda(lambda x, w: torch.relu(F.conv_transpose2d(x, w, stride=2)))
    with torch.no_grad():
        cm = mlirfuse.compile(model, (x, w), explain=True)
        torch.testing.assert_close(cm(x, w), model(x, w), **TOL[torch.float32])
    assert set(_convs_left(cm)) == {"torch.aten.conv_transpose2d.input"}, unfused_ops(cm)
    reasons = [r for rs in cm.explain().values() for r in rs]
    assert any("transposed convolution" in r for r in reasons), reasons


def test_conv_option_off_leaves_aten_convolutions():
    x, w = torch.randn(1, 2, 4, 4), torch.randn(3, 2, 3, 3)
    model = Lambda(lambda x, w: torch.relu(F.conv2d(x, w, padding=1)))
    with torch.no_grad():
        cm = mlirfuse.compile(model, (x, w), pipeline="mlirfuse-pipeline{conv=false}")
        torch.testing.assert_close(cm(x, w), model(x, w))
    assert _convs_left(cm) == ["torch.aten.conv2d"], unfused_ops(cm)


def test_cost_counts_the_implicit_gemm_flops_and_each_tensor_once():
    x, w = torch.randn(2, 4, 9, 9), torch.randn(6, 2, 3, 3)  # groups 2, stride 2, padding 1: [2, 6, 5, 5]
    cm = _compare(lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=2), x, w)
    assert cm.stats["flops"] == 2 * (2 * 6 * 5 * 5) * (2 * 3 * 3), cm.stats
    assert cm.stats["bytes"] == cm.stats["bytes_lower_bound"] == 4 * (x.numel() + w.numel() + 2 * 6 * 5 * 5), cm.stats


def test_a_policy_sees_conv_epilogues_and_may_veto_them():
    torch.manual_seed(9)
    model, x = ConvBnAct().eval(), torch.randn(2, 3, 6, 6)
    seen = []

    def policy(c):
        seen.append((c.kind, c.producer_kind, c.consumer_kind))
        return "apart" if c.kind == "epilogue" and c.producer_kind == GroupKind.CONV else None

    with torch.no_grad():
        cm = mlirfuse.compile(model, (x,), policy=policy)
        torch.testing.assert_close(cm(x), model(x), **TOL[torch.float32])
    assert ("epilogue", "conv", "pointwise") in seen, seen
    assert cm.stats["launches"] == 2 and _kinds(cm).count(GroupKind.CONV) == 1 and not unfused_ops(cm), cm.stats


def test_training_step_forward_convolutions_are_kernels():
    # torch.compile: the forward graph's convolutions (aten.convolution, BN in training mode after them) run in
    # conv kernels; the backward's convolution_backward stays an ATen call. Outputs and gradients match eager.
    import copy

    from mlirfuse.backend import backend

    torch.manual_seed(11)
    model = ResNetBlock(4, 8, 2).train()
    reference = copy.deepcopy(model)
    x = torch.randn(2, 4, 8, 8)
    torch._dynamo.reset()
    backend.clear()
    out = torch.compile(model, backend=backend)(x)
    out.sum().backward()
    expected = reference(x)
    expected.sum().backward()
    torch.testing.assert_close(out, expected, **TOL[torch.float32])
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-4)
    forward = [g for g in backend.graphs if g.role == "forward"]
    assert forward and backend.stats["forward"]["eager_graphs"] == 0, backend.stats
    kinds = [k.kind for g in forward for k in g.graph.kernels.values()]
    assert kinds.count(GroupKind.CONV) == 3, kinds
    assert not any("convolution" in op for g in forward for op in unfused_ops(g.graph)), [unfused_ops(g.graph) for g in forward]
