"""Attention kernels: flash attention, tiled over the keys with an online softmax.

One program computes BLOCK_M query rows of one batch index (all leading
dims of the output, flattened: `program_id(1)`). It loads its q tile once,
then loops over the keys BLOCK_N at a time: `qk = q @ kᵀ` (f32 accumulation;
IEEE f32 for f32 inputs, as eager, never TF32), the score ops on the tile
(sdpa: scale, causal mask, attn_mask; explicit attention: its own
elementwise ops, written by the same per-op emitters as pointwise kernels,
masks loaded as [BLOCK_M, BLOCK_N] tiles), then the online softmax: a
running row max `m_i` and sum `l_i` rescale the accumulator, and
`acc += p @ v`. The scores never leave registers. Keys past the end are
-inf, rows past the end are not stored, so no length must be a multiple of
a block; head dims are padded to a power of two (at least 16, for `tl.dot`).

q, k, v and masks are addressed through their strides in the kernel's
spaces ([*batch, L, D], [*batch, D, S] or [*batch, S, D], [*batch, S, Dv],
[*batch, L, S]), so head splits, `kᵀ` and broadcast masks are index
arithmetic; a kv-head repeat (GQA) reads kv head `h // n`.

A q, k or v computed by a prologue (RoPE, a scale, a cast:
`ops.attention.with_prologues`) is evaluated on its tile where the tile
would be loaded: q once per program, k and v per key block. Its value's
coordinates are the tile's mapped back through the operand's views and
repeat; a view in the prologue maps them again (`rotate_half`'s slices read
the other half of the head dim), a cat picks its piece per lane, elementwise
ops are the pointwise kernels' lines, and its inputs are loaded through
their own strides (cos and sin broadcast over the heads). The value is
rounded to the operand's dtype, as the kernel storing it rounded it.

A row whose scores are all -inf: explicit attention's softmax gives NaN
(0/0, as eager's); sdpa gives 0 there, as ATen's does.

NaN and inf follow eager's CPU sdpa exactly, which depends on the backend
ATen picks for the tensors at hand (`torch._fused_sdp_choice`, asked at
each launch on CPU tensors, see `runtime.kernels.sdpa_constants`):

- math (3-d inputs, a last dim not contiguous, q and v head dims that
  differ, ...): the causal mask is *added* (-inf above the diagonal), so a
  NaN or +inf score there makes its row NaN, and every key is visited:
  `0 * v` of a masked key is NaN where v is not finite;
- flash (`cpu_flash_attention`): the causal mask *replaces* the scores by
  -inf; a query block of Q_SPLIT rows visits the key blocks of KV_SPLIT
  keys that start before its last row, each whole (`0 * v` of the masked
  keys in them is computed, the keys of later blocks never are); without a
  mask its row max skips a NaN score in the scalar tail of a SIMD loop
  (the last `size % VEC` keys of a key block), so a row whose other scores
  are all -inf gives `0 @ v` there, not NaN.

A bool attn_mask is added as 0 / -inf by both (NaN + -inf is NaN). On a GPU
(compiled) the causal loop stops at the diagonal block, as flash kernels do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlirfuse.dialect import GroupKind
from mlirfuse.ir import block_ops, constant_value, defining_op, ir, is_constant_like, tensor_type
from mlirfuse.lowering.dynamic import format_shape
from mlirfuse.lowering.emitter import (
    KernelEmitter,
    LoweringError,
    Site,
    TritonKernel,
    Value,
    as_declared,
    cast,
    coords,
    index,
    kernel_params,
    needs_64bit,
    static_signature,
)
from mlirfuse.ops.attention import SDPA, Attention, Operand, leaf_coords, match
from mlirfuse.ops.elementwise import compute_dtype
from mlirfuse.ops.views import (
    CAT,
    VIEW_OPS,
    relayout_offset,
    relayout_op,
    relayout_strides,
    view_args,
    view_chain,
    view_coords,
)


@dataclass(frozen=True)
class AttentionKernel(TritonKernel):
    """A flash-attention kernel: the TritonKernel plus what its launch needs."""

    batch: tuple[int, ...] = ()
    lq: int = 0
    lk: int = 0
    dqk: int = 0
    dv: int = 0
    causal: bool = False
    dtype: str = "float32"  # of q, k and v
    # sdpa: the sites of q, k, v (and the mask) as eager's sdpa receives them, with their shapes
    # there (a kv-head repeat read by index arithmetic is materialized in eager; -1: computed by a
    # prologue, which eager stores contiguous), is_causal,
    # scale and enable_gqa: what the launch asks ATen's backend choice (`sdpa_constants`).
    sdpa_sites: tuple[int, ...] = ()
    sdpa_shapes: tuple[tuple[int, ...], ...] = ()
    scale: float | None = None
    gqa: bool = False
    masked: bool = False
    # Per site: the shape its strides are taken in (its role's space).
    spaces: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True)
class AttentionSizes:
    """How an attention kernel over `?` sizes is sized per launch (the `dynamic` a Launcher reads): its space is the
    scores' `(*batch, lq, lk)`, taken from q (batch and query dims) and v (keys), its output `(*batch, lq, dv)`."""

    q_site: int
    v_site: int
    space: tuple  # `(*batch, lq, lk)`, None where `?`
    out: tuple  # `(*batch, lq, dv)`, None where `?`
    empty_rows_error: str | None = None

    def resolve(self, loaded: list) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
        q, v = loaded[self.q_site], loaded[self.v_site]
        nb = len(self.space) - 2
        batch = []
        for d in range(nb):  # a batch dim q broadcasts (size 1 in q where `?` in the space) is v's
            size = q.shape[d - nb - 2 + q.dim()] if q.dim() >= nb + 2 - d else 1
            if self.space[d] is None and size == 1 and v.dim() >= nb + 2 - d:
                size = v.shape[d - nb - 2 + v.dim()]
            batch.append(size if self.space[d] is None else self.space[d])
        lq, lk = q.shape[-2], v.shape[-2]
        return (*batch, lq, lk), [(*batch, lq, self.out[-1])]


def _pow2(n: int, least: int = 16) -> int:
    size = least
    while size < n:
        size *= 2
    return size


# Eager's cpu_flash_attention: query rows per block by query length (>= 768, >= 192, else), keys per block.
FLASH_Q_SPLITS = ((768, 256), (192, 64), (0, 32))
FLASH_KV_SPLIT = 512


def flash_q_split(lq: int) -> int:
    return min(lq, next(split for least, split in FLASH_Q_SPLITS if lq >= least))


def sdpa_constants(kernel: AttentionKernel, math_backend: bool = False, vector_width: int = 8,
                   lq: int | None = None, lk: int | None = None) -> dict:
    """The constexprs giving an sdpa kernel eager's CPU NaN/inf semantics (see the module docstring).

    ATen's flash kernel, or its math one if `math_backend`; {} for explicit attention.
    `vector_width`: floats per ATen CPU vector (`runtime.kernels.cpu_vector_width`).
    `lq`, `lk`: this launch's query and key lengths (a kernel over `?` sizes), else the kernel's.
    """
    if not kernel.sdpa_sites:
        return {}
    lq, lk = kernel.lq if lq is None else lq, kernel.lk if lk is None else lk
    if math_backend:
        return {"Q_SPLIT": max(lq, 1), "KV_SPLIT": max(lk, 1), "CAUSAL_ADD": True, "VEC": 1}
    return {
        "Q_SPLIT": max(flash_q_split(lq), 1), "KV_SPLIT": max(min(FLASH_KV_SPLIT, lk), 1),
        "CAUSAL_ADD": False, "VEC": 1 if kernel.masked else vector_width,
    }


def attention_blocks(
    kernel: AttentionKernel, interpret: bool, arch: int = 90, math_backend: bool = False, vector_width: int = 8,
    lq: int | None = None, lk: int | None = None,
) -> dict:
    """Block sizes (and, compiled, warps and stages) for one attention kernel.

    Interpreted: few, big programs (the interpreter pays per program); causal
sdpa programs stay inside one of eager's query blocks. sdpa kernels also
get the constexprs of `sdpa_constants`.
    Compiled (sm_80 / sm_90): BLOCK_M 64; BLOCK_N 64 for f16/bf16 heads up to
    64, 32 for longer ones; f32 (IEEE dots on FMA units, no tensor cores:
    everything in registers) BLOCK_N 32, 16 for heads longer than 64; 8 warps
    for f32, for heads longer than 64 and on sm_80. Chosen so q, kᵀ, v and the accumulator fit in
    255 registers per thread with no spills (tests/test_attention.py checks
    the cubins' resource usage).
    """
    bd, bdv = _pow2(kernel.dqk), _pow2(kernel.dv)
    blocks = {"BLOCK_D": bd, "BLOCK_DV": bdv}
    if kernel.dtype == "bfloat16":
        blocks["INTERPRET"] = interpret  # see the dot_bf16 helper
    if interpret:
        lq, lk = kernel.lq if lq is None else lq, kernel.lk if lk is None else lk
        sdpa = sdpa_constants(kernel, math_backend, vector_width, lq, lk)
        block_m = min(128, _pow2(lq))
        if kernel.causal and lq > sdpa["Q_SPLIT"]:  # each program's rows in one of eager's query blocks
            block_m = min(block_m, sdpa["Q_SPLIT"])  # a power of two there
        return {"BLOCK_M": block_m, "BLOCK_N": min(128, _pow2(lk)), **blocks, **sdpa}
    wide = max(bd, bdv) > 64
    block_n = (16 if wide else 32) if kernel.dtype == "float32" else (32 if wide else 64)
    # Compiled: the causal loop stops at the diagonal block; the mask replaces the scores; no SIMD tail.
    sdpa = {"Q_SPLIT": 64, "KV_SPLIT": block_n, "CAUSAL_ADD": False, "VEC": 1} if kernel.sdpa_sites else {}
    return {
        "BLOCK_M": 64, "BLOCK_N": block_n, **blocks, **sdpa,
        # f32 with 4 warps: ptxas gave up on the head-64 tile (32 registers, a 5.5 KiB stack: the
        # GPT-2 block of bench/launches.py); 8 warps spread it (148 registers, no spill). f32 on sm_80
        # (FMA dots, nothing for the pipeline to overlap) in one stage: with two, a non-causal sdpa
        # head of 64 spilled 8 bytes at 128 registers (issue 21); one stage, 128 registers, no stack.
        # f16/bf16 on sm_80 (mma.sync, no warpgroups): a GPT-2-medium head of 64 at 512 tokens spilled
        # 16 bytes at 255 registers with 4 warps; 8 warps: 247 registers, no stack (bench/spills.py --real).
        # On sm_90 too: 4 warps spilled 8 bytes for a bf16 GPT-2 head of 64 and 56 for T5's f16 attention
        # with its position bias (spills.py --zoo); 8 warps: 207 and 238 registers, no spill.
        "num_warps": 8,
        "num_stages": 3 if arch >= 90 else 1 if kernel.dtype == "float32" else 2,
    }


class _AttentionEmitter(KernelEmitter):
    def __init__(self, name: str, block: ir.Block, att: Attention):
        super().__init__(name, block)
        self.att = att
        self.nb = len(att.out.shape) - 2
        # (site, operand, space); a prologue's input has no operand and is addressed in its own shape.
        self.sites: list[tuple[Site, Operand | None, tuple]] = []
        self.placed: dict[tuple, Value] = {}  # prologue values evaluated at coordinates under masks

    def site(self, o: Operand, space: tuple) -> tuple[Site, Operand, tuple]:
        if not isinstance(o.leaf.owner, ir.Block) or o.leaf.owner != self.block:
            raise LoweringError(f"kernel @{self.name}: attention operands must be views of kernel inputs")
        arg = ir.BlockArgument(o.leaf).arg_number
        chain = tuple(op if isinstance(op, tuple) else (op.operation.name, view_args(op)) for op in o.views)
        for s, other, sp in self.sites:
            if other is not None and (s.input, s.chain, other.repeat, sp) == (arg, chain, o.repeat, space):
                return s, other, sp
        plain = not chain and o.repeat is None and not any(s.input == arg for s, _, _ in self.sites)
        views = sum(s.input == arg for s, _, _ in self.sites)
        name = f"in{arg}" if plain else f"in{arg}_v{views}"
        entry = (Site(arg, chain, name), o, space)
        self.sites.append(entry)
        return entry

    def address(self, entry, rows: str, cols: str) -> str:
        """`base + batch offset + rows * st[-2] + cols * st[-1]` of a site in its space."""
        site, o, space = entry
        terms = []
        offset = len(space) - len(o.shape)
        for d in range(self.nb):
            coord = f"b{d}"
            if o.repeat is not None and o.repeat[0] + offset == d and o.repeat[1] > 1:
                coord = f"(b{d} // {o.repeat[1]})"
            terms.append(f"{coord} * {site.name}_st{d}")
        terms += [f"{rows} * {site.name}_st{self.nb}", f"{cols} * {site.name}_st{self.nb + 1}"]
        return f"{site.name} + ({' + '.join(terms)})"

    def tile(self, o: Operand, space: tuple, rows: str, cols: str, mask: str, dtype: str) -> tuple[str, str]:
        """(the tile's text, a comment) of operand `o` at `rows` x `cols` of its role's `space`: loaded, or its prologue evaluated."""
        if not o.computed:
            entry = self.site(o, space)
            return f"tl.load({self.address(entry, rows, cols)}, mask={mask}, other=0)", entry[0].comment()
        offset = len(space) - len(o.shape)
        at = [*(f"b{d}" for d in range(self.nb)), rows, cols][offset:]
        at = ["0" if n == 1 and space[d + offset] != 1 else x for d, (n, x) in enumerate(zip(o.shape, at))]
        at = leaf_coords(o, at)
        if at is None:  # (`with_prologues` leaves such an operand loaded)
            raise LoweringError(f"kernel @{self.name}: a computed attention operand is read through a view with no index map")
        value = self.evaluate(o.leaf, tuple(at), (mask,), f"({rows} * 0 + {cols} * 0)")
        return f"tl.where({mask}, {cast(value, dtype)}, 0)", f"prologue, {value.text}"

    def evaluate(self, v: ir.Value, at: tuple, masks: tuple, zero: str) -> Value:
        """Prologue value `v` at coordinates `at` (one per dim), its loads masked by `masks`; `zero`: a 0 of the tile's shape."""
        key = (v, at, masks)
        if key in self.placed:
            return self.placed[key]
        t = tensor_type(v.type)
        chain = view_chain(v, self.block)
        op = defining_op(v)
        if chain is not None:  # an input through views: loaded through its own strides
            site = self.table_site(*chain, t.shape)
            terms = [f"{x} * {site.name}_st{d}" for d, x in enumerate(at) if x != "0"] or [zero]
            value = self.load(f"{site.name} + ({' + '.join(terms)})", t.dtype, site.comment(), " & ".join(masks))
        elif op.name in VIEW_OPS:
            value = self.evaluate(op.operands[0], tuple(view_coords(op, list(at))), masks, zero)
        elif op.name == CAT:
            value = self.cat(op, at, masks, zero)
        else:
            def operand(u: ir.Value) -> Value | None:
                if is_constant_like(u):
                    return None
                shape = tensor_type(u.type).shape
                lead = len(t.shape) - len(shape)
                return self.evaluate(u, tuple("0" if n == 1 and t.shape[d + lead] != 1 else at[d + lead]
                                               for d, n in enumerate(shape)), masks, zero)

            value = self.emit_op(op.opview, operand)
        self.placed[key] = value
        return value

    def cat(self, op, at: tuple, masks: tuple, zero: str) -> Value:
        """A cat at `at`: each piece at coordinates shifted along the cat dim, loads masked to its range, the lane's piece picked."""
        dim = constant_value(op.operands[1]) % len(at)
        pieces, start, ends = list(defining_op(op.operands[0]).operands), 0, []
        dtype = compute_dtype(tensor_type(op.results[0].type).dtype)
        for k, piece in enumerate(pieces):
            size = tensor_type(piece.type).shape[dim]
            if not size:
                continue
            inside = ([f"({at[dim]} >= {start})"] if start else []) + ([f"({at[dim]} < {start + size})"] if k < len(pieces) - 1 else [])
            shifted = tuple(f"({x} - {start})" if d == dim and start else x for d, x in enumerate(at))
            start += size
            ends.append((start, cast(as_declared(piece, self.evaluate(piece, shifted, masks + tuple(inside), zero)), dtype)))
        expr = ends[-1][1]
        for end, value in reversed(ends[:-1]):
            expr = f"tl.where({at[dim]} < {end}, {value}, {expr})"
        return self.tmp(expr, dtype, CAT)

    def table_site(self, arg: int, chain: tuple, shape: tuple) -> Site:
        """The site of a prologue's input `arg` seen through `chain`, addressed through its own strides."""
        for s, other, _ in self.sites:
            if other is None and (s.input, s.chain) == (arg, chain):
                return s
        views = sum(s.input == arg for s, _, _ in self.sites)
        site = Site(arg, chain, f"in{arg}_v{views}", table_rank=len(shape))
        self.sites.append((site, None, tuple(shape)))
        return site


def lower_attention(kernel) -> AttentionKernel:
    """Emit the Triton source of an `attention` fusion.kernel."""
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    block = kernel.regions[0].blocks[0]
    ops, terminator = block_ops(block)
    inputs, outputs = static_signature(name, block, terminator, dynamic=True)
    dynamic = not all(t.is_static for t in inputs + outputs)
    wide = dynamic or needs_64bit(inputs + outputs)  # 64-bit batch, query and key indices (any size where `?`)
    if len(outputs) != 1 or not isinstance(terminator.operands[0].owner, ir.OpView):
        raise LoweringError(f"kernel @{name}: an attention kernel yields the attention output only")
    root = terminator.operands[0].owner
    while relayout_op(root.operation) and isinstance(root.operands[0].owner, ir.OpView):  # back through the epilogue
        root = root.operands[0].owner
    att = match(root, block, kernel=True)
    if not isinstance(att, Attention):
        raise LoweringError(f"kernel @{name}: not an attention the kernel supports: {att or 'no sdpa or matmul -> softmax -> matmul'}")
    extra = {op.operation for op in ops} - {op.operation for op in att.ops()}
    extra = [op for op in extra if not op.name.startswith(("torch.constant.", "torch.prim.ListConstruct"))]
    if extra:
        raise LoweringError(f"kernel @{name}: '{extra[0].name}' is not part of the attention")

    em = _AttentionEmitter(name, block, att)
    for op in ops:  # constants the score ops read
        if op.operation.name.startswith("torch.constant."):
            em.emit_body_op(op)
    out = att.out
    batch, (lq, dv) = out.shape[:-2], out.shape[-2:]
    nb = len(batch)
    lk = att.v.shape[-2]
    dqk = att.q.shape[-1]
    dtype = tensor_type(att.q.value.type).dtype
    spaces = {"q": (*batch, lq, dqk), "k": (*batch, dqk, lk) if att.transposed_k else (*batch, lk, dqk), "v": (*batch, lk, dv)}
    q = None if att.q.computed else em.site(att.q, spaces["q"])
    k = None if att.k.computed else em.site(att.k, spaces["k"])
    v = None if att.v.computed else em.site(att.v, spaces["v"])
    masks = {m.value: em.site(m, (*batch, lq, lk)) for m in att.masks}
    if dynamic and (q is None or v is None):
        raise LoweringError(f"kernel @{name}: a q or v computed by a prologue needs static sizes")
    em.out = []  # (the q tile's prologue lines, emitted before the head's lines that use them)
    q_text, q_comment = em.tile(att.q, spaces["q"], "offs_m", "offs_d", "mmask & (offs_d < dqk)", dtype)
    q_lines = em.out
    ieee = ', input_precision="ieee"' if dtype == "float32" else ""

    def dot(a: str, b: str) -> str:
        return f"dot_bf16({a}, {b}, INTERPRET)" if dtype == "bfloat16" else f"tl.dot({a}, {b}{ieee})"

    head = [
        "pid_m = tl.program_id(0)",
        f"pid_b = {index('tl.program_id(1)', wide)}",
        *coords("pid_b", list(range(nb)), "b"),
        f"offs_m = {index('pid_m * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]', wide)}",
        "mmask = offs_m < lq",
        "offs_d = tl.arange(0, BLOCK_D)[None, :]",
        "offs_dk = tl.arange(0, BLOCK_D)[:, None]",
        "offs_dv = tl.arange(0, BLOCK_DV)[None, :]",
        *q_lines,
        f"q = {q_text}  # {q_comment}",
        'm_i = tl.full([BLOCK_M, 1], float("-inf"), tl.float32)',
        "l_i = tl.zeros([BLOCK_M, 1], dtype=tl.float32)",
        "acc = tl.zeros([BLOCK_M, BLOCK_DV], dtype=tl.float32)",
    ]
    sdpa = att.root.operation.name == SDPA
    quirk = sdpa and not att.masks  # eager's flash row max skips NaN in its SIMD tail
    if att.causal:
        head += [
            # The key blocks eager's query block [m0, m0 + Q_SPLIT) visits: those starting before its last row.
            "m0 = (pid_m * BLOCK_M) // Q_SPLIT * Q_SPLIT",
            "kv_end = tl.where(m0 + Q_SPLIT < lq, m0 + Q_SPLIT, lq)",
            "kv_end = tl.where(kv_end < lk, kv_end, lk)",
            "hi = (kv_end + KV_SPLIT - 1) // KV_SPLIT * KV_SPLIT",
            "hi = tl.where(hi < lk, hi, lk)",
        ]
    else:
        head.append("hi = lk")
    if quirk:
        head += [
            "first = tl.full([BLOCK_M, 1], 2147483647, tl.int32)  # eager's first key block with a score > -inf",
            "last_nan = tl.full([BLOCK_M, 1], -1, tl.int32)  # its last key block with a NaN score in the SIMD tail",
        ]
    em.out = []
    em.out += [
        f"offs_n = {index('start_n + tl.arange(0, BLOCK_N)[None, :]', wide)}",
        f"offs_nk = {index('start_n + tl.arange(0, BLOCK_N)[:, None]', wide)}",
        "nmask = offs_n < hi",  # keys past hi are not visited: no 0 * v of theirs
    ]
    # kᵀ [D, S] is read as it is; sdpa's k [S, D] through swapped strides.
    rows, cols = ("offs_dk", "offs_n") if att.transposed_k else ("offs_n", "offs_dk")
    k_text, k_comment = em.tile(att.k, spaces["k"], rows, cols, "(offs_dk < dqk) & nmask", dtype)
    em.out.append(f"kt = {k_text}  # {k_comment}")
    em.out.append(f"qk = {dot('q', 'kt')}")
    scores = _score_ops(em, att, masks, Value("qk", "float32"))
    if quirk:
        em.out += [
            "if VEC > 1:",
            "    blk = offs_n // KV_SPLIT",
            "    in_blk = tl.where(lk - blk * KV_SPLIT < KV_SPLIT, lk - blk * KV_SPLIT, KV_SPLIT)",
            f"    tail_nan = ({scores.text} != {scores.text}) & (offs_n - blk * KV_SPLIT >= in_blk // VEC * VEC) & nmask",
            f'    {scores.text} = tl.where(tail_nan, float("-inf"), {scores.text})',
            f'    blk_first = tl.min(tl.where(({scores.text} > float("-inf")) & nmask, blk, 2147483647), 1)[:, None]',
            "    first = tl.where(blk_first < first, blk_first, first)",
            "    blk_nan = tl.max(tl.where(tail_nan, blk, -1), 1)[:, None]",
            "    last_nan = tl.where(blk_nan > last_nan, blk_nan, last_nan)",
        ]
    em.out += [
        f'tmp_s = tl.where(nmask, {scores.text}, float("-inf"))',
        "m_blk = tl.max(tmp_s, 1)[:, None]",
        "m_new = tl.where(m_blk > m_i, m_blk, m_i)",
        'm_use = tl.where(m_new == float("-inf"), 0.0, m_new)',  # a row all -inf so far: exp(-inf - 0) = 0
        "alpha = tl.exp(m_i - m_use)",
        "p = tl.exp(tmp_s - m_use)",
        "l_i = l_i * alpha + tl.sum(p, 1)[:, None]",
    ]
    v_text, v_comment = em.tile(att.v, spaces["v"], "offs_nk", "offs_dv", "(offs_nk < hi) & (offs_dv < dv)", dtype)
    em.out += [
        f"vt = {v_text}  # {v_comment}",
        f"acc = acc * alpha + {dot(cast(Value('p', 'float32'), dtype), 'vt')}",
        "m_i = m_new",
    ]
    loop = ["for start_n in range(0, hi, BLOCK_N):"] + ["    " + line for line in em.out]
    em.out = em.body
    result = "acc / l_i"
    if att.root.operation.name == SDPA:
        # ATen's sdpa: a row with nothing to attend to is 0 @ v, 0 where v is finite and NaN where it is not.
        result = "tl.where(l_i == 0, acc, acc / l_i)"
    tail = [f"o = {result}"]
    if quirk:  # a tail NaN once the running max is finite: exp(NaN - max) makes the row NaN
        tail += ["if VEC > 1:", '    o = tl.where(last_nan >= first, float("nan"), o)']
    where, relaid = "(pid_b * lq * dv + offs_m * dv + offs_dv)", ""
    if att.epilogue:  # the output stored as the relayout's copy (heads merged back into the rows)
        layout = relayout_strides(tuple(out.shape), att.epilogue)
        if layout is None or dynamic:
            raise LoweringError(f"kernel @{name}: the output's relayout has no stride per dim of the tile")
        where = relayout_offset([*(f"b{d}" for d in range(nb)), "offs_m", "offs_dv"], layout)
        relaid = "  # stored relaid: " + " -> ".join(op.operation.name.removeprefix("torch.aten.") for op in att.epilogue)
    store = f"tl.store(out0 + {where}, {cast(Value('o', 'float32'), outputs[0].dtype)}, mask=mmask & (offs_dv < dv)){relaid}"
    sites = [s for s, _, _ in em.sites]
    sizes = [f"s{d}" for d in range(nb)] + ["lq", "lk", "dqk", "dv"]
    params = kernel_params(sites, 1, len(em.scalars), sizes, [site.table_rank or nb + 2 for site in sites])
    what = "sdpa" if att.root.operation.name == SDPA else "matmul -> softmax -> matmul"
    header = [
        f"flash attention ({what}): batch {format_shape(batch)}, {lq if lq is not None else '?'} queries, "
        f"{lk if lk is not None else '?'} keys, head dims {dqk} / {dv}, {dtype}.",
        "Tiled over the keys with an online softmax; the scores never leave registers.",
    ]

    def site_index(entry) -> int:  # a role's site among the kernel's (-1: computed by a prologue)
        return -1 if entry is None else next(i for i, x in enumerate(em.sites) if x[0] is entry[0])

    sizing = None
    if dynamic:
        header.append("`?` sizes: batch, query and key lengths are arguments, sized per launch from q and v.")
        sizing = AttentionSizes(site_index(q), site_index(v), (*batch, lq, lk), (*batch, lq, dv))
    blocks = ["BLOCK_M", "BLOCK_N", "BLOCK_D", "BLOCK_DV"] + (["INTERPRET"] if dtype == "bfloat16" else [])
    blocks += ["Q_SPLIT", "KV_SPLIT", "CAUSAL_ADD", "VEC"] if sdpa else []
    source = em.render(header, params, blocks, head + loop + tail + [store])
    return AttentionKernel(
        name, source, tuple(inputs), tuple(outputs), tuple(em.scalars), tuple(params),
        kind=GroupKind.ATTENTION, sites=tuple(sites), space=tuple(out.shape) if sizing is None else sizing.space,
        batch=tuple(batch), lq=lq, lk=lk, dqk=dqk, dv=dv, causal=att.causal, dtype=dtype,
        spaces=tuple(sp for _, _, sp in em.sites),
        sdpa_sites=tuple(site_index(e) for e in (q, k, v, *masks.values())) if sdpa else (),
        sdpa_shapes=tuple(tuple(tensor_type(x.type).shape) for x in att.root.operands[:3]) if sdpa else (),
        scale=att.scale, gqa=att.gqa > 1, masked=bool(att.masks), dynamic=sizing,
    )


def _score_ops(em: _AttentionEmitter, att: Attention, masks: dict, qk: Value) -> Value:
    """The lines turning the qk tile into scores; returns the scores' value."""
    if att.root.operation.name == SDPA:
        scale = att.scale if att.scale is not None else 1.0 / math.sqrt(att.q.shape[-1])
        s = em.tmp(f"qk * {em.scalar_text(float(scale))}", "float32", "scale")
        if att.causal:  # eager's math sdpa adds the causal mask, its flash kernel replaces the scores
            masked = f'({s.text} + float("-inf") if CAUSAL_ADD else float("-inf"))'
            s = em.tmp(f"tl.where(offs_n > offs_m, {masked}, {s.text})", "float32", "is_causal")
        for value, entry in masks.items():
            m = _load_mask(em, value, entry)
            if att.bool_mask:  # eager adds it as 0 / -inf: a NaN or +inf score stays NaN
                s = em.tmp(f'{s.text} + tl.where({m.text} != 0, 0.0, float("-inf"))', "float32", "bool attn_mask")
            else:
                s = em.tmp(f"{s.text} + {m.text}", "float32", "additive attn_mask")
        return s
    memo: dict[ir.Value, Value] = {att.scores: qk}
    producer = {r: op for op in att.score_ops for r in op.results}

    def value(v: ir.Value) -> Value:
        if v not in memo:
            if v in masks:
                memo[v] = _load_mask(em, v, masks[v])
            elif v in producer:
                memo[v] = em.emit_op(producer[v], value)
            else:
                raise LoweringError(f"kernel @{em.name}: a score op reads a value the kernel does not have")
        return memo[v]

    return value(att.core[1].operands[0])  # the softmax's input


def _load_mask(em: _AttentionEmitter, value: ir.Value, entry) -> Value:
    t = tensor_type(value.type)
    addr = em.address(entry, "offs_m", "offs_n")
    return em.load(addr, t.dtype, entry[0].comment(), "mmask & nmask", other="0")


__all__ = ["AttentionKernel", "attention_blocks", "lower_attention"]
