"""Attention as one kernel: which torch-dialect IR is attention, and what the kernel needs to know.

Two forms are recognised, on a function body (`fusion-fuse-attention`
deciding what to group) and on a kernel body (the Triton lowering reading
the group back) alike:

- `torch.aten.scaled_dot_product_attention(q, k, v, mask, 0.0, is_causal,
  scale, enable_gqa)`, with no mask, a bool mask or an additive float mask;
- explicit attention: `matmul(q, kᵀ)` -> elementwise *score ops* (a scale,
  an additive mask, `masked_fill` / `where` with a bool mask, ...) ->
  `softmax` over the key dim -> casts -> `matmul(·, v)`.

q, k and v are read through chains of views (head splits, `kᵀ`) and,
for grouped-query attention, through a repeat of the kv heads
(`repeat_kv`'s unsqueeze/expand/reshape, or `repeat_interleave`): kv head
`h // n` serves query head `h`, by index arithmetic, nothing is copied.
Score ops may read other tensors (masks) broadcast into the scores' shape;
they run on each [BLOCK_M, BLOCK_N] tile of scores, through the same
per-op emitters as pointwise kernels.

q, k and v may be computed by a *prologue* (issue 22): elementwise ops,
views with an index map and cats (RoPE's `q * cos + rotate_half(q) * sin`,
its partial-rotary form `cat(rope(q[..., :r]), q[..., r:])`, a scale, a
cast), which the kernel evaluates on each tile as it loads it. An op joins
while everything reading its result is in the attention; an op that is read
elsewhere too, or that is not pointwise over the operand's index space (a
reduction, a gather, ...), leaves its result an input, with the reason in
`Attention.refused` where that is the operand itself.

`match(root)` returns an `Attention` or, for a near miss, the reason in
words; None when `root` is not attention at all.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from mlirfuse.ir import NO_CONSTANT, constant_value, defining_op, ir, tensor_type
from mlirfuse.ops.elementwise import RULES, fusible, why_not_fusible
from mlirfuse.ops.family import Family
from mlirfuse.ops.matmul import MATMUL_OPS
from mlirfuse.ops.views import (
    CAT,
    COPIES,
    VIEW_OPS,
    constant_view,
    relayout_op,
    relayout_strides,
    view_coords,
    walk_views,
)

SDPA = "torch.aten.scaled_dot_product_attention"
MATMULS = ("torch.aten.matmul", "torch.aten.bmm")
SOFTMAXES = ("torch.aten.softmax.int", "torch.aten._softmax")
# Ops between the softmax and the second matmul that change nothing but the dtype
# (a clone: eval-mode dropout as exported).
CASTS = ("torch.aten.to.dtype", "torch.aten._to_copy", "torch.prims.convert_element_type", "torch.aten.clone")
DROPOUT = "torch.aten.dropout"
REPEAT_INTERLEAVE = "torch.aten.repeat_interleave.self_int"
_RESHAPES = ("torch.aten.view", "torch.aten.reshape", "torch.aten._unsafe_view")
ATTENTION_DTYPES = ("float32", "float16", "bfloat16")
# How many elementwise ops may compute a mask inside the kernel (beyond: it is an input).
_MAX_SIDE_DEPTH = 8
# q/k and v tiles of a whole head stay in registers.
MAX_HEAD_DIM = 256
# Ops of the q, k and v prologues together (RoPE on q and k with a partial rotary: about 20).
MAX_PROLOGUE_OPS = 48


@dataclass
class Operand:
    """A tensor the kernel reads: `leaf` (a kernel input) seen through `ops` (views, a head repeat), giving `value`."""

    value: ir.Value
    leaf: ir.Value
    ops: list = field(default_factory=list)  # in program order
    # The view ops the launcher applies (repeat and clones left out; a squeeze standing for a
    # repeat's size-1 dim as its (op name, args)).
    views: list = field(default_factory=list)
    repeat: tuple[int, int] | None = None  # (dim, n): index i of `shape` reads index i // n of the viewed leaf
    shape: tuple[int, ...] = ()  # as the kernel indexes it (sdpa's enable_gqa: the query's heads)
    # The pointwise ops computing `leaf` that the kernel evaluates on each tile (empty: `leaf` is loaded).
    prologue: list = field(default_factory=list)

    @property
    def computed(self) -> bool:
        return bool(self.prologue)

    def __post_init__(self):
        self.shape = self.shape or tensor_type(self.value.type).shape


@dataclass
class Attention:
    root: object  # the op whose result is the attention output
    q: Operand
    k: Operand  # explicit: kᵀ [..., D, S]; sdpa: k [..., S, D]
    v: Operand
    masks: list[Operand]  # tensors the score ops read (sdpa: its attn_mask)
    score_ops: list  # explicit: elementwise ops from the scores to the softmax input (mask ops too), in order
    core: list  # matmul, softmax, casts, matmul, or the sdpa op
    scores: ir.Value | None = None  # explicit: the first matmul's result
    causal: bool = False
    scale: float | None = None  # sdpa: None is 1/sqrt(D)
    bool_mask: bool = False
    gqa: int = 1  # sdpa with enable_gqa: query heads per kv head
    refused: list[str] = field(default_factory=list)  # why q, k or v is read from memory, not computed by a prologue
    # A relayout of the output ending in a copy (`o.transpose(1, 2).contiguous()`): the kernel stores the copy.
    epilogue: list = field(default_factory=list)

    @property
    def transposed_k(self) -> bool:
        return self.root.operation.name != SDPA

    @property
    def out(self):
        return tensor_type(self.root.results[0].type)

    def ops(self) -> list:
        """Every op of the attention, each once, in program order (as `wrap` wants them)."""
        ops = [op for operand in (self.q, self.k, self.v, *self.masks) for op in operand.ops]
        ops += [op for operand in (self.q, self.k, self.v) for op in operand.prologue] + self.epilogue
        ops += self.score_ops + self.core
        seen, unique = set(), []
        for op in ops:
            if op.operation not in seen:
                seen.add(op.operation)
                unique.append(op)
        # Compared in place (MLIR keeps each block's op order): a table of the whole block per attention
        # made the pass quadratic in the layers.
        return sorted(unique, key=functools.cmp_to_key(_program_order))


def _program_order(a, b) -> int:
    """-1 if `a` comes before `b` in their block, 1 if after, 0 if they are one op."""
    if a.operation == b.operation:
        return 0
    return -1 if a.operation.is_before_in_block(b.operation) else 1


def _const(value):
    v = constant_value(value)
    return None if v is NO_CONSTANT else v


def _normalized(dim, rank: int):
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        return None
    return dim % rank


def _repeat_of(ops: list, start: int) -> tuple[int, int, int, int | None] | None:
    """(dim, n, ops used, squeezed) if `ops[start:]` begins with a kv-head repeat, else None.

    The repeats: repeat_interleave; unsqueeze -> expand -> [clone] -> reshape
    (`repeat_kv`); expand of a size-1 dim -> [clone] -> reshape (Falcon's
    `broadcast_to(qkv[..., [-1], :])` then `flatten`). `squeezed`: in the last
    form, the size-1 dim the kernel's view of the leaf drops (a squeeze the
    launcher applies in the repeat's place).
    """
    op = ops[start]
    name = op.operation.name
    if name == REPEAT_INTERLEAVE:
        n, dim = _const(op.operands[1]), _const(op.operands[2])
        rank = len(tensor_type(op.results[0].type).shape)
        dim = _normalized(dim, rank)
        if isinstance(n, int) and n > 0 and dim is not None:
            return dim, n, 1, None
        return None
    if name == "torch.aten.unsqueeze" and start + 2 < len(ops):
        d = _normalized(_const(op.operands[1]), len(tensor_type(op.results[0].type).shape))
        expand, used, squeezed = ops[start + 1], 2, None
    elif name == "torch.aten.expand" and start + 1 < len(ops):
        before = tensor_type(op.operands[0].type).shape
        grown = [i for i, (a, b) in enumerate(zip(before, tensor_type(op.results[0].type).shape)) if a != b]
        d = grown[0] if len(grown) == 1 else None
        expand, used, squeezed = op, 1, d
    else:
        return None
    if d is None or d == 0 or expand.operation.name != "torch.aten.expand":
        return None
    before, after = tensor_type(expand.operands[0].type).shape, tensor_type(expand.results[0].type).shape
    if len(before) != len(after) or any(a != b for i, (a, b) in enumerate(zip(before, after)) if i != d) or before[d] != 1:
        return None
    if start + used < len(ops) and ops[start + used].operation.name == "torch.aten.clone":
        used += 1
    if start + used >= len(ops) or ops[start + used].operation.name not in _RESHAPES:
        return None
    merged = tensor_type(ops[start + used].results[0].type).shape
    if merged != (*after[: d - 1], after[d - 1] * after[d], *after[d + 1 :]):
        return None
    return d - 1, after[d], used + 1, squeezed


def _past_repeat(op, repeat: tuple[int, int]) -> tuple[tuple[int, int], bool] | None:
    """(the repeat's dim after `op`, whether the launcher applies `op`) for a view after a repeat; None: not readable.

    A transpose (`.transpose(1, 2)` of [b, s, h, d], `kᵀ`) is applied to the
    unrepeated leaf, moving the repeated dim with it (which must end a batch
    dim: `operand` checks); a reshape to the same shape changes nothing and
    is left out.
    """
    name = op.operation.name
    shape = tensor_type(op.results[0].type).shape
    if name in _RESHAPES and tensor_type(op.operands[0].type).shape == shape:
        return repeat, False
    if name != "torch.aten.transpose.int":
        return None
    rank = len(shape)
    a, b = _normalized(_const(op.operands[1]), rank), _normalized(_const(op.operands[2]), rank)
    if a is None or b is None:
        return None
    return (b if repeat[0] == a else a if repeat[0] == b else repeat[0], repeat[1]), True


def _read_through(op) -> bool:
    """A tensor view with constant arguments, a kv-head repeat or a clone: what an attention operand is read through."""
    if constant_view(op):  # whose result is a tensor (`has_constant_args` asks)
        return True
    return op.name in (REPEAT_INTERLEAVE, "torch.aten.clone") and tensor_type(op.results[0].type) is not None


def operand(value: ir.Value, block: ir.Block, allow_repeat: bool = True) -> Operand:
    """`value` as the kernel reads it: the views (and at most one kv-head repeat) in `block` that compute it from a leaf.

    Only transposes and same-shape reshapes may follow a repeat (`repeat_kv(k).transpose(2, 3)`,
    Falcon's `.transpose(1, 2)`), and the repeated dim must end a batch dim (the heads); otherwise
    the chain starts after the repeat (the repeated tensor is the leaf), or holds no repeat.
    """
    _, chain = walk_views(value, block, through=_read_through)
    start, repeat, views = _read_chain(chain, allow_repeat)
    if repeat is not None and repeat[0] >= len(tensor_type(value.type).shape) - 2:  # not a batch dim (heads) at the end
        start, repeat, views = _read_chain(chain, False)
    ops = chain[start:]
    leaf = ops[0].operands[0] if ops else value
    return Operand(value, leaf, ops, views, repeat)


def _read_chain(chain: list, allow_repeat: bool) -> tuple[int, tuple[int, int] | None, list]:
    """(where the kernel's chain starts in `chain`, the kv-head repeat, the views the launcher applies)."""
    start, i, repeat, views = 0, 0, None, []
    while i < len(chain):
        found = _repeat_of(chain, i) if allow_repeat and repeat is None else None
        if found is not None:
            dim, n, used, squeezed = found
            repeat, i = (dim, n), i + used
            if squeezed is not None:
                views.append(("torch.aten.squeeze.dim", (squeezed,)))
            continue
        op = chain[i]
        name = op.operation.name
        if name == "torch.aten.clone":  # same values: the kernel reads the tensor cloned
            i += 1
            continue
        past = _past_repeat(op, repeat) if repeat is not None and name in VIEW_OPS else None
        if name not in VIEW_OPS or (repeat is not None and past is None):  # restart the chain after this op
            start, i, repeat, views = i + 1, i + 1, None, []
            continue
        if past is not None:
            repeat, applied = past
            if not applied:
                i += 1
                continue
        views.append(op)
        i += 1
    return start, repeat, views


def _static_float(*values, head_dims=(-1, -1, -1)) -> bool:
    """f32/f16/bf16 tensors whose head dims (`head_dims`, one per value: the last, kᵀ's second to last) are
    static: batch, query and key sizes may be `?` (the kernel takes them per launch, lowering/attention.py)."""
    types = [tensor_type(v.type) for v in values]
    return all(
        t is not None and t.dtype in ATTENTION_DTYPES and len(t.shape) >= 2 and t.shape[d] is not None
        for t, d in zip(types, head_dims)
    )


def _broadcasts(shape, target) -> bool:
    if len(shape) > len(target):
        return False
    return all(d == t or d == 1 for d, t in zip(reversed(shape), reversed(target)))


def _batch_ok(operand: Operand, batch: tuple, what: str) -> str | None:
    """None if `operand`'s batch dims broadcast into `batch`."""
    if not _broadcasts(operand.shape[:-2], batch):
        return f"{what} of shape {list(operand.shape)} does not broadcast to the batch dims {list(batch)}"
    return None


def match(root, block: ir.Block | None = None, kernel: bool = False) -> Attention | str | None:
    """`root` (an sdpa op or the second matmul) as attention; a reason if it almost is; None if it is not.

    `kernel`: `root` is in an attention kernel's body, which holds exactly the
    attention (values may be read more than once there, after CSE).
    """
    block = block or root.operation.block
    if root.operation.name == SDPA:
        return _match_sdpa(root, block, kernel)
    if root.operation.name in MATMULS:
        return _match_explicit(root, block, kernel)
    return None


def _match_sdpa(op, block, kernel: bool = False) -> Attention | str:
    q, k, v, mask, dropout, causal, scale, gqa = op.operands
    if not _static_float(q, k, v) or tensor_type(op.results[0].type) is None:
        return "q, k and v must be f32, f16 or bf16 tensors with static head dims"
    if constant_value(scale) is NO_CONSTANT:
        return "scale must be a constant"
    dropout, causal, scale, gqa = _const(dropout), _const(causal), _const(scale), _const(gqa)
    if dropout is None or dropout != 0:
        return f"dropout_p {dropout} is not 0 (the kernel has no random numbers)"
    if not isinstance(causal, bool) or not isinstance(gqa, bool) or not (scale is None or isinstance(scale, (int, float))):
        return "is_causal, scale and enable_gqa must be constants"
    qt, kt, vt = (tensor_type(x.type) for x in (q, k, v))
    if len(qt.shape) < 2 or len(kt.shape) != len(qt.shape) or len(vt.shape) != len(qt.shape):
        return "q, k and v must have the same rank, at least 2"
    if len({qt.dtype, kt.dtype, vt.dtype}) != 1:
        return "q, k and v have different dtypes"
    if qt.shape[-1] != kt.shape[-1] or kt.shape[-2] != vt.shape[-2]:
        return "q, k and v sizes do not agree"
    if max(qt.shape[-1], vt.shape[-1]) > MAX_HEAD_DIM:
        return f"head dim above {MAX_HEAD_DIM}"
    qo, ko, vo = operand(q, block, False), operand(k, block), operand(v, block)
    n = 1
    if gqa and len(qt.shape) >= 3 and kt.shape[-3] != qt.shape[-3]:
        if None in (kt.shape[-3], qt.shape[-3], vt.shape[-3]):
            return "enable_gqa with `?` head counts"
        if kt.shape[-3] == 0 or qt.shape[-3] % kt.shape[-3] or vt.shape[-3] != kt.shape[-3]:
            return "enable_gqa needs query heads a multiple of the kv heads"
        n = qt.shape[-3] // kt.shape[-3]
        rank = len(qt.shape)
        ko, vo = (operand(x, block, False) for x in (k, v))
        for o in (ko, vo):
            o.repeat = (rank - 3, n)
            o.shape = (*o.shape[:-3], o.shape[-3] * n, *o.shape[-2:])
    batch = qt.shape[:-2]
    for what, o in (("k", ko), ("v", vo)):
        why = _batch_ok(o, batch, what)
        if why:
            return why
    masks = []
    bool_mask = False
    if constant_value(mask) is not None:
        mt = tensor_type(mask.type)
        if mt is None:
            return "attn_mask must be a tensor"
        if mt.dtype not in ("bool", *ATTENTION_DTYPES):
            return f"attn_mask of dtype {mt.dtype} (only bool or float masks)"
        scores = (*batch, qt.shape[-2], kt.shape[-2])
        if not _broadcasts(mt.shape, scores):
            return f"attn_mask of shape {list(mt.shape)} does not broadcast to the scores {list(scores)}"
        if causal:
            return "attn_mask together with is_causal"
        bool_mask = mt.dtype == "bool"
        masks.append(operand(mask, block, False))
    return with_prologues(Attention(
        op, qo, ko, vo, masks, [], [op], causal=causal, scale=None if scale is None else float(scale),
        bool_mask=bool_mask, gqa=n,
    ), block, kernel)


def _single_use(value: ir.Value, kernel: bool = False) -> bool:
    return kernel or len(list(value.uses)) == 1


def _through_casts(value: ir.Value, block, core: list, kernel: bool):
    """The softmax op behind `value` through casts and identity dropouts (each read once), or a reason / None."""
    while True:
        op = defining_op(value)
        if op is None or op.block != block:
            return None
        name = op.name
        if name in SOFTMAXES:
            core.append(op.opview)
            return op.opview
        if name == DROPOUT:
            p, train = _const(op.operands[1]), _const(op.operands[2])
            if train is not False and p != 0:
                return f"dropout with p {p} on the attention weights (the kernel has no random numbers)"
        elif name not in CASTS or not fusible(op.opview):
            return None
        if not _single_use(op.operands[0], kernel):
            return "the attention weights are read outside the attention"
        core.append(op.opview)
        value = op.operands[0]


def _match_explicit(second, block, kernel: bool) -> Attention | str | None:
    core = [second]
    softmax = _through_casts(second.operands[0], block, core, kernel)
    if softmax is None or isinstance(softmax, str):
        return softmax
    x = softmax.operands[0]
    st = tensor_type(x.type)
    if st is None or len(st.shape) < 2:
        return "the scores must be a tensor of rank 2 or more"
    if _normalized(_const(softmax.operands[1]), len(st.shape)) != len(st.shape) - 1:
        return "softmax over a dim other than the keys (the last)"
    if not _single_use(softmax.results[0], kernel):
        return "the attention weights are read outside the attention"
    if not _single_use(x, kernel):
        return "the scores are read outside the attention"
    # Walk the scores back to the first matmul; every op between reads them once.
    score_ops, sides = [], []
    value = x
    while True:
        op = defining_op(value)
        if op is None or op.block != block:
            return "the scores do not come from a matmul"
        op = op.opview
        if op.operation.name in MATMULS:
            first = op
            break
        why = why_not_fusible(op)
        if why:
            return f"'{op.operation.name}' on the scores: {why}"
        chained = [v for v in op.operands if tensor_type(v.type) is not None and _from_matmul(v, block)]
        if len(chained) != 1:
            return f"'{op.operation.name}' combines the scores with themselves"
        score_ops.append(op)
        sides += [v for v in op.operands if v != chained[0] and tensor_type(v.type) is not None]
        if tensor_type(op.results[0].type).shape != st.shape:
            return "an op on the scores changes their shape"
        value = chained[0]
        if not _single_use(value, kernel):
            return "the scores are read outside the attention"
    score_ops.reverse()
    q_value, kt_value = first.operands
    v_value = second.operands[1]
    if not _static_float(q_value, kt_value, v_value, head_dims=(-1, -2, -1)):
        return "q, k and v must be f32, f16 or bf16 tensors with static head dims"
    qt, ktt, vt, out = (tensor_type(t.type) for t in (q_value, kt_value, v_value, second.results[0]))
    if min(len(qt.shape), len(ktt.shape), len(vt.shape)) < 2 or len({qt.dtype, ktt.dtype, vt.dtype}) != 1:
        return "q, k and v must have rank 2 or more and one dtype"
    if tensor_type(first.results[0].type).shape != st.shape:
        return "the scores change shape before the softmax"
    if max(qt.shape[-1], vt.shape[-1]) > MAX_HEAD_DIM:
        return f"head dim above {MAX_HEAD_DIM}"
    batch = out.shape[:-2]
    qo, ko, vo = operand(q_value, block, False), operand(kt_value, block), operand(v_value, block)
    for what, o in (("q", qo), ("k", ko), ("v", vo)):
        why = _batch_ok(o, batch, what)
        if why:
            return why
    if not _broadcasts(st.shape[:-2], batch):
        return "the scores do not broadcast to the output"
    # Mask inputs: computed by elementwise ops read only here (pulled in), else read as they are.
    masks, side_ops = [], []
    for v in sides:
        why = _side(v, block, st.shape, masks, side_ops, 0, kernel)
        if why:
            return why
    side_ops.reverse()
    att = Attention(second, qo, ko, vo, masks, side_ops + score_ops, [first, *reversed(core)], scores=first.results[0])
    return with_prologues(att, block, kernel)


def relaid_output(att: Attention, block) -> list:
    """The relayout ops after the attention's output up to its last copy, each the only reader of the one before.

    The copy of `o.transpose(1, 2).contiguous()` (heads merged back into the rows) is then the kernel's
    result, stored in that layout (`relayout_strides`): no copy kernel. Empty where there is none.
    """
    chain, taken, value = [], [], att.root.results[0]
    while True:
        uses = list(value.uses)
        if len(uses) != 1:
            return taken
        user = uses[0].owner  # an OpView
        operation = user.operation
        if operation.block != block or not relayout_op(operation) or operation.name == "torch.aten.expand":
            return taken
        chain.append(user)
        if operation.name in COPIES:
            if relayout_strides(tuple(att.out.shape), chain) is None:
                return taken
            taken = list(chain)
        value = user.results[0]


def _prologue_op(op) -> bool:
    """Can the kernel evaluate `op` at any coordinates of a tile: an elementwise op, a view with an index map, a cat?"""
    name = op.operation.name
    types = [tensor_type(v.type) for v in op.results]
    if len(types) != 1 or types[0] is None or not types[0].is_static:
        return False
    if name in RULES:
        return fusible(op)
    if name in VIEW_OPS:
        return constant_view(op.operation) and view_coords(op.operation, ["x"] * len(types[0].shape)) is not None
    if name == CAT:
        items = defining_op(op.operands[0])
        return (
            items is not None and items.name == "torch.prim.ListConstruct" and isinstance(_const(op.operands[1]), int)
            and all(tensor_type(v.type) is not None and tensor_type(v.type).is_static for v in items.operands)
        )
    return False


def _broadcast(value: ir.Value, shape: tuple) -> bool:
    """Is `value` broadcast into `shape` (fewer dims, or 1 where `shape` is not)?"""
    own = tensor_type(value.type).shape
    return len(own) < len(shape) or any(a == 1 and b != 1 for a, b in zip(own, shape))


def _tensor_operands(op) -> list:
    if op.operation.name == CAT:
        return list(defining_op(op.operands[0]).operands)
    return [v for v in op.operands if tensor_type(v.type) is not None]


def leaf_coords(o: Operand, at: list[str]) -> list[str] | None:
    """The coordinates of `o.leaf` that `o` reads at `at` (its coordinates in `o.shape`); None: a view with no index map.

    Back through the kv-head repeat, then the views from the last (a squeeze standing for a repeat's size-1 dim
    reads index 0 there).
    """
    at = list(at)
    if o.repeat is not None and o.repeat[1] > 1:
        at[o.repeat[0]] = f"({at[o.repeat[0]]} // {o.repeat[1]})"
    for view in reversed(o.views):
        if isinstance(view, tuple):
            if view[0] != "torch.aten.squeeze.dim":
                return None
            at = [*at[: view[1][0]], "0", *at[view[1][0] :]]
        else:
            at = view_coords(view.operation, at)
        if at is None:
            return None
    return at


def with_prologues(att: Attention, block, kernel: bool) -> Attention:
    """`att` with the pointwise ops computing q, k and v pulled in as prologues (`Operand.prologue`), the rest
    explained, and its output's relayout (`relaid_output`) as its epilogue.

    Ops are taken from each operand's leaf back while the kernel can evaluate
    them at a tile's coordinates (`_prologue_op`) and, in a function body,
    while every reader of their result is in the attention: an op read
    elsewhere too (its result is stored anyway) is left out, and its result
    becomes an input. `kernel`: `block` is an attention kernel's body, every
    op in it belongs to the attention.
    """
    roles = [(what, o) for what, o in (("q", att.q), ("k", att.k), ("v", att.v))]
    # The ops of `att.ops()`, as a set: not sorted into program order.
    fixed = {op.operation for ops in (*(o.ops for o in (att.q, att.k, att.v, *att.masks)),
                                      *(o.prologue for o in (att.q, att.k, att.v)), att.epilogue, att.score_ops, att.core)
             for op in ops}

    def reachable(out: set) -> dict:
        """Per role, the prologue ops reachable from its leaf through ops not in `out`, in program order.

        An operand an op broadcasts (cos and sin over the heads) is computed over a smaller index space:
        only the views reading it join (the kernel loads it through them), what computes it does not.
        """
        found = {}
        for what, o in roles:
            ops, stack = [], [(o.leaf, False)]
            while stack:
                value, views_only = stack.pop()
                op = defining_op(value)
                if (
                    op is None or op.block != block or op in out or op in fixed
                    or any(op == x.operation for x in ops) or not _prologue_op(op.opview)
                    or (views_only and op.name not in VIEW_OPS) or loaded(op)
                ):
                    continue
                ops.append(op.opview)
                if op.name == CAT:
                    ops.append(defining_op(op.operands[0]).opview)
                shape = tensor_type(op.results[0].type).shape
                stack += [(u, views_only or (op.name not in (*VIEW_OPS, CAT) and _broadcast(u, shape)))
                          for u in _tensor_operands(op.opview)]
            found[what] = ops
        return found

    if not att.out.is_static or not all(tensor_type(o.value.type).is_static for _, o in roles):
        return att  # a kernel over `?` sizes loads its operands and stores its output as it is
    att.epilogue = relaid_output(att, block)
    # An operand read through a view with no index map is loaded: what computes its leaf stays outside. Asked only
    # of a leaf's producer the kernel could evaluate (the last question `reachable` asks): most leaves are inputs,
    # GEMM results or a split's pieces, and the views' index maps are strings built per view.
    leaves: dict = {}
    for _, o in roles:
        leaves.setdefault(defining_op(o.leaf), []).append(o)
    unmapped: dict = {}

    def loaded(op) -> bool:
        found = unmapped.get(op)
        if found is None:
            found = unmapped[op] = any(leaf_coords(o, ["x"] * len(o.shape)) is None for o in leaves.get(op, ()))
        return found

    out: set = set()
    while True:
        found = reachable(out)
        inside = fixed | {op.operation for ops in found.values() for op in ops}
        escaping = [] if kernel else [
            op.operation for ops in found.values() for op in ops
            if any(u.owner.operation not in inside for r in op.results for u in r.uses)
        ]
        # A leaf another operand computes but this one loads (q's prologue computing the k it shares).
        escaping += [defining_op(o.leaf) for what, o in roles if not found[what] and defining_op(o.leaf) in inside - fixed]
        if not escaping:
            break
        out |= set(escaping)
    if sum(len(ops) for ops in found.values()) > MAX_PROLOGUE_OPS:
        att.refused.append(f"q, k and v prologues of more than {MAX_PROLOGUE_OPS} ops")
        return att
    for what, o in roles:
        o.prologue = sorted(found[what], key=functools.cmp_to_key(_program_order))
        producer = defining_op(o.leaf)
        if (
            o.prologue or producer is None or producer.block != block or producer.name in (*MATMUL_OPS, SDPA)
            or len(producer.results) != 1  # a split's pieces (chunk motion makes them views later)
        ):
            continue
        if _prologue_op(producer.opview):
            att.refused.append(f"{what} is computed by '{producer.name}', whose result is read outside the attention too")
        else:
            att.refused.append(f"{what} is computed by '{producer.name}', which is not pointwise over {what}'s index space")
    return att


def _from_matmul(value: ir.Value, block) -> bool:
    """Is `value` computed from a matmul's result by elementwise ops (the score chain)?"""
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        op = defining_op(v)
        if op is None or op.block != block or v in seen or len(seen) > 256:
            continue
        seen.add(v)
        if op.name in MATMULS:
            return True
        if op.name in RULES:
            stack += [x for x in op.operands if tensor_type(x.type) is not None]
    return False


def _side(value: ir.Value, block, scores: tuple, masks: list, ops: list, depth: int, kernel: bool) -> str | None:
    """A tensor a score op reads: elementwise ops computing it join the kernel while read only there; leaves are loads."""
    t = tensor_type(value.type)
    if t is None:
        return "a mask is not a tensor"
    if not _broadcasts(t.shape, scores):
        return f"a mask of shape {list(t.shape)} does not broadcast to the scores {list(scores)}"
    op = defining_op(value)
    if (
        op is not None and op.block == block and depth < _MAX_SIDE_DEPTH and op.name in RULES
        and fusible(op.opview) and _single_use(value, kernel)
    ):
        if any(o.operation == op for o in ops):
            return None
        ops.append(op.opview)
        for v in op.operands:
            if tensor_type(v.type) is not None:
                why = _side(v, block, scores, masks, ops, depth + 1, kernel)
                if why:
                    return why
        return None
    if not any(m.value == value for m in masks):
        masks.append(operand(value, block, False))
    return None


def why_not_root(op) -> str | None:
    """None if `op` is the root of an attention fusion-fuse-attention makes one kernel; otherwise the reason."""
    found = match(op)
    if found is None:
        return "not an attention's root (an sdpa op, or the matmul after a softmax)"
    return found if isinstance(found, str) else None


FAMILY = Family(
    __name__, frozenset({SDPA, DROPOUT, REPEAT_INTERLEAVE, *MATMULS, *SOFTMAXES, *CASTS}), why_not_root,
    lowering="mlirfuse/lowering/attention.py",
    limits=f"f32, f16 or bf16 q, k and v of one dtype, static head dims ({MAX_HEAD_DIM} at most; batch, query and key "
    "sizes may be `?`); no dropout; "
    "bool or float masks that broadcast to the scores; q, k and v prologues of elementwise ops, views with an index "
    f"map and cats read only by the attention ({MAX_PROLOGUE_OPS} ops at most, static sizes; an operand they "
    "broadcast is an input)",
)

__all__ = [
    "Attention", "Operand", "match", "operand", "with_prologues", "leaf_coords", "relaid_output", "MAX_PROLOGUE_OPS", "SDPA", "MATMULS", "SOFTMAXES", "ATTENTION_DTYPES", "FAMILY", "why_not_root",
]
