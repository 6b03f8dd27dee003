"""Back-to-back GEMMs in one kernel (kind "matmul-chain"): the intermediate rows never leave the chip.

A `matmul-chain` kernel holds two GEMMs (`passes/legality_chain.py` says
when): the first, `X @ W1` with its prologue and epilogue (bias, activation,
casts), computes the hidden `h`, which only the second reads, as its A; the
second, `h @ W2`, has its own epilogue (bias, residual). Each program owns
BLOCK_M rows (M: the row dims both GEMMs share, flattened) of one batch
index (`program_id(1)`: batched GEMMs with the same batch dims, B operands
batched or broadcast as `matmul` broadcasts them):

    rows -> loop over K: X and W1 tiles (prologue ops on them), acc += tl.dot     [BLOCK_M, BLOCK_H]
    -> the first epilogue on that tile -> h, rounded to its dtype as a store would round it
    -> loop over the output's columns, BLOCK_N at a time:
       W2 tile [BLOCK_H, BLOCK_N], acc1 = tl.dot(h, W2 tile), the second epilogue -> masked stores

BLOCK_H is the hidden size padded to a power of two (`hidden_block`): a whole
hidden row is one tile, so the second GEMM has no K loop and h is computed
once per row block, never recomputed, never written. Hidden columns past the
end are -0.0 in h and 0.0 in W2, products that are the sum's identity, as
the single-GEMM template pads K. The numerics are the two kernels': each
GEMM's result is rounded to its dtype before its epilogue, and h to its
dtype before the second dot (what the first kernel stored, the second
loaded). Regions, sites and per-op lines are the GEMM template's
(`lowering/matmul.py`): a site read by two regions is two pointer
parameters, each addressed in its region's space.

Registers per thread (f32 accumulators, compiled): the first accumulator
BLOCK_M x BLOCK_H, h as the second dot's operand, the second accumulator
BLOCK_M x BLOCK_N; `chain_max_hidden` bounds BLOCK_H so that it fits, and
`CHAIN_CONFIGS` below was chosen by compiling the chains for sm_80 / sm_90
(bench/spills.py) with no spill.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlirfuse.dialect import GroupKind
from mlirfuse.ir import block_ops
from mlirfuse.lowering.emitter import (
    KernelEmitter,
    LoweringError,
    TritonKernel,
    cast,
    coords,
    index,
    kernel_params,
    load_sites,
    needs_64bit,
    static_signature,
    stored_value,
)
from mlirfuse.lowering.matmul import MODE_DEPENDENT, GemmEmitter, MatmulConfig, dot_lines, fit_block
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, gemm, hidden_block
from mlirfuse.ops.views import VIEW_OPS


@dataclass(frozen=True)
class Chain:
    """The launch facts of a matmul-chain kernel: its two GEMMs (the first's N is the second's K, the hidden)."""

    first: Gemm
    second: Gemm

    @property
    def dtypes(self) -> tuple[str, str]:
        return self.first.dtype, self.second.dtype


@dataclass(frozen=True)
class ChainConfig(MatmulConfig):
    """Launch parameters of one chain kernel on one target: a GEMM's, and the hidden's block."""

    block_h: int = 16

    def constexprs(self) -> dict[str, int]:
        return {"BLOCK_M": self.block_m, "BLOCK_K": self.block_k, "BLOCK_H": self.block_h, "BLOCK_N": self.block_n}


# target, class (of the wider operand dtype) -> (BLOCK_M, BLOCK_K, BLOCK_N, num_warps, num_stages); BLOCK_H
# follows the hidden size. 8 warps spread the [BLOCK_M, BLOCK_H] accumulator (64 x 256 f32: 64 registers a
# thread). Compiled f32 runs tf32x3 (split operands: more registers), hence its smaller chain_max_hidden
# and narrow tiles: at hidden 128, K 1024, 4096 rows, 64x32x64 (8 warps, 2 stages) spilled 1080 bytes on
# sm_80 and 24 on sm_90, 32x32x32 (4 or 8 warps) 32 to 248; 64x16x16 in one stage: 240 / 163 registers, no
# stack (cuobjdump -res-usage of the AOT cubins, bench/spills.py).
CHAIN_CONFIGS = {
    ("sm_90", "f16"): (64, 32, 32, 8, 2),
    ("sm_90", "f32"): (64, 16, 16, 8, 1),
    ("sm_80", "f16"): (64, 32, 32, 8, 2),
    ("sm_80", "f32"): (64, 16, 16, 8, 1),
    # The interpreter pays per program and per op, not per element: big tiles.
    ("interpreter", "f16"): (64, 128, 64, 4, 1),
    ("interpreter", "f32"): (64, 128, 64, 4, 1),
}


def chain_config(chain: Chain, target: str) -> ChainConfig:
    """Block sizes, warps and stages for `chain` on `target` (sm_80, sm_90 or interpreter; other GPUs: sm_80's)."""
    if target not in ("sm_80", "sm_90", "interpreter"):
        target = "sm_80"
    wide = "f32" if "float32" in chain.dtypes else "f16"
    bm, bk, bn, warps, stages = CHAIN_CONFIGS[(target, wide)]
    g1, g2 = chain.first, chain.second
    return ChainConfig(fit_block(g1.m, bm), fit_block(g2.n, bn), fit_block(g1.k, bk), warps, stages, block_h=hidden_block(g1.n))


def chain_launch(chain: Chain, config: ChainConfig) -> tuple[list[int], tuple[int]]:
    """(size arguments, grid): M, K, H, N and the output's dims; one program per BLOCK_M rows and batch index."""
    g1, g2 = chain.first, chain.second
    return [g1.m, g1.k, g1.n, g2.n, *g2.out], (math.ceil(g1.m / config.block_m), g2.batch_count)


def mode_constants(chain: Chain, interpreted: bool) -> dict:
    """INTERPRETED, where a GEMM's dot is spelled differently in the interpreter (bf16, f32)."""
    return {"INTERPRETED": interpreted} if set(chain.dtypes) & set(MODE_DEPENDENT) else {}


def lower_matmul_chain(kernel) -> TritonKernel:
    """Emit the Triton source of a `matmul-chain` fusion.kernel."""
    name = kernel.attributes["sym_name"].value
    block = kernel.regions[0].blocks[0]
    ops, terminator = block_ops(block)
    inputs, outputs = static_signature(name, block, terminator)
    matmuls = [op for op in ops if op.operation.name in MATMUL_OPS]
    gemms = [gemm(op) for op in matmuls]
    if len(gemms) != 2 or not all(isinstance(g, Gemm) for g in gemms):
        raise LoweringError(f"kernel @{name}: a matmul-chain kernel holds two GEMMs the template takes")
    if gemms[0].out != gemms[1].a_space() or gemms[0].batch != gemms[1].batch:
        raise LoweringError(f"kernel @{name}: the second GEMM's A is not [*batch, rows, hidden] of the first's")
    return _ChainEmitter(name, block, matmuls, gemms).lower(ops, terminator, inputs, outputs)


# The regions of a chain kernel: where each value lives and how its sites are addressed.
REGIONS = ("a", "b", "h", "b2", "out")


class _ChainEmitter(GemmEmitter):
    """The chain's schedule; tiles, results and cones as the GEMM template's (`_load`, `_result`, `_cone`)."""

    def __init__(self, name: str, block, mms: list, gemms: list[Gemm]):
        KernelEmitter.__init__(self, name, block)
        self.mms, self.gemms = mms, gemms
        g1, g2 = gemms
        batch = [(f"b{d}", None) for d in range(g1.batch)]
        rows = batch + [(f"m{d}[:, None]", "mmask[:, None]") for d in g1.rows]
        k_col, k_row = ("rk[None, :]", "kmask[None, :]"), ("rk[:, None]", "kmask[:, None]")
        h_col, h_row = ("rh[None, :]", "hmask[None, :]"), ("rh[:, None]", "hmask[:, None]")
        n_col = ("rn[None, :]", "nmask[None, :]")
        # Each region's space and, per dim, its coordinate expression and the mask keeping it in bounds.
        self.coords = {
            "a": rows + [k_col],
            "b": [h_col, k_row] if g1.b_transposed else batch + [k_row, h_col],
            "h": rows + [h_col],
            "b2": [n_col, h_row] if g2.b_transposed else batch + [h_row, n_col],
            "out": rows + [n_col],
        }
        self.spaces = {"a": g1.a_space(), "b": g1.b_space(), "h": g1.out, "b2": g2.b_space(), "out": g2.out}

    def lower(self, ops, terminator, inputs, outputs) -> TritonKernel:
        (mm1, mm2), (g1, g2) = self.mms, self.gemms
        sites = load_sites(self.name, self.block)
        producer = {r: op for op in ops for r in op.results}
        operand = {"a": mm1.operands[g1.a], "b": mm1.operands[g1.b], "b2": mm2.operands[g2.b]}
        hidden = mm2.operands[g2.a]
        if hidden in sites:
            raise LoweringError(f"kernel @{self.name}: the second GEMM's A is loaded, not the first GEMM's result")
        cones = {region: self._cone(v, producer, sites) for region, v in operand.items()}
        first = {id(op) for op in [mm1, *cones["a"], *cones["b"]]}
        cones["h"] = [op for op in self._cone(hidden, producer, sites) if id(op) not in first]
        if not any(op is mm1 for op in self._cone(hidden, producer, sites)) or any(op is mm2 for op in cones["h"]):
            raise LoweringError(f"kernel @{self.name}: the second GEMM's A is not computed from the first GEMM's result")
        inner = {id(op) for region in ("a", "b", "h", "b2") for op in cones[region]} | {id(mm1), id(mm2)}
        computing = [
            op for op in ops
            if op.operation.name not in VIEW_OPS and op.operation.name != "torch.prim.ListConstruct"
            and not op.operation.name.startswith("torch.constant.")
        ]
        cones["out"] = [op for op in computing if id(op) not in inner]
        # The intermediate lives in the "h" region only: the second epilogue and W2 may not read it.
        computed = {id(op) for op in computing}
        h_values = {r for op in [mm1, *cones["h"]] if id(op) in computed for r in op.results}
        if any(v in h_values for op in cones["out"] + cones["b2"] + [terminator] for v in op.operands):
            raise LoweringError(f"kernel @{self.name}: the first GEMM's result is read elsewhere than the second GEMM's A")
        bias = {"h": mm1.operands[g1.bias] if g1.bias is not None else None,
                "out": mm2.operands[g2.bias] if g2.bias is not None else None}
        readers = {region: cones[region] for region in REGIONS}
        readers["out"] = readers["out"] + [terminator]

        kernel_sites, site_spaces, loads = self.site_params(
            sites, list(REGIONS), operand, readers, lambda region, value: bias.get(region) is not None and value == bias[region]
        )

        # The first GEMM: one K loop over the X and W1 tiles (their prologue ops on the tiles).
        loop = []
        self.out = loop
        tiles = {}
        for region, fill, kmask in (("a", "-0.0", "kmask[None, :]"), ("b", "0.0", "kmask[:, None]")):
            tile = cast(self.region_value(region, operand[region], ops, cones, loads), g1.dtype)
            # K lanes past the end: -0.0 in A and 0.0 in B, each padded product -0.0 (see lowering/matmul.py).
            tiles[region] = self.tmp(f"tl.where({kmask}, {tile}, {fill})", g1.dtype, "K past its end").text
        loop += dot_lines("acc", tiles["a"], tiles["b"], g1.dtype, mm1.operation.name, g1.m)

        # The first epilogue on [BLOCK_M, BLOCK_H]: h, rounded to its dtype (the first kernel's store).
        self.out = self.body
        h = self.region_value("h", hidden, ops, cones, loads, result=mm1)
        h = self.tmp(f"tl.where(hmask[None, :], {cast(h, g2.dtype)}, -0.0)", g2.dtype, "the hidden, as stored; -0.0 past its end")

        # The second GEMM and its epilogue, BLOCK_N output columns at a time.
        cols = []
        self.out = cols
        w2 = cast(self.region_value("b2", operand["b2"], ops, cones, loads), g2.dtype)
        w2 = self.tmp(f"tl.where(hmask[:, None], {w2}, 0.0)", g2.dtype, "hidden past its end")
        cols.append("acc1 = tl.full([BLOCK_M, BLOCK_N], -0.0, dtype=tl.float32)")
        cols += dot_lines("acc1", h.text, w2.text, g2.dtype, mm2.operation.name, g2.m)
        cols.append("mask = mmask[:, None] & nmask[None, :]")
        self.region_value("out", None, ops, cones, loads, result=mm2)
        offset = "(bid * M * N + rm[:, None] * N + rn[None, :])" if g2.batch else "(rm[:, None] * N + rn[None, :])"
        for j, (v, t) in enumerate(zip(terminator.operands, outputs)):
            value = self.env.get(stored_value(v, sites))
            if value is None:
                raise LoweringError(f"kernel @{self.name}: result #{j} is not computed by the second epilogue")
            self.store(f"out{j}", offset, value, t.dtype, "mask")

        wide = needs_64bit(inputs + outputs, g2.out)  # 64-bit row, K, column and batch indices
        lines = [
            "pid = tl.program_id(0)",
            f"rm = {index('pid * BLOCK_M + tl.arange(0, BLOCK_M)', wide)}",
            "mmask = rm < M",
            *([f"bid = {index('tl.program_id(1)', wide)}", *coords("bid", list(range(g1.batch)), "b")] if g1.batch else []),
            *coords("rm", list(g1.rows), "m"),
            "rh = tl.arange(0, BLOCK_H)",
            "hmask = rh < H",
            "acc = tl.full([BLOCK_M, BLOCK_H], -0.0, dtype=tl.float32)",
            "for k in range(0, K, BLOCK_K):",
            f"    rk = {index('k + tl.arange(0, BLOCK_K)', wide)}",
            "    kmask = rk < K",
            *("    " + line for line in loop),
            *self.body,
            "for n in range(0, N, BLOCK_N):",
            f"    rn = {index('n + tl.arange(0, BLOCK_N)', wide)}",
            "    nmask = rn < N",
            *("    " + line for line in cols),
        ]
        sizes = ["M", "K", "H", "N"] + [f"s{d}" for d in range(len(g2.out))]
        params = kernel_params(kernel_sites, len(outputs), len(self.scalars), sizes, [len(space) for space in site_spaces])
        chain = Chain(g1, g2)
        blocks = ["BLOCK_M", "BLOCK_K", "BLOCK_H", "BLOCK_N"] + list(mode_constants(chain, False))
        header = [
            f"Back-to-back GEMMs: {list(g1.a_space())} x {list(g1.b_space())} -> hidden {list(g1.out)} ({g1.dtype}), "
            f"then x {list(g2.b_space())} -> {list(g2.out)} ({g2.dtype}); M = {g1.m}, K = {g1.k}, H = {g1.n}, N = {g2.n}.",
            "Each program keeps its rows of the hidden on chip (never written); f32 accumulation.",
        ]
        source = self.render(header, params, blocks, lines)
        return TritonKernel(
            self.name, source, tuple(inputs), tuple(outputs), tuple(self.scalars), tuple(params),
            kind=GroupKind.MATMUL_CHAIN, sites=tuple(kernel_sites), space=g2.out, site_spaces=tuple(site_spaces),
            template=chain,
        )


__all__ = ["CHAIN_CONFIGS", "Chain", "ChainConfig", "chain_config", "chain_launch", "lower_matmul_chain", "mode_constants"]
