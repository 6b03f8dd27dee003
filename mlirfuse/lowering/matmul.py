"""GEMM kernels: a tiled `tl.dot` template hosting a prologue and an epilogue.

A `matmul` kernel holds one GEMM (`mlirfuse.ops.matmul.gemm`), the ops that
compute its operands from kernel inputs (the prologue: views read by
strides, casts, scales) and the ops that consume its result (the epilogue:
bias, activation, residual, cast, several outputs). Each program computes
one BLOCK_M x BLOCK_N tile of the result, for one batch index
(`program_id(1)`):

    pid -> (pid_m, pid_n), grouped GROUP_M rows at a time for L2 reuse
    -> row / column / batch coordinates
    -> loop over K: load A and B tiles (prologue ops on the tiles), acc += tl.dot
       (an operand that is a cat along K: one loop per piece, see _MatmulEmitter)
    -> epilogue: one line per op on [BLOCK_M, BLOCK_N] tiles -> masked stores
    (-> a sum of A over K, a bias gradient beside its weight gradient: the rows
       of each A tile added as it is loaded, stored by the programs of the
       first column of tiles; `ops.matmul.why_not_k_sum`)

f32 accumulation always; f32 operands multiply in IEEE f32 (no TF32, as
eager), f16/bf16 on tensor cores. The GEMM's own result is rounded to its
dtype before the epilogue reads it, as eager stores it. Every load site is
addressed through its strides in the space of the region reading it (A:
`[*batch, *rows, K]`, B: `[*batch, K, N]` or linear's `[N, K]`, epilogue:
the result's `[*batch, *rows, N]`); a site read by two regions is two
pointer parameters. Masks cover sizes that are not multiples of the blocks.

Prologue and epilogue lines come from the same `KernelEmitter.emit_op` as
pointwise kernels. Block sizes, warps and stages: `matmul_config` below.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from mlirfuse.dialect import GroupKind
from mlirfuse.ir import block_ops, constant_value, op_id, tensor_type
from mlirfuse.lowering.dynamic import dynamic_sizes
from mlirfuse.lowering.emitter import (
    KernelEmitter,
    LoweringError,
    Site,
    TritonKernel,
    Value,
    cast,
    coords,
    index,
    kernel_params,
    load_sites,
    needs_64bit,
    static_signature,
)
from mlirfuse.ops.dtypes import TRITON_DTYPES
from mlirfuse.ops.elementwise import compute_dtype
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, gemm, k_split, row_sum_of_a, why_not_k_sum
from mlirfuse.ops.reductions import REDUCTIONS, reduction
from mlirfuse.ops.views import RESHAPES, VIEW_OPS, relayout_offset, relayout_op, relayout_strides, walk_views


@dataclass(frozen=True)
class MatmulConfig:
    """Launch parameters of one GEMM kernel on one target."""

    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int
    group_m: int = 8

    def constexprs(self) -> dict[str, int]:
        return {"BLOCK_M": self.block_m, "BLOCK_N": self.block_n, "BLOCK_K": self.block_k, "GROUP_M": self.group_m}


# The largest tile per target and operand class, used when the problem fills
# it; smaller problems get the next power of two of each size (at least 16,
# tl.dot's minimum). Shared memory is (BLOCK_M + BLOCK_N) * BLOCK_K * bytes
# * stages: at most 96 KiB here (sm_80 has 163 KiB per block, sm_90 227 KiB).
# Compiled f32 runs as tf32x3 on the tensor cores (see _dot). Chosen by
# compiling a GEMM with a gelu epilogue for each target (cuobjdump -res-usage)
# and timing them on an H100 (bench/gemm_configs.py, bench/RESULTS.md):
#   f32 tf32x3 128x128x32, 8 warps: 1.11 ms for the MLP block on the H100 but
#                 a 32-byte stack frame (spills) with a residual epilogue;
#                 128x64x32 with 4 warps spills more; 128x64x32, 8 warps: no stack.
#   f16 128x128x32, 4 warps, 4 stages: spills on sm_80; 8 warps: 202, no stack.
#   bf16 128x128x64, 8 warps on sm_90: 4% faster than 128x128x32 on the H100 but
#        spills 16 bytes at real sizes (a Llama-7B-sized layer, bench/spills.py --real);
#        256x128 and 128x256: 13% faster, and spill; 128x128x32: 184 registers.
# tests/test_matmul_aot.py compiles the instances for both targets and
# checks that none spills.
#   target, class -> (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
CONFIG_TABLE = {
    ("sm_90", "f16"): (128, 128, 32, 8, 3),
    ("sm_90", "f32"): (128, 64, 32, 8, 3),
    ("sm_80", "f16"): (128, 128, 32, 8, 3),
    ("sm_80", "f32"): (128, 64, 32, 8, 3),  # GEMMs (not convolutions) in two stages: see matmul_config
    # The interpreter pays per program and per op, not per element: big tiles, no pipelining.
    ("interpreter", "f16"): (64, 64, 128, 4, 1),
    ("interpreter", "f32"): (64, 64, 128, 4, 1),
}
TARGETS = ("sm_80", "sm_90", "interpreter")


def _fit(size: int | None, cap: int) -> int:
    """The block for a dim of `size` (None: `?`, known per launch: the cap)."""
    block = 16
    while (size is None or block < size) and block < cap:
        block *= 2
    return block


def matmul_config(g: Gemm, target: str, conv: bool = False) -> MatmulConfig:
    """Block sizes, warps and stages for `g` on `target` (sm_80, sm_90 or interpreter); `conv`: for the
    implicit-GEMM convolution template (lowering/conv.py), whose loads differ."""
    if target not in TARGETS:
        target = "sm_80"  # other GPUs: the conservative table
    bm, bn, bk, warps, stages = CONFIG_TABLE[(target, "f32" if g.dtype == "float32" else "f16")]
    # sm_80 f32 GEMMs in two stages: with three, a residual epilogue spilled 8 bytes at 128 registers (the MLP,
    # GPT-2 and Llama blocks of bench/launches.py compiled as launched: strides of 1 specialized); two: 128
    # registers, no spill. Not timed on an A100. Convolutions keep three: in two, ResNet-18's f32 convolutions
    # with a batch-norm epilogue spilled 4-8 bytes at 255 registers (242 and none in three; spills.py --zoo).
    if target == "sm_80" and g.dtype == "float32" and not conv:
        stages = 2
    # A grouped GEMM keeps one accumulator per sibling: narrower tiles, the same registers.
    bn = max(16, bn // (1 << (g.siblings - 1).bit_length()))
    # 64-bit indices take twice the registers for every offset tile: half the columns (a 128 x 128 bf16
    # tile spilled 216 bytes on sm_80 with them).
    if g.wide and target != "interpreter":
        bn = max(16, bn // 2)
    # A result stored beside each GEMM's keeps another [BLOCK_M, BLOCK_N] tile live in the epilogue: half the
    # columns (OPT's out-projection + residual + clone, bf16 128 x 128 on 8 warps, spilled 56 bytes on sm_80
    # and 124 on sm_90; bench/spills.py --zoo).
    if g.outputs > g.siblings and target != "interpreter":
        bn = max(16, bn // 2)
    # bf16 on sm_80 with a residual tile in the epilogue: bf16 rounding is bit arithmetic on every element
    # (round_to_bf16), and OPT's fc2 + bias + residual (128 x 128 on 8 warps) spilled 16 bytes at 255
    # registers (spills.py --zoo); 64 columns.
    if target == "sm_80" and g.dtype == "bfloat16" and g.epilogue_tiles:
        bn = max(16, bn // 2)
    # Three or more f16/bf16 accumulators on sm_80 (mma.sync): 8 warps got 128 registers and spilled 8 bytes
    # (a Llama-7B-sized layer's q/k/v, 128 x 32 tiles); 64 rows on 4 warps take 142 and spill nothing.
    if target == "sm_80" and g.siblings >= 3 and g.dtype != "float32":
        bm, warps = min(bm, 64), min(warps, 4)
    block_m, block_n, block_k = _fit(g.m, bm), _fit(g.n, bn), _fit(max((g.k, *g.k_extra)), bk)
    # A quarter of the tile or less needs fewer warps (each warp holds part of the accumulator): 1 up to 256
    # accumulator elements, 2 up to 512, else 4. Measured with ptxas's spill report (Triton 3.9 passes
    # --regAllocOptLevel=2, under which a few small configs spill 8-24 bytes at 80-128 registers): a 128 x 16
    # f32 tile spilled on 8 warps (sm_80, fuzz seed 2700178) and on 1; 32 x 16 on 1 warp and 16 x 16 on 2
    # spilled 24 bytes on sm_90 (seed 2720160 with --aot); the counts here spill on neither target.
    if block_m * block_n * 4 <= bm * bn:
        acc = block_m * block_n
        warps = min(warps, 1 if acc <= 256 else 2 if acc <= 512 else 4)
        # f32 (tf32x3: each operand tile split in two) on one or two warps of sm_80: K 16 at a time. An LSTM
        # step's 16 x 16 tile on one warp took 255 registers and spilled 20-36 bytes at K 32 (three stages;
        # 254 and no spill in two), 142-168 at K 16.
        if target == "sm_80" and g.dtype == "float32" and warps <= 2 and not conv:
            block_k = min(block_k, 16)
    return MatmulConfig(block_m, block_n, block_k, warps, stages)


def lower_matmul(kernel) -> TritonKernel:
    """Emit the Triton source of a `matmul` fusion.kernel."""
    name = kernel.attributes["sym_name"].value
    block = kernel.regions[0].blocks[0]
    ops, terminator = block_ops(block)
    matmuls = [op for op in ops if op.operation.name in MATMUL_OPS]
    gemms = [gemm(op) for op in matmuls]
    why = next((g for g in gemms if not isinstance(g, Gemm)), None) if gemms else "no matmul"
    if why is None and len(gemms) > 1:
        why = _why_not_grouped(matmuls, gemms)
    if why is not None:
        raise LoweringError(f"kernel @{name}: a matmul kernel holds GEMMs the template takes ({why})")
    inputs, outputs = static_signature(name, block, terminator, dynamic=gemms[0].dynamic)
    if gemms[0].dynamic and any(tuple(t.shape) != gemms[0].out for t in outputs):
        raise LoweringError(f"kernel @{name}: a GEMM over `?` rows stores only values of its result's shape")
    return _MatmulEmitter(name, block, matmuls, gemms).lower(ops, terminator, inputs, outputs)


def _why_not_grouped(matmuls, gemms) -> str | None:
    """Several GEMMs in one kernel compute tiles of one result space and have no batch dims (A may differ)."""
    g0 = gemms[0]
    for g in gemms:
        if (g.out, g.dtype, g.batch) != (g0.out, g0.dtype, 0):
            return "grouped GEMMs differ in result shape or dtype, or are batched"
    return None


class _MatmulEmitter(KernelEmitter):
    """The GEMM schedule: which region (A, B, epilogue) each value lives in, and where its lines go.

    Several GEMMs (a grouped GEMM) share the result's tile coordinates. Each
    distinct A operand is one region ("a", "a1", ...) with its own K loop
    (bound "K", "K1", ...): its tile is loaded once per step and multiplied
    with the B tile of every GEMM reading it, one accumulator per GEMM.

    K-split: an operand that is a cat along its K dim (`cat([x, h], -1)` as
    A, a cat of weights along K as B) is never stored. Each piece is a
    region of its own ("ak0", "ak1", ...: the piece's space, K coordinate
    `rk - start`), and the K loop is cut where any operand's piece ends:
    one loop per stretch of K over which each operand is one piece, all
    adding into the same accumulator. A stretch's loads are masked at its
    end, so pieces of any width work and none is read past its edge.
    """

    def __init__(self, name: str, block, mms: list, gemms: list[Gemm]):
        super().__init__(name, block)
        self.mms, self.gemms = mms, gemms
        self.mm, self.g = mms[0], gemms[0]
        g = gemms[0]
        # B regions: "b" for the first GEMM, "b1", "b2" ... for its siblings.
        self.bregs = ["b"] + [f"b{i}" for i in range(1, len(mms))]
        avalues = list(dict.fromkeys(mm.operands[gi.a] for mm, gi in zip(mms, gemms)))
        self.aregs = ["a"] + [f"a{j}" for j in range(1, len(avalues))]
        self.avalues = avalues
        self.a_of = [avalues.index(mm.operands[gi.a]) for mm, gi in zip(mms, gemms)]
        self.kvalues = [next(gi.k for gi, j in zip(gemms, self.a_of) if j == i) for i in range(len(avalues))]
        self.batch = list(range(g.batch))
        self.rows = list(g.rows)
        rank = len(g.out)
        batch = [(f"b{d}", None) for d in self.batch]
        rows = [(f"m{d}[:, None]", "mmask[:, None]") for d in self.rows]
        k_col, k_row, n = ("rk[None, :]", "kmask[None, :]"), ("rk[:, None]", "kmask[:, None]"), ("rn[None, :]", "nmask[None, :]")
        # Each region's space: per dim, its coordinate expression and the mask keeping it in bounds.
        self.coords = {"out": batch + rows + [n]}
        self.spaces = {"out": g.out}
        for areg, k in zip(self.aregs, self.kvalues):
            self.coords[areg] = batch + rows + [k_col]
            self.spaces[areg] = g.out[:-1] + (k,)
        for breg, gi in zip(self.bregs, gemms):
            self.coords[breg] = [n, k_row] if gi.b_transposed else batch + [k_row, n]
            self.spaces[breg] = gi.b_space()
        self.ksizes = ["K"] + [f"K{j}" for j in range(1, len(avalues))]
        self.sizes = ["M", "N", *self.ksizes] + [f"s{d}" for d in range(rank)]
        # What each region multiplies, and (K-split) the pieces of a cat operand: regions of their own.
        self.operand = dict(zip(self.aregs, avalues)) | {
            breg: mi.operands[gi.b] for breg, mi, gi in zip(self.bregs, mms, gemms)
        }
        self.split_cats, self.segments = [], []
        self.in_place_of_cat = {}  # piece region -> (the cat's result, the piece evaluated in its place)
        pieces = {areg: self._k_pieces(areg, mms[self.a_of.index(j)], gemms[self.a_of.index(j)].a)
                  for j, areg in enumerate(self.aregs)}
        pieces |= {breg: self._k_pieces(breg, mi, gi.b) for breg, mi, gi in zip(self.bregs, mms, gemms)}
        self.pieces = {region: [name for _, name in found] for region, found in pieces.items()}
        for j, (areg, k) in enumerate(zip(self.aregs, self.kvalues)):
            members = [self.bregs[i] for i, a in enumerate(self.a_of) if a == j]
            cuts = sorted({0, k} | {start for region in [areg, *members] for start, _ in pieces[region]})
            self.segments.append([
                (start, end, [self._covering(pieces[region], region, start) for region in [areg, *members]])
                for start, end in zip(cuts, cuts[1:])
            ])

    def _k_pieces(self, region: str, mm, operand: int) -> list[tuple[int, str]]:
        """(start along K, region) of each piece of `region`'s operand where it is a cat along its K dim; [] otherwise.

        Each piece becomes a region of its own: its space is the operand's
        with K narrowed to the piece, its K coordinate `rk - start`.
        """
        value = self.operand[region]
        split = k_split(value, gemm(mm).k_dim(operand, len(tensor_type(value.type).shape)))
        if split is None:
            return []
        if isinstance(split, str) or any(u.owner.operation.name not in MATMUL_OPS for u in value.uses):
            raise LoweringError(f"kernel @{self.name}: a cat in a GEMM kernel must be a GEMM operand only, along its K dim "
                                f"({split if isinstance(split, str) else 'read by more than GEMMs'})")
        cat = split.cat
        self.split_cats.append(cat)
        rank = len(tensor_type(cat.results[0].type).shape)
        k_dim = constant_value(cat.operands[1]) % rank
        # The region's K coordinate (rk[None, :] in A, rk[:, None] in B) and its mask.
        d = next(d for d, (expr, _) in enumerate(self.coords[region]) if expr.startswith("rk["))
        rk, kmask = self.coords[region][d]
        found, start = [], 0
        for p, piece in enumerate(cat.operands[0].owner.operands):
            name = f"{region}k{p}"
            coords, space = list(self.coords[region]), list(self.spaces[region])
            coords[d], space[d] = (f"({rk} - {start})" if start else rk, kmask), tensor_type(piece.type).shape[k_dim]
            self.operand[name], self.coords[name], self.spaces[name] = piece, coords, tuple(space)
            if split.ops:  # the ops after the cat, evaluated on this piece in place of the cat
                self.operand[name], self.in_place_of_cat[name] = value, (cat.results[0], piece)
            if space[d]:  # (an empty piece covers no K)
                found.append((start, name))
            start += space[d]
        return found

    @staticmethod
    def _covering(pieces: list[tuple[int, str]], region: str, start: int) -> str:
        """The region holding K position `start` of `region`'s operand: the piece covering it, or the whole operand."""
        return next((name for first, name in reversed(pieces) if first <= start), region)

    def lower(self, ops, terminator, inputs, outputs) -> TritonKernel:
        g, mms = self.g, self.mms
        # 64-bit rows, columns, K and batch indices; over `?` rows always (any launch may need them).
        self.wide = g.dynamic or needs_64bit(inputs + outputs, g.out)
        sites = load_sites(self.name, self.block, cat_of_inputs=False)
        producer = {r: op for op in ops for r in op.results}
        operand = self.operand
        biases = [mi.operands[gi.bias] for mi, gi in zip(mms, self.gemms) if gi.bias is not None]
        used = {r for segments in self.segments for _, _, regions in segments for r in regions}
        regions = [r for whole in [*self.aregs, *self.bregs] for r in self.pieces[whole] or [whole] if r in used]
        cones = {region: self._cone(operand[region], producer, sites, self.in_place_of_cat.get(region)) for region in regions}
        computing = [
            op for op in ops
            if op.operation.name not in VIEW_OPS and op.operation.name != "torch.prim.ListConstruct"
            and not op.operation.name.startswith("torch.constant.")
        ]
        split = {op_id(cat.operation) for cat in self.split_cats}  # read piece by piece, never computed
        # A row normalization of A (RMSNorm, LayerNorm): its sums run in loops of their own before the GEMM's.
        row_sums = [op for op in ops if op.operation.name in REDUCTIONS and row_sum_of_a(op, mms)]
        sums = self._k_sums([op for op in ops if not any(op is r for r in row_sums)])
        # Each result's value on the tile and the relayout storing it (a head split's transpose and copy): not computed.
        stored = [self._stored(v, sites) for v in terminator.operands]
        relaid = {op_id(op.operation) for _, chain in stored for op in chain}
        epilogue = [
            op for op in computing
            if not any(op is m for m in mms) and op_id(op.operation) not in split | relaid
            and not any(op in c for c in cones.values()) and not any(op is t for t in sums)
        ]
        chains = [op for _, chain in stored for op in chain]  # they read what the tile's value is computed from
        readers = {region: cones[region] for region in regions} | {"out": epilogue + chains + [terminator]}

        def also_read(region, value) -> bool:  # a cat piece a region reads in place, or a bias in the epilogue
            in_place = region in self.in_place_of_cat and value == self.in_place_of_cat[region][1]
            return in_place or (region == "out" and any(value == b for b in biases))

        kernel_sites, site_spaces, loads = self.site_params(sites, regions + ["out"], operand, readers, also_read)

        head = self._head()
        rows, row_lines = self._row_sums(row_sums, ops, producer, sites, cones, loads)
        # One K loop per A, or (K-split) per stretch of K where each operand is one piece: tiles, prologue, dots.
        env_out = self.env
        loops = []
        for j, segments in enumerate(self.segments):
            members = [i for i, a in enumerate(self.a_of) if a == j]
            for start, end, (areg, *bregs) in segments:
                loop = []
                self.out = loop
                tiles = {}
                for region in [areg, *bregs]:
                    self.env = dict(rows) if region == areg else {}
                    for value, kname, site, raw in loads[region]:
                        self.env[value] = self._load(region, value, kname, site, raw)
                    cat, piece = self.in_place_of_cat.get(region, (None, None))
                    cone = self._cone(operand[region], producer, sites | rows) if rows and region == areg else cones[region]
                    for op in ops:
                        if op in cone:
                            self.emit_body_op(op)
                        elif cat is not None and op.results and op.results[0] == cat:
                            dtype, value = compute_dtype(tensor_type(cat.type).dtype), self._value(piece)  # the cat promotes
                            self.env[cat] = value if value.dtype == dtype else self.tmp(cast(value, dtype), dtype, "the cat's piece")
                    tile = cast(self._value(operand[region]), g.dtype)
                    # K lanes past the end: -0.0 in A and 0.0 in B make each padded product -0.0, the identity
                    # of the sum (eager's sign of zero), whatever a prologue made of the masked loads (log(0) = -inf).
                    kmask, fill = ("kmask[None, :]", "-0.0") if region == areg else ("kmask[:, None]", "0.0")
                    tiles[region] = self.tmp(f"tl.where({kmask}, {tile}, {fill})", g.dtype, "K past its end").text
                for i, breg in zip(members, bregs):
                    loop += _dot(_acc(i), tiles[areg], tiles[breg], g.dtype, mms[i].operation.name, g.m)
                # A summed over K beside the GEMM: the rows of each A tile (0 past K and M).
                loop += [f"{_ksum(i)} += tl.sum({tiles[areg]}.to(tl.float32), 1)  # {t.operation.name}" for i, t in enumerate(sums)]
                whole = len(segments) == 1
                bounds = ("0", self.ksizes[j]) if whole else (str(start), str(end))
                loops.append((bounds, loop))

        # The epilogue, on [BLOCK_M, BLOCK_N] tiles.
        self.out = self.body
        self.env = env_out
        self.body.append("mask = mmask[:, None] & nmask[None, :]")
        for value, kname, site, _ in loads["out"]:
            self.env[value] = self._load("out", value, kname, site, False)
        # Epilogue inputs read as whole [BLOCK_M, BLOCK_N] tiles (a residual), not rows or columns (a bias).
        epilogue_tiles = sum(
            1 for value, *_ in loads["out"]
            if len(shape := tensor_type(value.type).shape) >= 2 and shape[-1] != 1 and any(d != 1 for d in shape[:-1])
        )
        later = set(map(id, epilogue))
        for op in ops:
            i = next((i for i, m in enumerate(mms) if op is m), None)
            if i is not None:
                self.env[op.results[0]] = self._result(i)
            elif id(op) in later or op.operation.name.startswith("torch.constant."):
                self.emit_body_op(op)
        offset = "(rm[:, None] * N + rn[None, :])"
        if self.batch:
            offset = "(bid * M * N + rm[:, None] * N + rn[None, :])"
        summed = {t.results[0]: i for i, t in enumerate(sums)}
        for j, ((v, chain), t) in enumerate(zip(stored, outputs)):
            if (i := summed.get(v)) is not None:
                # One row of programs stores the sums: those of the first column of tiles.
                self.store(f"out{j}", "rm", Value(_ksum(i), "float32"), t.dtype, "mmask & (rm * 0 + pid_n == 0)", "A summed over K")
                continue
            value = self.env.get(v)
            if value is None:
                raise LoweringError(f"kernel @{self.name}: result #{j} is not computed by the epilogue")
            if all(op.operation.name in RESHAPES for op in chain):
                self.store(f"out{j}", offset, value, t.dtype, "mask")
                continue
            layout = relayout_strides(g.out, chain)
            if layout is None or g.dynamic:
                raise LoweringError(f"kernel @{self.name}: result #{j} is a relayout with no stride per dim of the tile")
            where = relayout_offset([expr for expr, _ in self.coords["out"]], layout)
            names = " -> ".join(op.operation.name.removeprefix("torch.aten.") for op in chain)
            self.store(f"out{j}", where, value, t.dtype, "mask", f"stored relaid: {names}")

        params = kernel_params(kernel_sites, len(outputs), len(self.scalars), self.sizes, [len(space) for space in site_spaces])
        blocks = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"] + (["INTERPRETED"] if g.dtype in MODE_DEPENDENT else [])
        # The sum starts at -0.0, its identity: all-(-0.0) products give -0.0 as in eager (K = 0: eager's 0.0).
        zero = "-0.0" if g.k else "0.0"
        lines = head + row_lines + [f"{_acc(i)} = tl.full([BLOCK_M, BLOCK_N], {zero}, dtype=tl.float32)" for i in range(len(mms))]
        lines += [f"{_ksum(i)} = tl.zeros([BLOCK_M], dtype=tl.float32)" for i in range(len(sums))]
        for (first, end), loop in loops:
            lines += [f"for k in range({first}, {end}, BLOCK_K):"]
            lines += [f"    rk = {index('k + tl.arange(0, BLOCK_K)', self.wide)}", f"    kmask = rk < {end}"]
            lines += ["    " + line for line in loop]
        lines += self.body
        shapes = " x ".join(str(list(s)) for s in (g.a_space(), g.b_space()))
        header = [
            f"GEMM {shapes} -> {list(g.out)} ({g.dtype}), M = {g.m}, N = {g.n}, K = {g.k}, batch = {g.batch_count}:",
            "f32 accumulation; operands and epilogue inputs are addressed through their strides.",
        ]
        if len(mms) > 1 and len(self.aregs) == 1:
            header.append(f"Grouped: {len(mms)} GEMMs share each A tile, one accumulator each.")
        elif len(mms) > 1:
            ks = ", ".join(f"{name} = {k}" for name, k in zip(self.ksizes, self.kvalues))
            header.append(f"Grouped: {len(mms)} GEMMs over {len(self.aregs)} A operands (one K loop each: {ks}), one accumulator each.")
        if sums:
            header.append("Beside it: A summed over K (a bias gradient), from the A tiles, stored by the first column of tiles.")
        if row_sums:
            header.append(f"Before it: A's rows normalized (RMSNorm, LayerNorm), {len(row_sums)} loop(s) over K summing them; "
                          "the GEMM's loop normalizes each A tile (the normalized A is never stored).")
        for segments in self.segments:
            if len(segments) > 1:
                stretches = ", ".join(f"[{start}, {end})" for start, end, _ in segments)
                header.append(f"K-split: a cat operand is read piece by piece, one K loop each: {stretches}.")
        dynamic = None
        if g.dynamic:
            if self.split_cats:
                raise LoweringError(f"kernel @{self.name}: a GEMM over `?` rows reads no cat by K-split (yet)")
            header.append("Rows `?`: M and the row sizes are arguments, sized per launch.")
            rank = len(g.out)
            dynamic = dynamic_sizes(self.name, g.out, self.site_shapes,
                                    [(t, t.shape, tuple(range(rank)), False) for t in outputs])
        source = self.render(header, params, blocks, lines)
        return TritonKernel(
            self.name, source, tuple(inputs), tuple(outputs), tuple(self.scalars), tuple(params),
            kind=GroupKind.MATMUL, sites=tuple(kernel_sites), space=g.out, site_spaces=tuple(site_spaces),
            template=dataclasses.replace(g, siblings=len(mms), k_extra=tuple(self.kvalues[1:]), wide=self.wide,
                                         outputs=len(outputs) - len(sums), epilogue_tiles=epilogue_tiles),
            dynamic=dynamic,
        )

    @staticmethod
    def _stored(v, sites: dict) -> tuple:
        """(the value result `v` stores, computed on the tile; the relayout ops between them, first applied first).

        Through reshapes (the same row-major order) and, where the value is
        computed, permutes, same-shape expands and copies: a head split
        stored straight into its layout (`legality_matmul.why_not_epilogue`).
        """
        return walk_views(v, through=lambda op: op.results[0] not in sites and (op.name in RESHAPES or relayout_op(op)))

    def _row_sums(self, row_sums: list, ops, producer: dict, sites: dict, cones: dict, loads: dict) -> tuple[dict, list[str]]:
        """The loops over K computing `row_sums` (sums or means of A's rows, keepdim) before the GEMM's loop: each
        program sums its BLOCK_M rows over all of K (K lanes and rows past the end add 0), one loop per sum, in
        order (LayerNorm's variance reads its mean). Returns (each sum's result -> its [BLOCK_M, 1] value, the lines)."""
        if not row_sums:
            return {}, []
        if len(self.aregs) != 1 or self.pieces["a"]:
            raise LoweringError(f"kernel @{self.name}: a row normalization of A is computed for one A read whole")
        rows, lines = {}, []
        for i, r in enumerate(row_sums):
            acc = f"rowsum{i}"
            self.out, self.env = [], dict(rows)
            cone = self._cone(r.operands[0], producer, sites | rows)
            for value, kname, site, _ in loads["a"]:
                if value == r.operands[0] or any(value in list(op.operands) for op in cone):
                    self.env[value] = self._load("a", value, kname, site, False)
            for op in ops:
                if op in cone:
                    self.emit_body_op(op)
            x = self._value(r.operands[0])
            self.out.append(f"{acc} += tl.sum(tl.where(mmask[:, None] & kmask[None, :], {cast(x, 'float32')}, 0.0), 1)"
                            f"  # {r.operation.name}")
            red = reduction(r)
            lines += [f"{acc} = tl.zeros([BLOCK_M], dtype=tl.float32)", "for k in range(0, K, BLOCK_K):",
                      f"    rk = {index('k + tl.arange(0, BLOCK_K)', self.wide)}", "    kmask = rk < K"]
            lines += ["    " + line for line in self.out]
            self.out = lines
            expr = f"({acc} / K)[:, None]" if red.combine == "mean" else f"{acc}[:, None]"
            value = self.tmp(expr, "float32", f"{r.operation.name}, row by row")
            if red.dtype != "float32":  # rounded to its dtype, as eager stores it
                value = self.tmp(f"{cast(value, red.dtype)}.to(tl.float32)", "float32", f"rounded to {red.dtype}")
            rows[r.results[0]] = value
            # The ops on the rows alone (LayerNorm's `rsqrt(var + eps)`): once per program, not per A tile.
            self.env = dict(rows)
            for op in ops:
                if op in cones["a"] and op not in row_sums and op.operation.name not in REDUCTIONS and all(
                    v in rows or tensor_type(v.type) is None for v in op.operands
                ) and any(v in rows for v in op.operands):
                    self.emit_body_op(op)
                    rows |= {v: self.env[v] for v in op.results}
        return rows, lines

    def _k_sums(self, ops) -> list:
        """The sums of A over K the kernel computes beside its one GEMM (`ops.matmul.why_not_k_sum`), in order."""
        sums = [op for op in ops if op.operation.name in REDUCTIONS]
        if not sums:
            return []
        why = "a grouped GEMM" if len(self.mms) > 1 else "A is a cat" if self.pieces["a"] else None
        why = why or next((w for t in sums if (w := why_not_k_sum(t, self.mm))), None)
        if why:
            raise LoweringError(f"kernel @{self.name}: a reduction in a GEMM kernel must sum its A over K ({why})")
        return sums

    def site_params(self, sites: dict, regions: list[str], operand: dict, readers: dict, also_read) -> tuple:
        """One pointer parameter per (site, region reading it): the kernel's sites, each one's space, and per
        region its loads (value, parameter name, site, raw). A region reads a site that is its operand, that
        an op of `readers[region]` reads, or where `also_read(region, value)` says so."""
        kernel_sites, site_spaces, loads = [], [], {region: [] for region in regions}
        # Per kernel site, its shape where it is laid out like the result (`?` rows sized from it: A's and the
        # epilogue's), () for B's (lowering/dynamic.py).
        self.site_shapes = []
        for value, site in sites.items():
            for region in regions:
                direct = region in operand and value == operand[region]
                read = direct or also_read(region, value) or any(value in list(op.operands) for op in readers[region])
                if not read:
                    continue
                kname = site.name if region == "out" else f"{site.name}_{region}"
                kernel_sites.append(Site(site.input, site.chain, kname))
                site_spaces.append(self.spaces[region])
                self.site_shapes.append(() if region.startswith("b") else tuple(tensor_type(value.type).shape))
                # An operand loaded only to be multiplied keeps its dtype (tensor cores read f16/bf16).
                raw = direct and not any(value in list(op.operands) for op in readers[region])
                loads[region].append((value, kname, site, raw))
        return kernel_sites, site_spaces, loads

    def region_value(self, region: str, value, ops, cones: dict, loads: dict, result=None):
        """Load `region`'s sites and emit its ops (into `self.out`), `result`'s tile bound first; `value`'s tile (None: nothing)."""
        self.env = {}
        for v, kname, site, raw in loads[region]:
            self.env[v] = self._load(region, v, kname, site, raw)
        if result is not None:
            self.env[result.results[0]] = self._result(next(i for i, mm in enumerate(self.mms) if mm is result))
        members = {id(op) for op in cones[region]}
        for op in ops:
            if id(op) in members or op.operation.name.startswith("torch.constant."):
                self.emit_body_op(op)
        return None if value is None else self._value(value)

    def _head(self) -> list[str]:
        lines = [
            "pid = tl.program_id(0)",
            "grid_m = tl.cdiv(M, BLOCK_M)",
            "grid_n = tl.cdiv(N, BLOCK_N)",
            "width = GROUP_M * grid_n",
            "first_m = (pid // width) * GROUP_M",
            "group_m = tl.where(grid_m - first_m < GROUP_M, grid_m - first_m, GROUP_M)",
            "pid_m = first_m + (pid % width) % group_m",
            "pid_n = (pid % width) // group_m",
            f"rm = {index('pid_m * BLOCK_M + tl.arange(0, BLOCK_M)', self.wide)}",
            f"rn = {index('pid_n * BLOCK_N + tl.arange(0, BLOCK_N)', self.wide)}",
            "mmask = rm < M",
            "nmask = rn < N",
        ]
        if self.batch:
            lines.append(f"bid = {index('tl.program_id(1)', self.wide)}")
            lines += coords("bid", self.batch, "b")
        return lines + coords("rm", self.rows, "m")

    def _load(self, region: str, value, kname: str, site: Site, raw: bool) -> Value:
        """One tile of `value` in `region`'s space.

        Dims it broadcasts along are left out of the offset and the mask: a
        bias is loaded as a [1, BLOCK_N] tile, not once per row.
        """
        shape, space = tensor_type(value.type).shape, self.spaces[region]
        lead = len(space) - len(shape)
        dims = [
            (d, expr, mask) for d, (expr, mask) in enumerate(self.coords[region])
            if d >= lead and not (shape[d - lead] == 1 and space[d] != 1)
        ]
        # A value broadcast along every dim (a 0-d scalar) is loaded along the region's last coordinate,
        # whose orientation fits that region's tile: a B operand's [BLOCK_K, BLOCK_N], not A's [BLOCK_M, BLOCK_K].
        last_expr, last_mask = self.coords[region][-1]
        terms = [f"{expr} * {kname}_st{d}" for d, expr, _ in dims] or [f"0 * {last_expr}"]
        masks = list(dict.fromkeys(mask for _, _, mask in dims if mask)) or [last_mask]
        address = f"{kname} + ({' + '.join(terms)})"
        dtype, mask = tensor_type(value.type).dtype, " & ".join(masks)
        if raw:
            return self.tmp(f"tl.load({address}, mask={mask}, other=0.0)", dtype, site.comment())
        return self.load(address, dtype, site.comment(), mask, other="0")

    def _value(self, v) -> Value:
        value = self.env.get(v)
        if value is None:
            raise LoweringError(f"kernel @{self.name}: a GEMM operand is neither loaded nor computed from loads")
        return value

    def _result(self, i: int) -> Value:
        """GEMM i's result tile: alpha * acc + beta * bias, rounded to the result's dtype as eager stores it."""
        g, mm, acc = self.gemms[i], self.mms[i], _acc(i)
        expr = acc if g.alpha == 1 else f"{acc} * {self.scalar_text(g.alpha)}"
        if g.bias is not None:
            bias = self.env[mm.operands[g.bias]].text
            expr = f"{bias} + {expr}" if g.beta == 1 else f"{self.scalar_text(g.beta)} * {bias} + {expr}"
        value = self.tmp(expr, "float32", mm.operation.name) if expr != acc else Value(acc, "float32")
        if g.dtype != "float32":
            value = self.tmp(f"{cast(value, g.dtype)}.to(tl.float32)", "float32", f"rounded to {g.dtype}")
        return value

    @staticmethod
    def _cone(value, producer: dict, sites: dict, in_place=None) -> list:
        """The ops computing `value` from load sites, in no particular order (`in_place`: (a cat's result, the piece read instead))."""
        found, stack = [], [value]
        while stack:
            v = stack.pop()
            if in_place is not None and v == in_place[0]:
                v = in_place[1]
            op = producer.get(v)
            if v in sites or op is None or op in found:
                continue
            found.append(op)
            stack.extend(op.operands)
        return found


# Operand dtypes whose dot is spelled differently in the interpreter and compiled (an INTERPRETED constexpr).
MODE_DEPENDENT = ("bfloat16", "float32")


# At most this many rows, an f32 GEMM stays IEEE compiled too: it is memory-bound (a GEMV-like LSTM step),
# and tf32x3's split operands on the few warps such a tile gets spilled (128 bytes on sm_90; bench/spills.py).
IEEE_ROWS = 16


def _dot(acc: str, a: str, b: str, dtype: str, what: str, rows: int | None = None) -> list[str]:
    """`acc += a @ b` for the operands' dtype (`rows`: the GEMM's M, when known)."""
    if dtype == "bfloat16":
        # The interpreter keeps bf16 as raw bits and its tl.dot multiplies those: widen there only.
        return [
            "if INTERPRETED:",
            f"    {acc} += tl.dot({a}.to(tl.float32), {b}.to(tl.float32), input_precision=\"ieee\")  # {what}",
            "else:",
            f"    {acc} += tl.dot({a}, {b})  # {what}",
        ]
    if dtype == "float32" and rows is not None and rows <= IEEE_ROWS:
        return [f"{acc} += tl.dot({a}, {b}, input_precision=\"ieee\")  # {what}"]
    if dtype == "float32":
        # Compiled: three tf32 products (tensor cores), f32-accurate: on an H100 the
        # MLP block's GEMMs took 1.11 ms this way against 3.39 ms in "ieee" (FMA
        # units) and cuBLAS's 1.43, with a smaller error against float64 than
        # eager's (7e-8 vs 2.6e-7; bench/gemm_configs.py). The interpreter has no tf32.
        return [
            "if INTERPRETED:",
            f"    {acc} += tl.dot({a}, {b}, input_precision=\"ieee\")  # {what}",
            "else:",
            f"    {acc} += tl.dot({a}, {b}, input_precision=\"tf32x3\")  # {what}",
        ]
    return [f"{acc} += tl.dot({a}, {b})  # {what}"]


def _acc(i: int) -> str:
    """The accumulator of GEMM i of a kernel."""
    return "acc" if i == 0 else f"acc{i}"


def _ksum(i: int) -> str:
    """The row sums of A of sum i of a kernel (`[BLOCK_M]`, f32)."""
    return f"ksum{i}"


# What the back-to-back template (lowering/matmul_chain.py) shares with this one: regions, tiles, dots.
GemmEmitter, dot_lines, fit_block = _MatmulEmitter, _dot, _fit


def grid(g: Gemm, config: MatmulConfig) -> tuple[int, int]:
    """Programs: one per output tile (axis 0), one per batch index (axis 1)."""
    return math.ceil(g.m / config.block_m) * math.ceil(g.n / config.block_n), g.batch_count


__all__ = ["CONFIG_TABLE", "GemmEmitter", "MatmulConfig", "dot_lines", "fit_block", "grid", "lower_matmul", "matmul_config", "TRITON_DTYPES"]
