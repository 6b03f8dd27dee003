"""Convolution kernels: an implicit-GEMM `tl.dot` template hosting a prologue and an epilogue.

A `conv` kernel holds one convolution (`mlirfuse.ops.conv.conv`), the ops
computing its input and weight from kernel inputs (the prologue: a cast, an
activation, recomputed on each tile) and the ops consuming its result (the
epilogue: bias, batch norm in inference, activation, residual). Each
program computes one BLOCK_M x BLOCK_N tile of one group's GEMM
(`program_id(1)` is the group of channels):

    pid -> (pid_m, pid_n) as the GEMM template swizzles them
    -> rows rm = (n, oh, ow) of the result, columns co = output channels of the group
    -> loop over K = (ci, ky, kx): the A tile gathered from the input at
       ih = oh * stride - padding + ky * dilation (masked outside the input:
       zero padding is a mask, never a copy), the B tile from the weight,
       prologue ops on both, acc += tl.dot
    -> epilogue on [BLOCK_M, BLOCK_N] tiles in the result's [N, Cout, (Hout,) Wout]
       space -> masked stores into the contiguous result.

Numerics and dots are the GEMM template's (`lowering/matmul.py`): f32
accumulation (IEEE in the interpreter, tf32x3 compiled), f16/bf16 on tensor
cores, the result rounded to its dtype before the epilogue reads it. Every
site is addressed through its strides in its region's space (the input's,
the weight's, the result's), so channels-last tensors are read in place.
Block sizes, warps and stages: the GEMM template's `matmul_config`.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.dialect import GroupKind
from mlirfuse.ir import block_ops
from mlirfuse.lowering.emitter import (
    KernelEmitter,
    LoweringError,
    TritonKernel,
    Value,
    cast,
    kernel_params,
    load_sites,
    static_signature,
    stored_value,
)
from mlirfuse.lowering.matmul import MODE_DEPENDENT, GemmEmitter, MatmulConfig, dot_lines, matmul_config
from mlirfuse.ops.conv import CONV_OPS, Conv, conv
from mlirfuse.ops.views import VIEW_OPS


def lower_conv(kernel) -> TritonKernel:
    """Emit the Triton source of a `conv` fusion.kernel."""
    name = kernel.attributes["sym_name"].value
    block = kernel.regions[0].blocks[0]
    ops, terminator = block_ops(block)
    inputs, outputs = static_signature(name, block, terminator)
    convs = [op for op in ops if op.operation.name in CONV_OPS]
    found = conv(convs[0]) if len(convs) == 1 else "not one convolution"
    if not isinstance(found, Conv):
        raise LoweringError(f"kernel @{name}: a conv kernel holds one convolution the template takes ({found})")
    return _ConvEmitter(name, block, convs[0], found).lower(ops, terminator, inputs, outputs)


# Compiled, the gathered A tile costs registers a GEMM's does not: its [BLOCK_M, BLOCK_K] offsets and
# padding masks are computed per element (a GEMM's advance by a stride). The GEMM's table holds but for
# f16/bf16 on sm_90, where 128 x 128 tiles spilled 40 and 648 bytes (ResNet-18's strided block at batch
# 8 in bf16, tests/test_conv_aot.py); 128 x 64: 128 registers, no stack. target, class -> most BLOCK_N.
CONV_MAX_BLOCK_N = {("sm_90", "f16"): 64}


def conv_config(c: Conv, target: str) -> MatmulConfig:
    """Block sizes, warps and stages for `c` on `target`: the GEMM template's (`matmul_config`), BLOCK_N capped by CONV_MAX_BLOCK_N."""
    config = matmul_config(c, target, conv=True)
    cap = CONV_MAX_BLOCK_N.get((target, "f32" if c.dtype == "float32" else "f16"), config.block_n)
    return dataclasses.replace(config, block_n=min(config.block_n, cap))


def _affine(out: str, stride: int, padding: int, tap: str, dilation: int) -> str:
    """`out * stride - padding + tap * dilation`, trivial terms left out: an input coordinate."""
    text = out if stride == 1 else f"{out} * {stride}"
    text += f" - {padding}" if padding else ""
    return f"{text} + {tap}" + (f" * {dilation}" if dilation != 1 else "")


# The regions of a conv kernel: the input (A), the weight (B), the bias (per output channel) and the result.
REGIONS = ("a", "b", "bias", "out")


class _ConvEmitter(GemmEmitter):
    """The implicit-GEMM schedule; loads, cones and per-region lines are the GEMM template's."""

    def __init__(self, name: str, block, op, c: Conv):
        KernelEmitter.__init__(self, name, block)
        self.mms, self.c = [op], c
        self.wide, self.batch, self.rows = False, [], []  # 32-bit offsets (ops/conv.py refuses larger tensors)
        # Masks per dim (a value broadcast along a dim skips its mask): rows, K and output channels, and the
        # input positions that fall in the padding (none where the window never leaves the input).
        (h_inside, w_inside) = self._inside()
        spatial_a = [("ih", "hmask" if h_inside else None), ("iw", "wmask" if w_inside else None)][2 - c.spatial:]
        spatial_b = [("ky[:, None]", "kmask[:, None]"), ("kx[:, None]", "kmask[:, None]")][2 - c.spatial:]
        spatial_out = [("oh[:, None]", "mmask[:, None]"), ("ow[:, None]", "mmask[:, None]")][2 - c.spatial:]
        cin = f"(gid * {c.w[1]} + ci[None, :])" if c.groups > 1 else "ci[None, :]"
        self.coords = {
            "a": [("on[:, None]", "mmask[:, None]"), (cin, "kmask[None, :]"), *spatial_a],
            "b": [("co[None, :]", "nmask[None, :]"), ("ci[:, None]", "kmask[:, None]"), *spatial_b],
            "bias": [("co[None, :]", "nmask[None, :]")],
            "out": [("on[:, None]", "mmask[:, None]"), ("co[None, :]", "nmask[None, :]"), *spatial_out],
        }
        self.spaces = {"a": c.x, "b": c.w, "bias": (c.w[0],), "out": c.out}

    def lower(self, ops, terminator, inputs, outputs) -> TritonKernel:
        c, op = self.c, self.mms[0]
        sites = load_sites(self.name, self.block, cat_of_inputs=False)
        producer = {r: o for o in ops for r in o.results}
        operand = {"a": op.operands[0], "b": op.operands[1]}
        bias = op.operands[c.bias] if c.bias is not None else None
        cones = {region: self._cone(v, producer, sites) for region, v in operand.items()}
        inner = {id(o) for region in ("a", "b") for o in cones[region]} | {id(op)}
        computing = [
            o for o in ops
            if o.operation.name not in VIEW_OPS and o.operation.name != "torch.prim.ListConstruct"
            and not o.operation.name.startswith("torch.constant.")
        ]
        cones["out"], cones["bias"] = [o for o in computing if id(o) not in inner], []
        prologue = {r for region in ("a", "b") for o in cones[region] for r in o.results}
        if any(v in prologue for o in cones["out"] + [terminator] for v in o.operands):
            raise LoweringError(f"kernel @{self.name}: the epilogue reads a value the prologue computes per tile")
        readers = {region: cones[region] for region in REGIONS}
        readers["out"] = readers["out"] + [terminator]
        kernel_sites, site_spaces, loads = self.site_params(
            sites, list(REGIONS), operand, readers, lambda region, value: region == "bias" and bias is not None and value == bias
        )
        self.bias_loads = loads["bias"]

        # The K loop: input and weight tiles (their prologue ops on the tiles), masked, then the dot.
        loop = []
        self.out = loop
        tiles = {}
        for region in ("a", "b"):
            tile = cast(self.region_value(region, operand[region], ops, cones, loads), c.dtype)
            if cones[region]:
                # Masked loads give 0 there; a prologue may not (exp(0) is 1): zero where the input is padding
                # (eager pads the prologue's result) and past K.
                tile = self.tmp(f"tl.where({self._tile_mask(region)}, {tile}, 0.0)", c.dtype, "padding and past K: 0").text
            tiles[region] = tile
        loop += dot_lines("acc", tiles["a"], tiles["b"], c.dtype, op.operation.name, c.m)

        # The epilogue, on [BLOCK_M, BLOCK_N] tiles of the result.
        self.out = self.body
        self.body.append("mask = mmask[:, None] & nmask[None, :]")
        self.region_value("out", None, ops, cones, loads, result=op)
        hw_out = c.out[2] * (c.out[3] if c.spatial == 2 else 1)
        offset = f"(on[:, None] * {c.out[1] * hw_out} + co[None, :] * {hw_out} + opos[:, None])"
        for j, (v, t) in enumerate(zip(terminator.operands, outputs)):
            value = self.env.get(stored_value(v, sites))
            if value is None:
                raise LoweringError(f"kernel @{self.name}: result #{j} is not computed by the epilogue")
            self.store(f"out{j}", offset, value, t.dtype, "mask")

        lines = self._head() + self._coordinates(hw_out)
        lines += ["acc = tl.full([BLOCK_M, BLOCK_N], 0.0, dtype=tl.float32)", "for k in range(0, K, BLOCK_K):"]
        lines += ["    " + line for line in self._taps() + loop]
        lines += self.body
        sizes = ["M", "N", "K"] + [f"s{d}" for d in range(len(c.out))]
        params = kernel_params(kernel_sites, len(outputs), len(self.scalars), sizes, [len(space) for space in site_spaces])
        blocks = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"] + (["INTERPRETED"] if c.dtype in MODE_DEPENDENT else [])
        window, dims = " x ".join(map(str, c.w[2:])), slice(2 - c.spatial, None)  # a conv1d's facts without its H
        end = f" ({[p + e for p, e in zip(c.padding, c.padding_end)][dims]} at the end)" if any(c.padding_end) else ""
        header = [
            f"Convolution {list(c.x)} * {list(c.w)} -> {list(c.out)} ({c.dtype}): {window} window, stride {list(c.stride[dims])}, "
            f"padding {list(c.padding[dims])}{end}, dilation {list(c.dilation[dims])}, {c.groups} group(s).",
            f"Implicit GEMM per group: M = {c.m} (batch, position), N = {c.n} (output channels), "
            f"K = {c.k} (input channel, tap); f32 accumulation; operands addressed through their strides.",
        ]
        source = self.render(header, params, blocks, lines)
        return TritonKernel(
            self.name, source, tuple(inputs), tuple(outputs), tuple(self.scalars), tuple(params),
            kind=GroupKind.CONV, sites=tuple(kernel_sites), space=c.out, site_spaces=tuple(site_spaces), template=c,
        )

    def _coordinates(self, hw_out: int) -> list[str]:
        """The group, output channels and (n, oh, ow) of the rows."""
        c = self.c
        lines = ["gid = tl.program_id(1)  # the group of channels"] if c.groups > 1 else []
        lines += [
            "co = gid * N + rn  # output channels" if c.groups > 1 else "co = rn  # output channels",
            f"on = rm // {hw_out}",
            f"opos = rm % {hw_out}",
        ]
        if c.spatial == 2:
            lines += [f"oh = opos // {c.out[3]}", f"ow = opos % {c.out[3]}"]
        else:
            lines += ["ow = opos"]
        return lines

    def _inside(self) -> tuple[str | None, str | None]:
        """The conditions keeping H and W input positions inside the input; None for a dim whose window never leaves it."""
        c = self.c
        found = []
        for d, (size, kernel) in enumerate(zip(c.hw(c.x), c.hw(c.w))):
            reach = (c.hw(c.out)[d] - 1) * c.stride[d] + (kernel - 1) * c.dilation[d] - c.padding[d]
            name = "ih" if d == 0 else "iw"
            found.append(f"({name} >= 0) & ({name} < {size})" if c.padding[d] or reach > size - 1 else None)
        return found[0], found[1]

    def _taps(self) -> list[str]:
        """K coordinates (input channel, kernel tap), the input positions they read and the padding's masks."""
        c = self.c
        (kh, kw), (h_inside, w_inside) = c.hw(c.w), self._inside()
        lines = ["rk = k + tl.arange(0, BLOCK_K)", "kmask = rk < K", f"ci = rk // {kh * kw}"]
        if c.spatial == 2:
            lines += [f"ky = (rk % {kh * kw}) // {kw}", f"kx = rk % {kw}"]
            lines.append(f"ih = {_affine('oh[:, None]', c.stride[0], c.padding[0], 'ky[None, :]', c.dilation[0])}")
            lines += [f"hmask = {h_inside}"] if h_inside else []
        else:
            lines.append(f"kx = rk % {kw}")
        lines.append(f"iw = {_affine('ow[:, None]', c.stride[1], c.padding[1], 'kx[None, :]', c.dilation[1])}")
        lines += [f"wmask = {w_inside}"] if w_inside else []
        return lines

    def _tile_mask(self, region: str) -> str:
        """Where `region`'s tile holds operand values: in the input (not padding) and before K's end, or before N's."""
        if region == "b":
            return "kmask[:, None] & nmask[None, :]"
        h_inside, w_inside = self._inside()
        return " & ".join(["mmask[:, None] & kmask[None, :]"] + (["hmask"] if h_inside else []) + (["wmask"] if w_inside else []))

    def _result(self, i: int) -> Value:
        """The convolution's tile: acc (+ its bias per output channel), rounded to the result's dtype as eager stores it."""
        c, op = self.c, self.mms[0]
        value = Value("acc", "float32")
        if c.bias is not None:
            bias = op.operands[c.bias]
            for v, kname, site, raw in self.bias_loads:
                if v == bias:
                    loaded = self._load("bias", v, kname, site, raw)
                    value = self.tmp(f"{loaded.text} + acc", "float32", f"{op.operation.name} bias")
        if c.dtype != "float32":
            value = self.tmp(f"{cast(value, c.dtype)}.to(tl.float32)", "float32", f"rounded to {c.dtype}")
        return value


__all__ = ["CONV_MAX_BLOCK_N", "conv_config", "lower_conv"]
