"""The convolutions mlirfuse computes as Triton implicit GEMMs, and the shape facts of each.

`conv(op)` reads one `conv1d` / `conv2d` / `convolution` and returns a
`Conv` (what the template needs) or the reason it stays an ATen call. The
fusion pass (`passes/fuse_matmul.py`), the dialect's verifier, the cost
model and the lowering (`lowering/conv.py`) all ask here.

Implicit GEMM, one per group of channels (`groups`; depthwise when each
group is one channel): the result's `[N, Cout, *spatial]` is a GEMM of

    M = N * Hout * Wout rows (batch and output position),
    N = Cout / groups columns (output channels of the group),
    K = Cin / groups * kh * kw (input channel and kernel tap),

whose A tile is gathered from the input at `oh * stride - padding + ky *
dilation` (zero outside it: the padding is a mask, never a copy) and whose
B tile is the `[Cout, Cin/groups, kh, kw]` weight read through its strides.
A conv1d is the same with no H dim. Input and weight are addressed through
their strides, so a channels-last input is read where it lies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlirfuse.ir import constant_int_list, constant_value, tensor_type
from mlirfuse.ops.family import Family, refusal
from mlirfuse.ops.matmul import GEMM_DTYPES, MAX_BATCH

# `conv*d.padding`: padding given as "same" or "valid", made explicit here.
CONV_OPS = frozenset((
    "torch.aten.conv1d", "torch.aten.conv2d", "torch.aten.convolution", "torch.aten.conv1d.padding", "torch.aten.conv2d.padding",
))
# Kept whole (never decomposed) and left to ATen, each with its reason (`conv`).
REFUSED_CONV_OPS = frozenset((
    "torch.aten.conv3d", "torch.aten.conv3d.padding",
    "torch.aten.conv_transpose1d", "torch.aten.conv_transpose2d.input", "torch.aten.conv_transpose3d.input",
))
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Conv:
    """One convolution's facts; sizes of 2-d form (a conv1d has kh = h = hout = 1, stride/padding/dilation 1/0/1 in H)."""

    bias: int | None  # operand position of the bias, added to the accumulator
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]
    groups: int
    x: tuple[int, ...]  # the input's shape, [N, Cin, (H,) W]
    w: tuple[int, ...]  # the weight's, [Cout, Cin / groups, (kh,) kw]
    out: tuple[int, ...]  # the result's, [N, Cout, (Hout,) Wout]: the epilogue's space
    dtype: str
    # Padding at the end beyond `padding` at the start, per (H, W): a "same" of an even window pads the end one more.
    padding_end: tuple[int, int] = (0, 0)
    # What matmul_config and the GEMM launch read of a template (lowering/matmul.py).
    k_extra: tuple[int, ...] = ()
    siblings: int = 1
    wide: bool = False
    outputs: int = 1
    epilogue_tiles: int = 0

    @property
    def spatial(self) -> int:
        """1 (conv1d) or 2."""
        return len(self.x) - 2

    def hw(self, shape: tuple[int, ...]) -> tuple[int, int]:
        """(H, W) of a `[.., .., (H,) W]` shape."""
        return (1, shape[-1]) if self.spatial == 1 else (shape[-2], shape[-1])

    @property
    def m(self) -> int:
        return self.out[0] * math.prod(self.out[2:])

    @property
    def n(self) -> int:
        return self.out[1] // self.groups

    @property
    def k(self) -> int:
        return math.prod(self.w[1:])

    @property
    def batch_count(self) -> int:
        """Programs along grid axis 1: one per group of channels."""
        return self.groups

    @property
    def gemm_flops(self) -> int:
        """2 * N * Cout * Hout * Wout * Cin / groups * kh * kw: the implicit GEMMs' multiply-adds."""
        return 2 * math.prod(self.out) * self.k

    @property
    def flops(self) -> int:
        """The GEMMs' FLOPs and, with a bias, one more per result element."""
        return self.gemm_flops + (math.prod(self.out) if self.bias is not None else 0)


def _pair(value, spatial: int, name: str) -> tuple[int, int] | str:
    items = constant_int_list(value)
    if items is None or len(items) not in (1, spatial) or (name != "padding" and min(items) < 1) or min(items) < 0:
        return f"{name} is not a constant list of {spatial} non-negative ints"
    items = items * spatial if len(items) == 1 else items
    return (1 if name != "padding" else 0, items[0]) if spatial == 1 else (items[0], items[1])


def _named_padding(mode, window, dilation) -> tuple[tuple[int, int], tuple[int, int]] | str:
    """"valid" or "same" padding as explicit (H, W) padding at the start and the end's extra, or why not.

    "same" pads d * (k - 1) in all, the end one more where that is odd (as eager does).
    """
    if mode == "valid":
        return (0, 0), (0, 0)
    if mode != "same" or isinstance(dilation, str):
        return f"padding {mode!r} (the template takes explicit padding, 'valid' and 'same')"
    total = [d * (k - 1) for d, k in zip(dilation[2 - len(window):], window)]
    start, extra = [t // 2 for t in total], [t % 2 for t in total]
    return ((0, start[0]), (0, extra[0])) if len(total) == 1 else ((start[0], start[1]), (extra[0], extra[1]))


def conv(op) -> Conv | str:
    """The implicit GEMM `op` computes, or why it stays an ATen call."""
    name = op.operation.name
    if name in REFUSED_CONV_OPS:
        if "transpose" in name:
            return "a transposed convolution (the template computes forward convolutions only)"
        return "a 3-d convolution (the template takes 1-d and 2-d)"
    if name not in CONV_OPS:
        return "not a convolution"
    operands = list(op.operands)
    groups_at = 8 if name == "torch.aten.convolution" else 6
    if name == "torch.aten.convolution":
        if constant_value(operands[6]) is not False:
            return "a transposed convolution (the template computes forward convolutions only)"
        if constant_int_list(operands[7]) is None or any(constant_int_list(operands[7])):
            return "output_padding is not zeros"
    tx, tw, out = (tensor_type(v.type) for v in (operands[0], operands[1], op.results[0]))
    if any(t is None or not t.is_static for t in (tx, tw, out)):
        return "an operand or the result is not a statically shaped tensor"
    spatial = len(tw.shape) - 2
    if spatial not in (1, 2):
        return f"a {spatial}-d convolution (the template takes 1-d and 2-d)"
    if len(tx.shape) != spatial + 2:
        return "an unbatched input (the template takes [N, C, (H,) W])"
    bias = None if constant_value(operands[2]) is None else 2
    tb = tensor_type(operands[2].type) if bias is not None else None
    if tx.dtype not in GEMM_DTYPES or {tx.dtype, tw.dtype, out.dtype, tb.dtype if tb else out.dtype} != {tx.dtype}:
        return f"dtypes {tx.dtype} * {tw.dtype} -> {out.dtype} (the template takes f32/f16/bf16, all alike)"
    facts = [_pair(operands[i], spatial, what) for i, what in ((3, "stride"), (4, "padding"), (5, "dilation"))]
    end = (0, 0)
    if name.endswith(".padding"):
        named = _named_padding(constant_value(operands[4]), tw.shape[2:], facts[2])
        facts[1], end = named if not isinstance(named, str) else (named, end)
    why = next((f for f in facts if isinstance(f, str)), None)
    if why:
        return why
    groups = constant_value(operands[groups_at])
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        return "groups is not a constant positive int"
    if groups > MAX_BATCH:
        return f"{groups} groups > {MAX_BATCH}"
    if tb is not None and tuple(tb.shape) != (tw.shape[0],):
        return "the bias is not one value per output channel"
    c = Conv(bias, *facts, groups, tuple(tx.shape), tuple(tw.shape), tuple(out.shape), out.dtype, end)
    if why := _why_not_consistent(c):
        return why
    if 0 in (c.m, c.n, c.k):
        return "an empty dimension"
    if max(tx.numel, tw.numel, out.numel) > _INT32_MAX:
        return "a tensor past 2^31 - 1 elements (the template indexes in 32 bits)"
    return c


def _why_not_consistent(c: Conv) -> str | None:
    """Why the shapes do not fit together as eager's convolution would make them (malformed IR), or None."""
    if c.x[1] != c.w[1] * c.groups or c.w[0] % c.groups or c.out[:2] != (c.x[0], c.w[0]):
        return "channels, groups and the weight's shape disagree"
    for size, kernel, s, p, e, d, got in zip(c.hw(c.x), c.hw(c.w), c.stride, c.padding, c.padding_end, c.dilation, c.hw(c.out)):
        if (size + 2 * p + e - d * (kernel - 1) - 1) // s + 1 != got:
            return "the result's spatial size is not the convolution's"
    return None


FAMILY = Family(
    __name__, CONV_OPS | REFUSED_CONV_OPS, refusal(conv), lowering="mlirfuse/lowering/conv.py",
    limits="1-d and 2-d forward convolutions, f32, f16 or bf16 alike, statically shaped, zero padding (explicit, "
    "'valid' or 'same'); transposed and 3-d convolutions stay ATen calls",
)

__all__ = ["CONV_OPS", "FAMILY", "REFUSED_CONV_OPS", "Conv", "conv"]
