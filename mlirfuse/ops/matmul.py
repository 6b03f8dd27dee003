"""The matmul ops mlirfuse turns into Triton GEMMs, and the shape facts of each.

`gemm(op)` reads one `mm` / `bmm` / `matmul` / `linear` / `addmm` /
`baddbmm` and returns a `Gemm` (what the template needs: which operand is A,
which is B, bias, alpha/beta, the iteration space) or the reason it stays an
ATen call. The fusion pass (`passes/fuse_matmul.py`), the dialect's verifier
and the lowering (`lowering/matmul.py`) all ask here.

The iteration space is the result's shape `[*batch, *rows, N]`:

- when B has no batch dims (a weight: `mm`, `linear`, `matmul(x, w2d)`),
  every leading dim of the result is a row dim, flattened into M: `x @ w`
  over `[B, T, K]` is one GEMM of M = B*T rows, addressed by strides;
- otherwise (`bmm`, `baddbmm`, `matmul` of two batched operands) the
  leading dims are batch dims (broadcast as matmul broadcasts) and the
  second-to-last is the one row dim.

A is addressed in `[*batch, *rows, K]`, B in `[*batch, K, N]` (for
`linear`, the weight in its own `[N, K]`, read transposed by strides).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from mlirfuse.ir import NO_CONSTANT, constant_value, ir, is_constant_like, tensor_type, torch_name
from mlirfuse.ops.dtypes import itemsize
from mlirfuse.ops.elementwise import RULES
from mlirfuse.ops.family import Family
from mlirfuse.ops.reductions import Reduction, reduction
from mlirfuse.ops.views import CAT, view_args, walk_views

MATMUL_OPS = frozenset(
    ("torch.aten.mm", "torch.aten.bmm", "torch.aten.matmul", "torch.aten.linear", "torch.aten.addmm", "torch.aten.baddbmm")
)
GEMM_DTYPES = ("float32", "float16", "bfloat16")
# CUDA's grid y (the batch) is 65535 at most. (Offsets are 64-bit where a tensor passes 2^31 - 1 elements.)
MAX_BATCH = 65535
# Back-to-back GEMMs in one kernel (kind "matmul-chain", lowering/matmul_chain.py) keep the first GEMM's
# rows on chip: its f32 accumulator [BLOCK_M, H] and the same tile as the second GEMM's A operand, H the
# hidden size padded to a power of two. The most H per operand dtype that fits a thread's registers with
# the second accumulator beside it and no spills (sm_80 / sm_90, bench/spills.py): past it, two kernels.
# By operand width in bytes: f32 128, f16/bf16 256.
CHAIN_MAX_HIDDEN = {4: 128, 2: 256}


def chain_max_hidden(dtype: str) -> int:
    """The largest hidden block a chain of `dtype` GEMMs keeps on chip."""
    return CHAIN_MAX_HIDDEN[itemsize(dtype)]


def hidden_block(size: int) -> int:
    """A chain's hidden size padded to a power of two, at least 16 (tl.dot's least K): its on-chip block."""
    block = 16
    while block < size:
        block *= 2
    return block


@dataclass(frozen=True)
class Gemm:
    """One matmul op's facts; operand fields are operand positions of the op."""

    a: int
    b: int
    bias: int | None  # added as beta * bias + alpha * (A @ B)
    alpha: float
    beta: float
    b_transposed: bool  # linear: B is the [N, K] weight, read transposed
    out: tuple[int, ...]  # the iteration space
    batch: int  # leading batch dims of `out`
    k: int
    dtype: str
    # GEMMs in this one's kernel (a grouped GEMM: q/k/v, gate/up, an LSTM's gates); set by the lowering.
    siblings: int = 1
    # K of each further A operand of the kernel (one K loop per distinct A: x @ W_ih and h @ W_hh).
    k_extra: tuple[int, ...] = ()
    # Lowering: the kernel indexes in int64 (a tensor past 2^31 - 1 elements); its tiles are narrower.
    wide: bool = False
    # Lowering: the results the kernel stores (an epilogue's value kept beside the GEMM's: a clone, a residual).
    outputs: int = 1
    # Lowering: epilogue inputs read as whole [BLOCK_M, BLOCK_N] tiles (a residual), not rows (a bias).
    epilogue_tiles: int = 0

    @property
    def rows(self) -> tuple[int, ...]:
        """The row dims of `out` (flattened into M)."""
        return tuple(range(self.batch, len(self.out) - 1))

    @property
    def m(self) -> int | None:
        """The rows flattened; None where a row size is `?` (known per launch)."""
        rows = [self.out[d] for d in self.rows]
        return None if None in rows else math.prod(rows)

    @property
    def dynamic(self) -> bool:
        return self.m is None

    @property
    def n(self) -> int:
        return self.out[-1]

    @property
    def batch_count(self) -> int:
        return math.prod(self.out[: self.batch])

    def k_dim(self, operand: int, rank: int) -> int | None:
        """The K dim of operand position `operand` (a value of `rank` dims): A's last, B's second to last
        (linear's `[N, K]` weight: its last); None for the bias."""
        if operand == self.a or (operand == self.b and self.b_transposed):
            return rank - 1
        return rank - 2 if operand == self.b else None

    def a_space(self) -> tuple[int, ...]:
        return self.out[:-1] + (self.k,)

    def b_space(self) -> tuple[int, ...]:
        """B's own space: `[*batch, K, N]`, or the weight's `[N, K]` for linear."""
        if self.b_transposed:
            return (self.n, self.k)
        return self.out[: self.batch] + (self.k, self.n)


def _number(value: ir.Value) -> float | None:
    c = constant_value(value)
    if c is NO_CONSTANT or isinstance(c, bool) or not isinstance(c, (int, float)):
        return None
    return float(c)


def gemm(op) -> Gemm | str:
    """The GEMM `op` computes, or why it stays an ATen call."""
    name = op.operation.name
    if name not in MATMUL_OPS:
        return "not a matmul"
    operands = list(op.operands)
    alpha = beta = 1.0
    bias = None
    if name in ("torch.aten.addmm", "torch.aten.baddbmm"):
        a, b, bias = 1, 2, 0
        beta, alpha = _number(operands[3]), _number(operands[4])
        if alpha is None or beta is None:
            return "alpha or beta is not a constant number"
    elif name == "torch.aten.linear":
        a, b = 0, 1
        bias = None if constant_value(operands[2]) is None else 2
    else:
        a, b = 0, 1
    types = (operands[a].type, operands[b].type, op.results[0].type, operands[bias].type if bias is not None else None)
    if alpha == beta == 1.0:  # unscaled: the name and types say it all (an unrolled loop repeats a few)
        return _typed_gemm(name, a, b, bias, *types)
    return _gemm(name, a, b, bias, alpha, beta, *types)


def _gemm(name: str, a: int, b: int, bias: int | None, alpha: float, beta: float, a_type, b_type, out_type, bias_type):
    """`gemm` of an op `name` reading A, B (and the bias) at those operand positions, of those types."""
    ta, tb, out = tensor_type(a_type), tensor_type(b_type), tensor_type(out_type)
    tbias = tensor_type(bias_type) if bias is not None else None
    if any(t is None for t in (ta, tb, out) + ((tbias,) if bias is not None else ())):
        return "an operand or the result is not a tensor"
    if not (ta.is_static and out.is_static) and not _dynamic_rows_only(name, ta, tb, out, tbias):
        return "a `?` size outside the rows of A and of the result (K, N, batch and B must be static)"
    if not tb.is_static or (tbias is not None and not tbias.is_static):
        return "an operand or the result is not a statically shaped tensor of a handled dtype"
    if ta.dtype not in GEMM_DTYPES or ta.dtype != tb.dtype or out.dtype != ta.dtype:
        return f"dtypes {ta.dtype} @ {tb.dtype} -> {out.dtype} (the template takes f32/f16/bf16, all alike)"
    if len(ta.shape) < 2 or len(tb.shape) < 2:
        return "a 1-D operand (matrix-vector product)"
    if name == "torch.aten.linear":
        if len(tb.shape) != 2:
            return "linear weight is not 2-D"
        transposed, k, batch = True, tb.shape[1], 0
    else:
        transposed, k = False, tb.shape[-2]
        batch = 0 if len(tb.shape) == 2 else len(out.shape) - 2
    if ta.shape[-1] != k or len(out.shape) < 2:
        return "inner dims disagree"
    if bias is not None:
        if tbias.dtype != out.dtype or not _broadcasts_into(tbias.shape, out.shape):
            return "bias does not broadcast into the result with its dtype"
        if beta == 0:
            bias = None  # eager ignores the bias (even NaN) when beta is 0
    g = Gemm(a, b, bias, alpha, beta, transposed, tuple(out.shape), batch, k, out.dtype)
    if 0 in (g.m, g.n, g.k, g.batch_count):
        return "an empty dimension"
    if g.batch_count > MAX_BATCH:
        return f"batch {g.batch_count} > {MAX_BATCH}"
    return g


@functools.lru_cache(maxsize=1024)  # types are uniqued and hashable; a Gemm is frozen
def _typed_gemm(name: str, a: int, b: int, bias: int | None, a_type, b_type, out_type, bias_type) -> Gemm | str:
    """`_gemm` with alpha = beta = 1."""
    return _gemm(name, a, b, bias, 1.0, 1.0, a_type, b_type, out_type, bias_type)


def _dynamic_rows_only(name: str, ta, tb, out, tbias) -> bool:
    """A GEMM over `?` rows: a linear or a matmul by a static 2-D B, `?` only in A's and the result's row
    dims (the template takes M and the row sizes as arguments; N, K and the tiles are fixed)."""
    if name not in ("torch.aten.linear", "torch.aten.matmul", "torch.aten.mm") or len(tb.shape) != 2 or not tb.is_static:
        return False
    if tbias is not None and not tbias.is_static:
        return False
    if len(ta.shape) != len(out.shape) or ta.shape[-1] is None or out.shape[-1] is None:
        return False
    return all(a == o for a, o in zip(ta.shape[:-1], out.shape[:-1]))


def _broadcasts_into(shape, target) -> bool:
    if len(shape) > len(target):
        return False
    return all(d in (1, t) for d, t in zip(reversed(shape), reversed(target)))


@dataclass(frozen=True)
class KSplit:
    """A GEMM operand read piece by piece along K: the cat, and the elementwise ops from it to the operand (first first)."""

    cat: object  # the torch.aten.cat op
    ops: tuple = ()  # evaluated on each piece's tiles in place of the cat's (relu(cat([x, h])) as relu(x), relu(h))


def k_split(value: ir.Value, k_dim: int) -> KSplit | str | None:
    """How GEMM operand `value` (K along its dim `k_dim`) is read by K-split; None where no cat computes it, a str why not.

    The operand is a cat along K, or elementwise ops on one (a cast, an
    activation): those are evaluated on each piece instead of on the cat,
    so each reads exactly one value computed from the cat (read by nothing
    else), and otherwise constants or values the same all along K (size 1
    there, or too few dims to reach it).
    """
    k_from_end = k_dim - len(tensor_type(value.type).shape)
    chain, v = [], value
    while True:
        op = v.owner
        if not isinstance(op, ir.OpView) or not computed_from_cat(v):
            return None
        if op.operation.name == CAT:
            rank = len(tensor_type(v.type).shape)
            dim = constant_value(op.operands[1])
            if not isinstance(dim, int) or dim % rank - rank != k_from_end:
                return f"cat along dim {dim % rank if isinstance(dim, int) else dim}, not the GEMM operand's K dim (only a K dim is read by K-split)"
            return KSplit(op, tuple(reversed(chain)))
        if torch_name(op) not in RULES:
            return f"'{op.operation.name}' computes on the cat (only elementwise ops are evaluated per piece)"
        carried = list(dict.fromkeys(u for u in op.operands if not is_constant_like(u) and computed_from_cat(u)))
        if len(carried) != 1 or any(use.owner != op for use in carried[0].uses):
            return "the cat is computed on further, or read elsewhere (only a cat that is a GEMM operand is read by K-split)"
        for u in op.operands:
            shape = tensor_type(u.type).shape if tensor_type(u.type) is not None else ()
            if u != carried[0] and len(shape) >= -k_from_end and shape[k_from_end] != 1:
                return "an op on the cat reads a value that varies along K (only values the same along K are read per piece)"
        chain.append(op)
        v = carried[0]


def computed_from_cat(value: ir.Value) -> bool:
    """Is a cat among the ops computing `value` (within its block)?"""
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        op = v.owner
        if not isinstance(op, ir.OpView) or v in seen:
            continue
        seen.add(v)
        if op.operation.name == CAT:
            return True
        stack.extend(op.operands)
    return False


K_SUM = "torch.aten.sum.dim_IntList"


def transposes_2d(op) -> bool:
    """Is view `op` the transpose of a 2-d value (`t`, `transpose(0, 1)`, `permute([1, 0])`)?"""
    if len(tensor_type(op.operands[0].type).shape) != 2:
        return False
    name, args = op.operation.name, view_args(op.operation)
    if name == "torch.aten.t":
        return True
    if name == "torch.aten.transpose.int":
        return args is not None and {d % 2 for d in args} == {0, 1}
    return name == "torch.aten.permute" and args is not None and tuple(d % 2 for d in args[0]) == (1, 0)


def row_sum_of_a(op, mms) -> bool:
    """Whether reduction `op` sums or averages the rows of a value (its last dim, keepdim) that an A operand of the
    GEMMs `mms` is computed from: a row normalization (RMSNorm, LayerNorm) a GEMM kernel computes in loops over K
    before its own (`passes.legality_matmul.why_not_row_prologue`, `lowering.matmul`)."""
    red = reduction(op)
    if not isinstance(red, Reduction) or red.combine not in ("sum", "mean") or not red.keepdim:
        return False
    if red.dims != (len(red.shape) - 1,):
        return False
    targets = []
    for mm in mms:
        g = gemm(mm)
        if not isinstance(g, Gemm):
            return False
        targets.append(mm.operands[g.a])
    seen, stack = [], [op.results[0]]
    while stack:
        v = stack.pop()
        if any(v == t for t in targets):
            return True
        for use in v.uses:
            for r in use.owner.results:
                if not any(r == s for s in seen):
                    seen.append(r)
                    stack.append(r)
    return False


def why_not_k_sum(op, mm, same_source=None) -> str | None:
    """None if reduction `op` sums GEMM `mm`'s A operand over K, so the GEMM's kernel can compute it; otherwise why not.

    A bias gradient beside its weight gradient: `sum(g, [0])` and
    `g.t() @ x` read the same `g`; the second's A tile `[BLOCK_M, BLOCK_K]`
    holds what the sum adds, so the template adds each tile's rows as it
    loads them and stores the `M` sums beside its result (cuBLASLt's
    BGRADA epilogue). The sum's input and A are view chains of one tensor
    (`same_source(a_root, sum_root)`: whether the chains' starts are one
    tensor, by default the same value): A is the sum's input and the sum
    runs over A's last (K) dim, or A is the transpose of a 2-d input summed
    over its dim 0. No prologue (A is read as it is stored), one unbatched
    GEMM, one dtype.
    """
    g = gemm(mm)
    if not isinstance(g, Gemm) or g.batch:
        return "not an unbatched GEMM"
    if op.operation.name != K_SUM or constant_value(op.operands[3]) is not None:
        return "not a sum over dims without a dtype"
    red = reduction(op)
    if not isinstance(red, Reduction):
        return red
    a_root, a_views = walk_views(mm.operands[g.a])
    u_root, u_views = walk_views(op.operands[0])
    if not (same_source or (lambda a, b: a == b))(a_root, u_root):
        return "the sum and the GEMM's A read different tensors"
    if any(view_args(v.operation) is None for v in (*a_views, *u_views)):
        return "a view with arguments that are not constant"
    a_steps, u_steps = ([(v.operation.name, view_args(v.operation)) for v in views] for views in (a_views, u_views))
    dtypes = {tensor_type(v.type).dtype for v in (op.operands[0], op.results[0], mm.operands[g.a])}
    if dtypes != {g.dtype}:
        return "the sum's dtypes are not the GEMM's"
    rank = len(red.shape)
    if a_steps == u_steps and red.dims == (rank - 1,):
        return None  # A is the sum's input, summed along its K
    if a_steps[:-1] == u_steps and a_views and transposes_2d(a_views[-1]) and red.dims == (0,):
        return None  # A = u.t(), u summed over its rows: A's K
    return "the sum does not run over the GEMM's K dim of A"


def why_not_fusible(op) -> str | None:
    """None if `op` is a GEMM the template computes (fusion-fuse-matmul); otherwise why it stays an ATen call."""
    plan = gemm(op)
    return plan if isinstance(plan, str) else None


FAMILY = Family(
    __name__, MATMUL_OPS, why_not_fusible, lowering="mlirfuse/lowering/matmul.py",
    limits="f32, f16 or bf16 operands and result alike, statically shaped, 2-d or more; 64-bit offsets past 2^31 - 1 elements; "
    f"a batch of {MAX_BATCH} at most",
)

__all__ = [
    "CHAIN_MAX_HIDDEN", "FAMILY", "GEMM_DTYPES", "Gemm", "KSplit", "K_SUM", "MATMUL_OPS", "chain_max_hidden", "computed_from_cat",
    "gemm", "hidden_block", "k_split", "transposes_2d", "why_not_fusible", "why_not_k_sum",
]
