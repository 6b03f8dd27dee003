"""fusion-chunk-motion: move chunk/split above the elementwise work that feeds it.

The LSTM cell computes `gates = x @ W_ih.T + h @ W_hh.T + b`, then
`gates.chunk(4, 1)` and elementwise math on each chunk. With the split in the
middle, the adds and the cell math are two kernels joined by a [1, 4h]
tensor. This pass

1. turns `ListUnpack(split.Tensor(x, size, dim))` (and split_with_sizes)
   into one `slice.Tensor(x, dim, start, end)` per piece, `unbind` into
   one `select.int` per piece, and
2. pushes the slices through the elementwise op they read when every user of
   that op is a slice: `slice(a + b) = slice(a) + slice(b)`, slicing each
   operand along the same dim (or not at all where it broadcasts);
3. (`matmul-slices`, on by default) pushes column slices through a GEMM
   whose result is only ever sliced along its last dim:
   `slice(A @ B) = A @ slice(B)`, B (and a bias) sliced along N. Each
   piece is a GEMM over the same A, which fusion-fuse-matmul runs as one
   grouped GEMM whose epilogue is the math on the pieces.

The slices end up on the matmul results, where a fused group reads them by
index arithmetic (matmul-slices=false: each step is one kernel plus the two
matmuls), or on the weights, read by strides: with the Triton GEMMs an
unrolled LSTM step is one kernel.

The pass is its own driver: one walk finds the splits and slices, then a
worklist holds only the ops whose result every reader slices (`_Motion`), each
taken when that became true (an unrolled LSTM: 400 rewrites, where MLIR's
greedy driver called a pattern 27,600 times, 23,200 of them for nothing).
Where each piece's ops land does not depend on the order: each is built just
before the slice it replaces. A piece that would at once move on through the
op it slices is never built: that op's rewrite of it is built in its place
(`_Producer`; an LSTM step builds its 28 final ops, not 44). Constants and
lists a rewrite leaves unread are erased, as the greedy driver erased them.
"""

from __future__ import annotations

import dataclasses

from mlirfuse.dialect import TEMPLATE_KINDS, group_kind, has_kind
from mlirfuse.ir import (
    TorchBuilder,
    constant_int_list,
    constant_value,
    defining_op,
    ir,
    op_id,
    static_tensor_types,
    tensor_type,
)
from mlirfuse.ops.elementwise import RULES, fusible
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, gemm
from mlirfuse.ops.reductions import REDUCTIONS
from mlirfuse.ops.views import RESHAPES, view_args
from mlirfuse.passes.base import ModulePass
from mlirfuse.passes.options import option

_PIECES = ("torch.aten.slice.Tensor", "torch.aten.select.int")
_SPLITS = ("torch.aten.split.Tensor", "torch.aten.split_with_sizes", "torch.aten.unbind.int")
# At most this many pieces: fusion-fuse-matmul's default max-grouped, so the pieces stay one grouped GEMM.
MAX_PIECES = 8


def _normalized_slice(x, values: list) -> tuple[int, int, int, int] | None:
    """(dim, start, end, step) of a `slice.Tensor` of an `x`-typed tensor whose argument operands hold `values`, normalized."""
    if x is None or not x.is_static:
        return None
    for v in values:  # NO_CONSTANT is neither
        if v is not None and not isinstance(v, int):
            return None
    dim, start, end, step = values
    if dim is None:
        return None
    dim %= len(x.shape)
    size = x.shape[dim]
    start = 0 if start is None else (start + size if start < 0 else start)
    end = size if end is None else (end + size if end < 0 else end)
    start, end = max(0, min(start, size)), max(0, min(end, size))
    return dim, start, end, step or 1


def _normalized_select(x, values: list) -> tuple[int, int] | None:
    """(dim, index) of a `select.int` of an `x`-typed tensor whose argument operands hold `values`, normalized."""
    dim, index = values
    if x is None or not x.is_static or not x.shape or not isinstance(dim, int) or not isinstance(index, int):
        return None
    dim %= len(x.shape)
    return dim, index % x.shape[dim]


class _Ints:
    """The int constants of the ops one rewrite builds at `b`'s insertion point, `read` those of the op it replaces.

    Each constant the rewrites build is an op at function level that every later
    pass walks, clones into groups and erases (an unrolled LSTM: ~45k of them);
    the pieces of one rewrite share theirs, and reuse those of the op they
    replace (defined before it). `unread` lists what the replaced op read that
    none of the new ops does.
    """

    def __init__(self, b: TorchBuilder, read: list = (), values: list = ()):
        self.b = b
        self.pool: dict = {}
        self.taken: set = set()
        self.read = read
        self.values = values
        for v, c in zip(read, values):
            if type(c) is int and c not in self.pool:
                self.pool[c] = v

    def __call__(self, *values: int) -> list[ir.Value]:
        """One int constant per value, in order."""
        pool, out = self.pool, []
        for value in values:
            v = pool.get(value)
            if v is None:
                v = pool[value] = self.b.int(value)
            out.append(v)
        self.taken.update(values)
        return out

    def unread(self) -> list:
        """The replaced op's argument operands no new op reads (candidates for `_erase_unread`)."""
        return [v for v, c in zip(self.read, self.values) if not (c in self.taken and self.pool.get(c) is v)]


def _replace(op, result: ir.Value, value: ir.Value) -> None:
    """Replace `op`, whose only result is `result`, with `value`."""
    result.replace_all_uses_with(value)
    op.operation.erase()


def _distinct(values) -> list:
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def _erase_unread(values) -> None:
    """Erase the constants and lists among the owners of `values` that nothing reads (a list: then its items')."""
    stack, seen = list(values), set()
    while stack:
        value = stack.pop()
        if value in seen:  # an op read twice (a list [2, 2, 4]) is asked once: the second time it may be gone
            continue
        seen.add(value)
        owner = value.owner
        if not isinstance(owner, ir.OpView):
            continue
        name = owner.operation.name
        if not (name.startswith("torch.constant.") or name == "torch.prim.ListConstruct"):
            continue
        if next(iter(owner.results[0].uses), None) is not None:
            continue
        stack += owner.operands
        owner.operation.erase()


class _Motion:
    """One run's state: the worklist, the builder, and the arguments of the slices and selects it built.

    The worklist holds ops whose result is read, and only by slices and
    selects, each offered when that became true. An op's readers change only
    when a rewrite replaces a slice of it (the new op is offered) or erases an
    op reading it (that op's operands are offered), so each op is in the list
    once at a time and none is erased while in it. A piece built here is read
    back from `built` (its arguments, their operands and values), not from its
    constants' attributes.
    """

    def __init__(self, matmul_slices: bool):
        self.names = set(RULES) | (MATMUL_OPS if matmul_slices else set())
        self.ops: list = []
        self.b = TorchBuilder(None, None)  # moved to each rewrite (`TorchBuilder.at`): its types parsed once
        self.built: dict = {}  # piece result -> (the sliced value's tensor type, argument operands, their values)

    def offer(self, value: ir.Value, name: str | None = None) -> None:
        """Put `value`'s op (named `name`, if known) in the list if it is one the pass moves slices through and
        only slices and selects read it."""
        if name is None:
            op = value.owner
            if not isinstance(op, ir.OpView):
                return
            name = op.operation.name
        if name not in self.names:
            return
        read = False
        for use in value.uses:
            if use.owner.operation.name not in _PIECES:
                return
            read = True
        if read:
            self.ops.append(value.owner.operation)

    def run(self) -> None:
        while self.ops:
            op = self.ops.pop()
            if op.name in RULES:
                slice_through_elementwise(op, self)
            else:
                slice_through_matmul(op, self)

    def slice(self, x: ir.Value, dim: int, start: int, end: int, step: int, ints: _Ints) -> ir.Value:
        t = tensor_type(x.type)
        shape = list(t.shape)
        shape[dim] = max(0, (end - start + step - 1) // step)
        read = ints(dim, start, end, step)
        piece = self.b.op("torch.aten.slice.Tensor", [x, *read], shape, t.dtype)
        self.built[piece] = (t, read, [dim, start, end, step])
        return piece

    def select(self, x: ir.Value, dim: int, index: int, ints: _Ints) -> ir.Value:
        t = tensor_type(x.type)
        read = ints(dim, index)
        piece = self.b.op("torch.aten.select.int", [x, *read], t.shape[:dim] + t.shape[dim + 1 :], t.dtype)
        self.built[piece] = (t, read, [dim, index])
        return piece

    def piece(self, op, result: ir.Value, select: bool) -> tuple[tuple | None, list, list]:
        """A slice's (select's: `select`) normalized arguments (None unless constant), its argument operands, their
        values; a piece is asked once, just before it is replaced."""
        known = self.built.pop(result, None)
        if known is not None:
            x, read, values = known
        else:
            operands = list(op.operands)
            read = operands[1:]
            values = [constant_value(v) for v in read]
            x = tensor_type(operands[0].type)
        return (_normalized_select if select else _normalized_slice)(x, values), read, values


def split_to_slices(unpack, motion: _Motion) -> None:
    """ListUnpack of split.Tensor / split_with_sizes / unbind.int -> one slice (unbind: select) per piece."""
    split = defining_op(unpack.operands[0])
    if split is None or split.name not in _SPLITS:
        return
    x = tensor_type(split.operands[0].type)
    unbind = split.name == "torch.aten.unbind.int"
    dim = constant_value(split.operands[1 if unbind else 2])
    if x is None or not x.is_static or not x.shape or not isinstance(dim, int):
        return
    dim %= len(x.shape)
    sizes = [1] * x.shape[dim] if unbind else _piece_sizes(split, x.shape[dim])
    if sizes is None or len(sizes) != len(unpack.results):
        return
    ints = _Ints(motion.b.at(unpack))
    source = split.operands[0]
    if unbind:
        specs = [(True, dim, i) for i in range(x.shape[dim])]
    else:
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        specs = [(False, dim, start, start + n, 1) for start, n in zip(starts, sizes)]
    # Where the split goes (its only reader is this unpack), its source's producer may take every piece at once.
    through = _through(source, x, 1, specs, motion) if _read_once(split.results[0]) else None
    unread = []
    if through is None:
        pieces = [motion.select(source, *spec[1:], ints) if spec[0] else motion.slice(source, *spec[1:], ints) for spec in specs]
    else:
        pieces = [_piece_through(*through, x, spec, ints, motion, unread) for spec in specs]
    for result, piece in zip(unpack.results, pieces):
        result.replace_all_uses_with(piece)
    unpack.operation.erase()
    if next(iter(split.results[0].uses), None) is None:
        arguments = list(split.operands)[1:]
        split.operation.erase()
        _erase_unread(arguments + unread)
        if through is None:
            motion.offer(source)
        else:
            through[0]._erase(through[1], motion)


def _read_once(value: ir.Value) -> bool:
    uses = iter(value.uses)
    return next(uses, None) is not None and next(uses, None) is None


def _piece_sizes(split, extent: int) -> list[int] | None:
    """Sizes of the pieces along the split dim: equal chunks (the last may be short), or the listed sizes."""
    if split.name == "torch.aten.split.Tensor":
        size = constant_value(split.operands[1])
        if not isinstance(size, int) or size <= 0:
            return None
        return [min(size, extent - start) for start in range(0, extent, size)]
    sizes = constant_int_list(split.operands[1])
    return sizes if sizes is not None and sum(sizes) == extent else None


def slice_through_elementwise(producer, motion: _Motion) -> None:
    """slice(f(a, b)) -> f(slice(a), slice(b)) for each slice (select likewise) of f's result, which only they read."""
    if not fusible(producer.opview):
        return
    pieces = []
    for piece in [use.owner for use in producer.results[0].uses]:
        select = piece.operation.name == "torch.aten.select.int"
        result = piece.results[0]
        pieces.append((piece, result, select, *motion.piece(piece, result, select)))
    _Elementwise(producer).rewrite(pieces, motion)


def slice_through_matmul(mm, motion: _Motion) -> None:
    """slice(A @ B, last dim) -> A @ slice(B) for each slice when every user of the unbatched product is such a slice (none empty, at most MAX_PIECES).

    B is sliced along its N dim (dim 0 of linear's [N, K] weight), a bias
    along its last dim unless it broadcasts there. The GEMM must be one the
    template takes (`mlirfuse.ops.matmul.gemm`); a 1-column slice stays 2-D.
    """
    users = [use.owner for use in mm.results[0].uses]
    if len(users) > MAX_PIECES or any(user.operation.name != "torch.aten.slice.Tensor" for user in users):
        return
    product = _Matmul.of(mm)
    if product is None:
        return
    pieces = []
    for user in users:
        result = user.results[0]
        args, read, values = motion.piece(user, result, False)
        if not product.takes(args):
            return
        pieces.append((user, result, False, args, read, values))
    product.rewrite(pieces, motion)


class _Producer:
    """An op the slices move through, and how one piece of its result is built from pieces of its operands.

    `rewrite` replaces each piece (its op, result, select?, arguments, their
    operands and values) where it is. Before that, `_plan` picks the operands
    whose producer only this op reads and whose every piece the rewrite
    builds would move on through that producer at once (an LSTM gate's
    `x @ W_ih + h @ W_hh` under the bias add): those pieces are never built;
    the producer's rewrite of each is built in its place, with the same
    constants, so the IR is the one the slices built and moved one by one
    would leave.
    """

    op: object
    operands: list  # (value, tensor type or None) per operand
    order: list  # the operand positions in the order their pieces are built

    def operand_pieces(self, select: bool, args: tuple) -> list:
        """Per operand, the piece of it one piece (`select`, `args`) of the result reads: (select?, dim, arguments
        after dim...), or None where it reads the operand whole (a scalar, or broadcast)."""
        raise NotImplementedError

    def rewrite(self, pieces: list, motion: "_Motion") -> None:
        """Replace each of `pieces` (all its result's readers) that has constant arguments; the op too if all have."""
        whole = all(args is not None for _, _, _, args, _, _ in pieces)  # then the op goes away
        plan = self._plan([(select, args) for _, _, select, args, _, _ in pieces], motion) if whole else {}
        for piece, result, select, args, read, values in pieces:
            if args is None:
                continue
            ints = _Ints(motion.b.at(piece), read, values)
            unread = []  # the constants of pieces never built, asked after the piece is replaced
            t = tensor_type(result.type)
            new = self._cut(select, args, ints, plan, t.shape, self.dtype(t), motion, unread)
            _replace(piece, result, new)
            _erase_unread(ints.unread() + unread)
            motion.offer(new, self.op.name)
        if whole:
            self._erase(plan, motion)

    def dtype(self, piece) -> str:
        return piece.dtype

    def _cut(self, select, args, ints, plan, shape, dtype, motion, unread) -> ir.Value:
        """The op over pieces of its operands, typed `shape` x `dtype`, built at the builder's insertion point."""
        cut = [v for v, _ in self.operands]
        specs = self.operand_pieces(select, args)
        for i in self.order:
            spec = specs[i]
            if spec is None:
                continue
            v, t = self.operands[i]
            sub = plan.get(v)
            if sub is None:
                cut[i] = motion.select(v, *spec[1:], ints) if spec[0] else motion.slice(v, *spec[1:], ints)
            else:
                cut[i] = _piece_through(*sub, t, spec, ints, motion, unread)
        return motion.b.op(self.op.name, cut, shape, dtype)

    def _plan(self, specs: list, motion: "_Motion") -> dict:
        """The operands whose pieces are never built (see the class): value -> (its producer, the producer's plan)."""
        per_operand = [self.operand_pieces(select, args) for select, args in specs]
        plan = {}
        for i, (v, t) in enumerate(self.operands):
            if t is None or v in plan:
                continue
            at = [j for j, (w, _) in enumerate(self.operands) if w == v]
            sub = _through(v, t, len(at), [row[j] for row in per_operand for j in at], motion)
            if sub is not None:
                plan[v] = sub
        return plan

    def _erase(self, plan: dict, motion: "_Motion") -> None:
        """Erase the op (nothing reads it now) and those of `plan`, then offer the operands left."""
        self.op.operation.erase()
        for v, (producer, subplan) in plan.items():
            producer._erase(subplan, motion)
        for v in _distinct(v for v, t in self.operands if t is not None and v not in plan and self.offers(v)):
            motion.offer(v)

    def offers(self, v: ir.Value) -> bool:
        return True


def _through(v: ir.Value, t, readers: int, specs: list, motion: "_Motion") -> tuple | None:
    """(The producer of `v`, its plan) if `v`'s pieces `specs` (select?, dim, arguments...; None: read whole), one
    per reader of the `readers` it has, need never be built (`_Producer`); else None."""
    owner = v.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name not in motion.names:
        return None
    if any(spec is None for spec in specs) or sum(1 for _ in v.uses) != readers:
        return None  # some piece reads it whole, or another op reads it too
    piece_specs = [(spec[0], (_normalized_select if spec[0] else _normalized_slice)(t, list(spec[1:]))) for spec in specs]
    producer = _producer(owner, piece_specs)
    return None if producer is None else (producer, producer._plan(piece_specs, motion))


def _piece_through(producer: "_Producer", plan: dict, t, spec: tuple, ints: _Ints, motion: "_Motion", unread: list):
    """In place of the piece `spec` (select?, dim, arguments...) of `producer`'s `t`-typed result, never built: its
    constants, then `producer`'s op over pieces of its operands. `unread` gets the constants that op does not read."""
    values = list(spec[1:])
    inner = _Ints(motion.b, ints(*values), values)
    args = (_normalized_select if spec[0] else _normalized_slice)(t, values)
    new = producer._cut(spec[0], args, inner, plan, _piece_shape(t, spec), t.dtype, motion, unread)
    unread += inner.unread()
    return new


def _piece_shape(t, spec: tuple) -> list:
    """The shape of the piece `spec` (select?, dim, arguments...) of a `t`-typed tensor."""
    if spec[0]:
        return t.shape[: spec[1]] + t.shape[spec[1] + 1 :]
    _, dim, start, end, step = spec
    shape = list(t.shape)
    shape[dim] = max(0, (end - start + step - 1) // step)
    return shape


def _producer(op, piece_specs: list) -> "_Producer | None":
    """`op` as a `_Producer` if its rewrite takes every one of `piece_specs` (select?, normalized arguments)."""
    if any(args is None for _, args in piece_specs):
        return None
    if op.operation.name in RULES:
        return _Elementwise(op.operation) if fusible(op) else None
    product = _Matmul.of(op)
    if product is None or len(piece_specs) > MAX_PIECES:
        return None
    return product if all(not select and product.takes(args) for select, args in piece_specs) else None


class _Elementwise(_Producer):
    def __init__(self, op):
        self.op = op
        self.out = tensor_type(op.results[0].type)
        self.operands = [(v, tensor_type(v.type)) for v in op.operands]
        self.order = range(len(self.operands))

    def dtype(self, piece) -> str:
        return self.out.dtype

    def operand_pieces(self, select: bool, args: tuple) -> list:
        dim, rank, specs = args[0], len(self.out.shape), []
        for _, t in self.operands:
            d = dim - (rank - len(t.shape)) if t is not None else -1
            if t is None or d < 0:
                specs.append(None)  # a scalar, or broadcast along a dim it does not have
            elif select:  # a size-1 dim is broadcast: its only element
                specs.append((True, d, 0 if t.shape[d] == 1 else args[1]))
            elif t.shape[d] == 1:
                specs.append(None)  # broadcast along the sliced dim
            else:
                specs.append((False, d, *args[1:]))
        return specs


class _Matmul(_Producer):
    @classmethod
    def of(cls, op) -> "_Matmul | None":
        g = gemm(op.opview if isinstance(op, ir.Operation) else op)
        if not isinstance(g, Gemm) or g.batch:
            return None  # batched GEMMs are never grouped: each piece would be a launch
        return cls(op.operation, g)

    def __init__(self, op, g: Gemm):
        self.op, self.g = op, g
        self.operands = [(v, tensor_type(v.type)) for v in op.operands]
        self.last = len(g.out) - 1
        weight = self.operands[g.b][1]
        self.b_dim = 0 if g.b_transposed else len(weight.shape) - 1
        bias = self.operands[g.bias][1] if g.bias is not None else None
        self.bias_sliced = bias is not None and bool(bias.shape) and bias.shape[-1] != 1
        self.order = [g.b, g.bias] if self.bias_sliced else [g.b]

    def takes(self, args) -> bool:
        return args is not None and args[0] == self.last and args[1] < args[2]

    def operand_pieces(self, select: bool, args: tuple) -> list:
        _, start, end, step = args
        specs = [None] * len(self.operands)
        specs[self.g.b] = (False, self.b_dim, start, end, step)
        if self.bias_sliced:
            specs[self.g.bias] = (False, len(self.operands[self.g.bias][1].shape) - 1, start, end, step)
        return specs

    def offers(self, v: ir.Value) -> bool:
        return v == self.operands[self.g.b][0] or (self.g.bias is not None and v == self.operands[self.g.bias][0])


def reshape_below_elementwise(op) -> list:
    """f(reshape(a), s) -> reshape(f(a, s)) when every other tensor operand s is a single element.

    The elementwise work moves into `a`'s shape, where it can join the group
    computing `a`; the reshape ends up after it (an exit reshape, free). The
    group_norm decomposition ends in such a reshape, so its activation
    (SiLU, ReLU, a scale) fuses into the normalization kernel. Returns the
    ops that may match now: the moved op and the readers of the new reshape.
    """
    if not fusible(op):
        return []
    out = tensor_type(op.results[0].type)
    reshaped = None
    for v in op.operands:
        t = tensor_type(v.type)
        if t is None or (reshaped is not None and v == reshaped):
            continue  # a constant, or the reshaped operand again (x * x)
        owner = defining_op(v)
        if reshaped is None and owner is not None and owner.name in RESHAPES and t.shape == out.shape:
            if view_args(owner) is not None and static_tensor_types(owner.operands[0]):
                reshaped = v
                continue
        if not t.is_static or t.numel != 1:
            return []
    if reshaped is None:
        return []
    reshape = defining_op(reshaped)
    source = reshape.operands[0]
    producer = defining_op(source)
    if producer is None or not (producer.name in REDUCTIONS or (producer.name in RULES and fusible(producer.opview))):
        return []  # a view of an input is read in place by the group; moving it gains nothing
    shape = tensor_type(source.type).shape
    if any(len(tensor_type(v.type).shape) > len(shape) for v in op.operands if tensor_type(v.type) and v != reshaped):
        return []  # a rank-raising scalar would change the result's rank
    b = TorchBuilder(ir.InsertionPoint(op), op.location)
    moved = b.op(op.operation.name, [source if v == reshaped else v for v in op.operands], shape, out.dtype)
    view = b.view(moved, out.shape, out.dtype)
    _replace(op, op.results[0], view)
    if next(iter(reshape.results[0].uses), None) is None:
        arguments = list(reshape.operands)[1:]
        reshape.erase()
        _erase_unread(arguments)
    return [moved.owner, *_elementwise_readers([view])]


def _elementwise_readers(values) -> list:
    return [use.owner for v in values for use in v.uses if use.owner.operation.name in RULES]


def _move_reshapes(reshapes: list) -> None:
    """Run reshape_below_elementwise on the elementwise readers of `reshapes` and on what each rewrite offers, once
    at a time each (a set of the listed ops' addresses: an op is erased only once taken from the list)."""
    todo, listed = [], set()

    def offer(ops):
        for op in ops:
            if op_id(op) not in listed:
                listed.add(op_id(op))
                todo.append(op)

    offer(_elementwise_readers(op.results[0] for op in reshapes))
    while todo:
        op = todo.pop()
        listed.discard(op_id(op))
        offer(reshape_below_elementwise(op))


def _collect(module: ir.Operation) -> tuple[list, list, list]:
    """The ListUnpacks, slices and selects, and reshapes under `module`, outside template group and kernel bodies."""
    unpacks, pieces, reshapes = [], [], []
    advance, skip = ir.WalkResult.ADVANCE, ir.WalkResult.SKIP

    def visit(op):
        name = op.name
        if name in _PIECES:
            pieces.append(op)
        elif name == "torch.prim.ListUnpack":
            unpacks.append(op)
        elif name in RESHAPES:
            reshapes.append(op)
        elif name in ("fusion.group", "fusion.kernel") and has_kind(op) and group_kind(op) in TEMPLATE_KINDS:
            return skip
        return advance

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return unpacks, pieces, reshapes


@dataclasses.dataclass(frozen=True)
class ChunkMotion(ModulePass):
    """Turn chunk/split into slices and move them above the elementwise ops that feed them, so the chunked math fuses into one kernel (the LSTM cell); move column slices of a GEMM onto its B operand (matmul-slices, default true: one GEMM per piece, grouped by fusion-fuse-matmul); move reshapes below elementwise ops with scalar operands (group_norm + activation).
    """

    name = "fusion-chunk-motion"

    matmul_slices: bool = option(
        True, "move column slices of a GEMM's result onto its B operand (one GEMM per piece; for Triton GEMMs)"
    )

    def apply(self, module: ir.Operation, am=None) -> None:
        unpacks, pieces, reshapes = _collect(module)
        motion = _Motion(self.matmul_slices)
        offered = set()
        for piece in pieces:  # the slices already there, before the splits' pieces join them
            source = piece.operands[0]
            owner = source.owner
            if isinstance(owner, ir.OpView) and op_id(owner) not in offered:
                offered.add(op_id(owner))
                motion.offer(source)
        for unpack in unpacks:
            split_to_slices(unpack, motion)
        motion.run()
        if reshapes:
            _move_reshapes(reshapes)
