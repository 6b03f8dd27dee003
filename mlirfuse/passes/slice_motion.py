"""fusion-chunk-motion's slice rewrites: slices and selects moved up through the elementwise ops and GEMMs they read.

`Motion` is one run's worklist: the ops whose result is read, and only by
slices and selects, each offered when that became true; it builds the new
pieces and reads back their arguments. `slice_through_elementwise`:
`slice(f(a, b)) = f(slice(a), slice(b))`; `slice_through_matmul`:
`slice(A @ B, last dim) = A @ slice(B)`. A `_Producer` builds a piece of its
result from pieces of its operands, and `plan_through` / `piece_through` let
a rewrite build the producer's rewrite of a piece in the piece's place;
`pieces_through` builds a split's pieces so, from a tape of the first build
where the same structure was split before (an unrolled loop's steps).
Also here, shared with the pass's other rewrites: `Ints` (the int constants
one rewrite builds), `replace` and `erase_unread`.
"""

from __future__ import annotations

import functools

from mlirfuse.ir import TorchBuilder, constant_value, ir, tensor_type
from mlirfuse.ops.elementwise import RULES, fusible
from mlirfuse.ops.matmul import MATMUL_OPS, Gemm, gemm

PIECES = ("torch.aten.slice.Tensor", "torch.aten.select.int")
# At most this many pieces: fusion-fuse-matmul's default max-grouped, so the pieces stay one grouped GEMM.
MAX_PIECES = 8


def _normalized_slice(x, values: list) -> tuple[int, int, int, int] | None:
    """(dim, start, end, step) of a `slice.Tensor` of an `x`-typed tensor whose argument operands hold `values`, normalized.

    Asked again and again of the same few slices (an unrolled LSTM: ~12k times, 4 distinct): those of plain
    ints and Nones are remembered (a tuple of them is equal to another exactly when each value is).
    """
    for v in values:
        if type(v) is not int and v is not None:
            return _normalize_slice(x, values)
    return _remembered_slice(x, tuple(values))


@functools.lru_cache(maxsize=1024)
def _remembered_slice(x, values: tuple) -> tuple[int, int, int, int] | None:
    return _normalize_slice(x, values)


def _normalize_slice(x, values) -> tuple[int, int, int, int] | None:
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


class Ints:
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
        """The replaced op's argument operands no new op reads (candidates for `erase_unread`)."""
        return [v for v, c in zip(self.read, self.values) if not (c in self.taken and self.pool.get(c) is v)]


def replace(op, result: ir.Value, value: ir.Value) -> None:
    """Replace `op`, whose only result is `result`, with `value`."""
    result.replace_all_uses_with(value)
    op.operation.erase()


def _distinct(values) -> list:
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def erase_unread(values) -> None:
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


class Motion:
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
        self.tapes: dict = {}  # a structure split before -> how its pieces were built (`pieces_through`)

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
            if use.owner.operation.name not in PIECES:
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

    def slice(self, x: ir.Value, dim: int, start: int, end: int, step: int, ints: Ints, t=None) -> ir.Value:
        """A `slice.Tensor` of `x` (of tensor type `t`, where the caller knows it) built at the builder's point."""
        if t is None:
            t = tensor_type(x.type)
        shape = list(t.shape)
        shape[dim] = max(0, (end - start + step - 1) // step)
        read = ints(dim, start, end, step)
        piece = self.b.op("torch.aten.slice.Tensor", [x, *read], shape, t.dtype)
        self.built[piece] = (t, read, [dim, start, end, step])
        return piece

    def select(self, x: ir.Value, dim: int, index: int, ints: Ints, t=None) -> ir.Value:
        """A `select.int` of `x` (of tensor type `t`, where the caller knows it) built at the builder's point."""
        if t is None:
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


def slice_through_elementwise(producer, motion: Motion) -> None:
    """slice(f(a, b)) -> f(slice(a), slice(b)) for each slice (select likewise) of f's result, which only they read."""
    if not fusible(producer.opview):
        return
    pieces = []
    for piece in [use.owner for use in producer.results[0].uses]:
        select = piece.operation.name == "torch.aten.select.int"
        result = piece.results[0]
        pieces.append((piece, result, select, *motion.piece(piece, result, select)))
    _Elementwise(producer).rewrite(pieces, motion)


def slice_through_matmul(mm, motion: Motion) -> None:
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

    def pieces_of(self, select: bool, args: tuple) -> list:
        """`operand_pieces`, asked once per piece: the plan and the piece's build both ask it."""
        memo = self.__dict__.setdefault("_pieces", {})
        specs = memo.get((select, args))
        if specs is None:
            specs = memo[select, args] = self.operand_pieces(select, args)
        return specs

    def rewrite(self, pieces: list, motion: "Motion") -> None:
        """Replace each of `pieces` (all its result's readers) that has constant arguments; the op too if all have."""
        whole = all(args is not None for _, _, _, args, _, _ in pieces)  # then the op goes away
        plan = self._plan([(select, args) for _, _, select, args, _, _ in pieces], motion) if whole else {}
        for piece, result, select, args, read, values in pieces:
            if args is None:
                continue
            ints = Ints(motion.b.at(piece), read, values)
            unread = []  # the constants of pieces never built, asked after the piece is replaced
            t = tensor_type(result.type)
            new = self._cut(select, args, ints, plan, t.shape, self.dtype(t), motion, unread)
            replace(piece, result, new)
            erase_unread(ints.unread() + unread)
            motion.offer(new, self.op.name)
        if whole:
            self.erase(plan, motion)

    def dtype(self, piece) -> str:
        return piece.dtype

    def _cut(self, select, args, ints, plan, shape, dtype, motion, unread) -> ir.Value:
        """The op over pieces of its operands, typed `shape` x `dtype`, built at the builder's insertion point."""
        operands = self.operands
        cut = [v for v, _ in operands]
        specs = self.pieces_of(select, args)
        for i in self.order:
            spec = specs[i]
            if spec is None:
                continue
            v, t = operands[i]
            sub = plan.get(v) if plan else None
            if sub is None:
                cut[i] = motion.select(v, *spec[1:], ints, t) if spec[0] else motion.slice(v, *spec[1:], ints, t)
            else:
                cut[i] = piece_through(*sub, t, spec, ints, motion, unread)
        return motion.b.op(self.op.name, cut, shape, dtype)

    def _plan(self, specs: list, motion: "Motion") -> dict:
        """The operands whose pieces are never built (see the class): value -> (its producer, the producer's plan)."""
        per_operand = [self.pieces_of(select, args) for select, args in specs]
        plan = {}
        for i, (v, t) in enumerate(self.operands):
            if t is None or v in plan:
                continue
            at = [j for j, (w, _) in enumerate(self.operands) if w == v]
            sub = plan_through(v, t, len(at), [row[j] for row in per_operand for j in at], motion)
            if sub is not None:
                plan[v] = sub
        return plan

    def erase(self, plan: dict, motion: "Motion") -> None:
        """Erase the op (nothing reads it now) and those of `plan`, then offer the operands left."""
        self.op.operation.erase()
        for v, (producer, subplan) in plan.items():
            producer.erase(subplan, motion)
        for v in _distinct(v for v, t in self.operands if t is not None and v not in plan and self.offers(v)):
            motion.offer(v)

    def offers(self, v: ir.Value) -> bool:
        return True

    def facts(self):
        """What else the pieces built through it depend on (beside its name, operand types and plan)."""
        raise NotImplementedError


def plan_through(v: ir.Value, t, readers: int, specs: list, motion: "Motion") -> tuple | None:
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


def piece_through(producer: "_Producer", plan: dict, t, spec: tuple, ints: Ints, motion: "Motion", unread: list):
    """In place of the piece `spec` (select?, dim, arguments...) of `producer`'s `t`-typed result, never built: its
    constants, then `producer`'s op over pieces of its operands. `unread` gets the constants that op does not read."""
    values = list(spec[1:])
    inner = Ints(motion.b, ints(*values), values)
    args = (_normalized_select if spec[0] else _normalized_slice)(t, values)
    new = producer._cut(spec[0], args, inner, plan, _piece_shape(t, spec), t.dtype, motion, unread)
    unread += inner.unread()
    return new


def pieces_through(through: tuple, x, specs: list, motion: "Motion", unread: list) -> list:
    """`piece_through` of each of `specs` of the `x`-typed result of `through` (a producer and its plan), built
    at the builder's point with constants of their own, as `piece_through` builds them.

    An unrolled loop splits the same structure again and again (an LSTM: 400 times). The first build of a
    structure is recorded (`_Tape`): the ops it made, in order, each operand one of them or an operand of a
    producer of the plan; the pieces, the constants left unread and the arguments of the slices it made
    (`Motion.built`). A later split of the same structure (`_structure`: the producers' names, types, GEMM
    facts and plans, which of their operands are one value, `x` and `specs`; its plan is still made and
    checked) makes the same ops from the tape, reading its own producers' operands, without walking the plan.
    """
    producers = _producers(*through)
    key = (x, tuple(specs), _structure(through, producers))
    tape = motion.tapes.get(key)
    if tape is not None:
        return tape.replay(producers, motion, unread)
    recorder = _Recorder(motion.b, producers)
    motion.b = recorder
    try:
        ints = Ints(recorder)
        made = []
        pieces = [piece_through(*through, x, spec, ints, motion, made) for spec in specs]
    finally:
        motion.b = recorder.b
    unread += made
    motion.tapes[key] = recorder.tape(pieces, made, motion.built)
    return pieces


def _producers(producer: "_Producer", plan: dict) -> list:
    """`producer` and those of its plan, depth first, in plan order."""
    found = [producer]
    for sub in plan.values():
        found += _producers(*sub)
    return found


def _structure(through: tuple, producers: list) -> tuple:
    """What building pieces through `through` reads of it (see `pieces_through`), as a key."""
    first: dict = {}  # value -> the first place it is read, over every producer's operands in order
    same = tuple([first.setdefault(v, n) for n, v in enumerate(v for p in producers for v, _ in p.operands)])
    return same, _shape_of(*through)


def _shape_of(producer: "_Producer", plan: dict) -> tuple:
    """The producers' part of `_structure`: each one's class, name, operand types, order, facts, and per operand
    the shape of the plan taking its pieces (None: its pieces are sliced or it is read whole)."""
    subs = tuple([None if sub is None else _shape_of(*sub) for sub in (plan.get(v) if plan else None for v, _ in producer.operands)])
    return (type(producer).__name__, producer.op.name, tuple([t for _, t in producer.operands]), tuple(producer.order),
            producer.facts(), subs)


class _Recorder:
    """The builder while a structure's pieces are built the first time (`pieces_through`): builds with `b`, noting
    each op made and its operands (an op made before: its number; an operand of producer p: (p, operand number))."""

    def __init__(self, b: TorchBuilder, producers: list):
        self.b = b
        self.ops: list = []  # (name, operand references, [result type], attributes)
        self.made: list = []  # the values made, in order
        self.refs: dict = {}
        for p, producer in enumerate(producers):
            for k, (v, _) in enumerate(producer.operands):
                self.refs.setdefault(v, (p, k))
        self.whole = True  # every operand was one of those: the tape can be replayed

    def _note(self, value: ir.Value, name: str, refs: tuple, attributes: dict) -> ir.Value:
        self.refs[value] = len(self.made)
        self.made.append(value)
        self.ops.append((name, refs, [value.type], attributes))
        return value

    def int(self, value: int) -> ir.Value:
        made = self.b.int(value)
        return self._note(made, "torch.constant.int", (), {"value": made.owner.attributes["value"]})

    def op(self, name: str, operands, shape, dtype: str) -> ir.Value:
        refs = tuple([self.refs.get(v) for v in operands])
        if any(r is None for r in refs):
            self.whole = False
        return self._note(self.b.op(name, operands, shape, dtype), name, refs, {})

    def tape(self, pieces: list, unread: list, built: dict) -> "_Tape | None":
        if not self.whole:
            return None
        number = self.refs.__getitem__
        try:
            made = [(number(v), built[v]) for v in self.made if v in built]
            return _Tape(self.ops, [number(v) for v in pieces], [number(v) for v in unread],
                         [(k, t, [number(r) for r in read], list(values)) for k, (t, read, values) in made])
        except KeyError:
            return None


class _Tape:
    """The ops one structure's pieces are built of (`pieces_through`), to build them again for another split."""

    def __init__(self, ops: list, pieces: list, unread: list, built: list):
        self.ops, self.pieces, self.unread, self.built = ops, pieces, unread, built

    def replay(self, producers: list, motion: "Motion", unread: list) -> list:
        """The ops made again at the builder's point, reading `producers`' operands; the pieces. `unread` and
        `motion.built` get what the first build gave them."""
        create, ip, loc, made = ir.Operation.create, motion.b.ip, motion.b.loc, []
        operands = [[v for v, _ in p.operands] for p in producers]

        def value(ref):
            return made[ref] if type(ref) is int else operands[ref[0]][ref[1]]

        for name, refs, types, attributes in self.ops:
            read = [made[r] if type(r) is int else operands[r[0]][r[1]] for r in refs]
            made.append(create(name, results=types, operands=read, attributes=attributes, loc=loc, ip=ip).result)
        for k, t, read, values in self.built:
            motion.built[made[k]] = (t, [value(r) for r in read], list(values))
        unread += [value(r) for r in self.unread]
        return [value(r) for r in self.pieces]


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

    def facts(self):
        return self.out

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

    def facts(self):
        return self.g

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
