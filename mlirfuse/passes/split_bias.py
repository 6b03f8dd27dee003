"""fusion-split-bias: take the bias add out of linear, addmm and convolutions.

`linear(x, w, b)` and `addmm(b, m1, m2)` add their bias inside the matmul
call, so the elementwise op that follows (gelu, relu, a residual add) needs a
kernel of its own. Split off, the bias add is an ordinary `add.Tensor` that
`fusion-fuse-elementwise` groups with that epilogue: `gelu(fc1(x))` becomes
one matmul without bias plus one kernel computing bias-add + gelu.
A matmul whose result feeds no fusible op (a view, another matmul) keeps
its bias: splitting it would only add a kernel.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.ir import (
    NO_CONSTANT,
    TorchBuilder,
    constant_value,
    ir,
    static_tensor_types,
    tensor_type,
)
from mlirfuse.ops.elementwise import fusible
from mlirfuse.ops.reductions import REDUCTIONS
from mlirfuse.passes.base import ModulePass, apply_patterns, pattern


def _bias_fits(bias, out) -> bool:
    """`bias` broadcasts into `out` without widening its shape or changing its dtype."""
    if bias.dtype != out.dtype or len(bias.shape) > len(out.shape):
        return False
    return all(d in (1, o) for d, o in zip(reversed(bias.shape), reversed(out.shape)))


def _feeds_fusible_op(op) -> bool:
    """Splitting only pays when the bias add will join an elementwise op or
    reduction that reads the result; otherwise it would add a kernel."""
    return any(
        fusible(use.owner) or use.owner.operation.name in REDUCTIONS for use in op.results[0].uses
    )


def _add_bias(op, rewriter, name: str, matmul_operands, bias) -> None:
    """Replace `op` by `name(*matmul_operands)` (same result type) + `add.Tensor(_, bias, 1)`."""
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    out = tensor_type(op.results[0].type)
    operands = [v if v is not None else b.none() for v in matmul_operands]
    y = b.op(name, operands, out.shape, out.dtype)
    rewriter.replace_op(op, [b.op("torch.aten.add.Tensor", [y, bias, b.int(1)], out.shape, out.dtype)])


_ROW_VIEWS = ("torch.aten.view", "torch.aten.reshape", "torch.aten._unsafe_view")


def _row_view_source(value: ir.Value):
    """`x` where `value` is `x` viewed as [M, K] by merging its leading dims (a flattened linear's input), else None."""
    op = value.owner
    if not isinstance(op, ir.OpView) or op.operation.name not in _ROW_VIEWS:
        return None
    x = op.operands[0]
    types = static_tensor_types(x, value)
    if types is None or len(types[0].shape) < 3 or len(types[1].shape) != 2:
        return None
    (xt, flat) = types
    if flat.shape[1] != xt.shape[-1] or flat.shape[0] != xt.numel // max(xt.shape[-1], 1):
        return None
    return x


@pattern
def unflatten_row_matmul(op, rewriter) -> bool:
    """view(mm(view(x, [M, K]), B), [*lead, N]) = matmul(x, B); addmm(b, ...) likewise, + b.

    AOTAutograd spells `linear` over [*lead, K] as view -> mm/addmm -> view;
    the views around the product hide its epilogue (a gelu, a residual add
    over [*lead, N]) from the GEMM and its bias from fusion-split-bias.
    Written back as one matmul over x's own rows (the GEMM template flattens
    them itself), both fuse as they do in inference graphs.
    """
    addmm = op.operation.name == "torch.aten.addmm"
    bias, m1, m2 = (op.operands[0], op.operands[1], op.operands[2]) if addmm else (None, op.operands[0], op.operands[1])
    if addmm:
        for scale in list(op.operands)[3:5]:
            value = constant_value(scale)
            if value is NO_CONSTANT or isinstance(value, bool) or value != 1:
                return False
    x = _row_view_source(m1)
    types = static_tensor_types(op.results[0], m2)
    if x is None or types is None or len(types[1].shape) != 2:
        return False
    product = types[0]
    lead = tensor_type(x.type).shape[:-1]
    unflat = (*lead, product.shape[1])
    # The view back to [*lead, N]; other readers (a saved activation) get the result viewed as [M, N] again.
    out_view = next(
        (u.owner for u in op.results[0].uses
         if u.owner.operation.name in _ROW_VIEWS and tensor_type(u.owner.results[0].type) is not None
         and tensor_type(u.owner.results[0].type).shape == unflat),
        None,
    )
    if out_view is None:
        return False
    if addmm:
        bias_type = tensor_type(bias.type)
        if bias_type is None or not _bias_fits(bias_type, tensor_type(out_view.results[0].type)):
            return False
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    y = b.op("torch.aten.matmul", [x, m2], unflat, product.dtype)
    if addmm:
        y = b.op("torch.aten.add.Tensor", [y, bias, b.int(1)], unflat, product.dtype)
    rewriter.replace_op(out_view, [y])
    if any(True for _ in op.results[0].uses):
        rewriter.replace_op(op, [b.view(y, product.shape, product.dtype)])
    else:
        rewriter.erase_op(op)
    return True


@pattern
def split_linear_bias(op, rewriter) -> bool:
    """linear(x, w, b) = add(linear(x, w, None), b)."""
    x, w, bias = op.operands
    if constant_value(bias) is None or not _feeds_fusible_op(op):
        return False  # no bias (torch.constant.none), or nothing to fuse the add with
    types = static_tensor_types(x, w, bias, op.results[0])
    if types is None or not _bias_fits(types[2], types[3]):
        return False
    _add_bias(op, rewriter, "torch.aten.linear", [x, w, None], bias)
    return True


@pattern
def split_addmm_bias(op, rewriter) -> bool:
    """addmm(b, m1, m2, beta=1, alpha=1) = add(mm(m1, m2), b)."""
    bias, m1, m2, beta, alpha = op.operands
    if not _feeds_fusible_op(op):
        return False
    # beta scales the bias and alpha the product; anything but 1 would need muls.
    for scale in (beta, alpha):
        value = constant_value(scale)
        if value is NO_CONSTANT or isinstance(value, bool) or value != 1:
            return False
    types = static_tensor_types(bias, m1, m2, op.results[0])
    if types is None or not _bias_fits(types[0], types[3]):
        return False
    _add_bias(op, rewriter, "torch.aten.mm", [m1, m2], bias)
    return True


@pattern
def split_conv_bias(op, rewriter) -> bool:
    """conv2d(x, w, b, ...) = add(conv2d(x, w, None, ...), b viewed as [C, 1, 1]); convolution likewise."""
    x, w, bias = list(op.operands)[:3]
    if constant_value(bias) is None or not _feeds_fusible_op(op):
        return False
    types = static_tensor_types(x, w, bias, op.results[0])
    if types is None or len(types[3].shape) < 3 or types[2].dtype != types[3].dtype:
        return False
    channels = types[3].shape[1]
    if types[2].shape != (channels,):
        return False
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    per_channel = [channels] + [1] * (len(types[3].shape) - 2)  # broadcasts against [N, C, ...]
    viewed = b.view(bias, per_channel, types[2].dtype)
    rest = list(op.operands)[3:]
    _add_bias(op, rewriter, op.operation.name, [x, w, None, *rest], viewed)
    return True


PATTERNS = [
    ("torch.aten.mm", unflatten_row_matmul),
    ("torch.aten.addmm", unflatten_row_matmul),
    ("torch.aten.linear", split_linear_bias),
    ("torch.aten.addmm", split_addmm_bias),
    ("torch.aten.conv2d", split_conv_bias),
    ("torch.aten.convolution", split_conv_bias),
]


@dataclasses.dataclass(frozen=True)
class SplitBias(ModulePass):
    """Split the bias add out of linear, addmm (beta = alpha = 1) and conv2d/convolution into an add.Tensor that fuses with the following elementwise ops.

    linear(x, w, b) becomes linear(x, w, None) + b, addmm(b, m1, m2)
    becomes mm(m1, m2) + b, conv2d(x, w, b, ...) becomes conv2d(x, w, None,
    ...) + b viewed per channel. Ops without a bias, with dynamic shapes, or
    with beta or alpha other than 1 stay whole. First, an mm/addmm between a
    view merging x's leading dims and a view splitting them back (AOTAutograd's
    linear) becomes matmul(x, B) (+ b) over x's own rows.
    """

    name = "fusion-split-bias"

    def apply(self, module: ir.Operation, am=None) -> None:
        apply_patterns(module, PATTERNS)
