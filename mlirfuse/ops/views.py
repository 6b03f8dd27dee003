"""View ops: results that alias their input, read by index arithmetic.

A fused kernel never copies a view. Inside a group a chain of views starting
at a group input (`x.view(b, t, h, d).transpose(1, 2)`) is one *load site*:
the launcher folds the chain into a strided tensor with torch's own view
functions (metadata only) and the kernel addresses that tensor through its
strides. A reshape of a computed value that only leaves the group (an *exit
reshape*) is a store of the value in row-major order into a buffer of the
new shape - the same bytes, so no index changes at all.
"""

from __future__ import annotations

import math

from mlirfuse.ir import NO_CONSTANT, VALUE_CONSTANTS, constant_int_list, constant_value, defining_op, ir, tensor_type
from mlirfuse.ops.family import Family

# Ops whose result is a view of operand 0 described by constant arguments.
VIEW_OPS = frozenset(
    "torch.aten." + name
    for name in (
        "view", "reshape", "_unsafe_view", "alias", "permute", "transpose.int", "t", "numpy_T",
        "expand", "squeeze", "squeeze.dim", "unsqueeze", "slice.Tensor", "select.int",
        "flatten.using_ints", "unflatten.int",
    )
)

# Every op whose result shares operand 0's storage (what the alias analysis
# follows): the views above, views whose arguments are tensors (expand_as,
# view_as) or that no kernel reads through (narrow, as_strided), detach, and
# torch-mlir's static-info cast.
ALIASING_OPS = (
    VIEW_OPS
    | {"torch.aten." + name for name in ("narrow", "detach", "expand_as", "view_as", "as_strided")}
    | {"torch.tensor_static_info_cast"}
)

# Views that keep row-major order: storing a value contiguously and reading
# the buffer with the new shape is the view. Exit reshapes are these.
RESHAPES = frozenset(
    "torch.aten." + name
    for name in (
        "view", "reshape", "_unsafe_view", "alias", "squeeze", "squeeze.dim", "unsqueeze",
        "flatten.using_ints", "unflatten.int",
    )
)


# Pads read by index arithmetic: a load of the padded input at shifted
# coordinates, masked with the pad value outside it (constant), or at the
# coordinates mirrored (reflect), clamped (replicate) or wrapped (circular,
# `F.pad(mode="circular")`) into it. Not views
# (the result is a new tensor); a kernel reads them from kernel inputs only.
_PAD_MODES = {
    "torch.aten.constant_pad_nd": "constant",
    **{f"torch.aten.reflection_pad{n}d": "reflect" for n in (1, 2, 3)},
    **{f"torch.aten.replication_pad{n}d": "replicate" for n in (1, 2, 3)},
}
PADS = frozenset({"torch.aten.pad", *_PAD_MODES})
# Read by index arithmetic too: each piece at its own coordinates (a pointwise kernel), or one per K loop (a GEMM).
CAT = "torch.aten.cat"


def pad_args(op) -> tuple[str, tuple[tuple[int, int], ...], float] | None:
    """(mode, (low, size) per dim of the input, the constant pad value) of a pad op, or None.

    `low` is the input's first coordinate in the result (negative pads crop).
    None unless the pads (and the value) are constants, the shapes static and
    a reflect pad narrower than the input, as eager requires.
    """
    name = op.name
    source, result = tensor_type(op.operands[0].type), tensor_type(op.results[0].type)
    pads = constant_int_list(op.operands[1])
    if source is None or result is None or not source.is_static or not result.is_static or pads is None:
        return None
    if name == "torch.aten.pad":
        mode, value = constant_value(op.operands[2]), constant_value(op.operands[3])
        value = 0.0 if value is None else value
    else:
        mode = _PAD_MODES[name]
        value = constant_value(op.operands[2]) if mode == "constant" else 0.0
    if mode not in ("constant", "reflect", "replicate", "circular") or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if source.dtype == "bool" or source.dtype.startswith(("int", "uint")):
        # eager converts the value to the tensor's dtype (-inf -> True for bool); only exact values are fused
        if not math.isfinite(value) or value != int(value) or (source.dtype == "bool" and value not in (0, 1)):
            return None
    if len(pads) % 2 or len(pads) > 2 * len(source.shape):
        return None
    lows = [0] * len(source.shape)
    for k in range(len(pads) // 2):
        d = len(source.shape) - 1 - k
        lows[d] = pads[2 * k]
        if mode != "constant" and (min(pads[2 * k : 2 * k + 2]) < 0 or source.shape[d] == 0):
            return None
        if mode == "reflect" and max(pads[2 * k : 2 * k + 2]) >= source.shape[d]:
            return None
        if mode == "circular" and max(pads[2 * k : 2 * k + 2]) > source.shape[d]:  # eager wraps around once at most
            return None
    return mode, tuple(zip(lows, source.shape)), value


def is_view(op) -> bool:
    return op is not None and op.name in VIEW_OPS


def view_args(op, arg=None) -> tuple | None:
    """The constant arguments after operand 0 (int lists as tuples), or None if any is not constant.

    `arg`: `view_arg`, or a cache of it (a view's arguments are constants other views read too).
    """
    if tensor_type(op.operands[0].type) is None or tensor_type(op.results[0].type) is None:
        return None
    if not tensor_type(op.results[0].type).is_static:
        return None
    arg = arg or view_arg
    args = []
    for v in list(op.operands)[1:]:
        value = arg(v)
        if value is NO_CONSTANT:
            return None
        args.append(value)
    return tuple(args)


def view_arg(v: ir.Value):
    """A view's argument `v` as `view_args` gives it (an int list as a tuple), or `NO_CONSTANT` if it is not constant."""
    value = constant_value(v)
    if value is NO_CONSTANT:
        value = constant_int_list(v)
        return NO_CONSTANT if value is None else tuple(value)
    return value


def constant_view(op) -> bool:
    """Is `op` a view with constant arguments (one a kernel reads through)? (`view_args` is not None: `has_constant_args`.)"""
    return op.name in VIEW_OPS and has_constant_args(op)


def has_constant_args(op, known: dict | None = None) -> bool:
    """`view_args(op) is not None`, asked of the arguments' ops by name, their values not read (an unrolled loop's
    views number thousands); `view_arg` where the name does not settle it. `known`: the answers for arguments
    asked before, by value (views share their constants), kept while no op is erased."""
    operands = list(op.operands)
    source, result = tensor_type(operands[0].type), tensor_type(op.results[0].type)
    if source is None or result is None or not result.is_static:
        return False
    for v in operands[1:]:
        found = known.get(v) if known is not None else None
        if found is None:
            found = _constant_arg(v)
            if known is not None:
                known[v] = found
        if not found:
            return False
    return True


def _constant_arg(v: ir.Value) -> bool:
    """Is `view_arg(v)` not `NO_CONSTANT`?"""
    owner = v.owner
    if not isinstance(owner, ir.OpView):
        return False
    name = owner.operation.name
    if name in VALUE_CONSTANTS or name == "torch.constant.none":  # `view_arg` reads its value, whatever it is
        return True
    if name == "torch.prim.ListConstruct" and all(
            isinstance(item := i.owner, ir.OpView) and item.operation.name == "torch.constant.int" for i in owner.operands):
        return True
    return view_arg(v) is not NO_CONSTANT


def walk_views(value: ir.Value, block: ir.Block | None = None, through=constant_view) -> tuple[ir.Value, list]:
    """The one view-chain walker: up from `value` through the ops `through` accepts (those in `block` if given).

    Returns where the walk stopped (a block argument, or the result of the
    first op not passed) and the ops passed, first applied first. Each op is
    read through its first operand.
    """
    chain = []
    op = defining_op(value)
    while op is not None and (block is None or op.block == block) and through(op):
        chain.append(op.opview)
        value = op.operands[0]
        op = defining_op(value)
    return value, chain[::-1]


def view_chain(value: ir.Value, block: ir.Block) -> tuple[int, tuple] | None:
    """(block argument index, ((op name, args), ...)) if `value` is a chain of views of an argument of `block`.

    None when the chain starts at a computed value or has a non-constant argument.
    """
    root, ops = walk_views(value)
    if not isinstance(root.owner, ir.Block) or root.owner != block:
        return None
    return ir.BlockArgument(root).arg_number, tuple((op.operation.name, view_args(op.operation)) for op in ops)


def view_coords(op, coords: list[str]) -> list[str] | None:
    """The coordinates of operand 0 that view `op` reads at result coordinates `coords` (Triton expressions; "0" a zero).

    The view's index map, so that a kernel can evaluate a computed value at a
    view's coordinates (`fusion.group` bodies view only values they can
    recompute anywhere: see `legality_cat.why_not_viewed`). None where the view
    has no constant arguments or a static shape, or is not mapped here.
    """
    args = view_args(op)
    if args is None or not tensor_type(op.operands[0].type).is_static:
        return None
    name, source = op.name, tensor_type(op.operands[0].type).shape
    result = tensor_type(op.results[0].type).shape
    if len(coords) != len(result):
        return None
    if name in RESHAPES:
        return _reshaped_coords(source, result, coords)
    if name == "torch.aten.expand":
        offset = len(result) - len(source)
        return ["0" if n == 1 and result[d + offset] != 1 else coords[d + offset] for d, n in enumerate(source)]
    if name == "torch.aten.permute":
        dims = [d % len(source) for d in args[0]]
        out = ["0"] * len(source)
        for j, d in enumerate(dims):
            out[d] = coords[j]
        return out
    if name in ("torch.aten.transpose.int", "torch.aten.t"):
        a, b = (args[0] % len(source), args[1] % len(source)) if name.endswith(".int") else (0, len(source) - 1)
        out = list(coords)
        out[a], out[b] = coords[b], coords[a]
        return out
    if name == "torch.aten.slice.Tensor":
        dim, start, _, step = args[0] % len(source), args[1], args[2], args[3]
        if not isinstance(step, int) or step < 1:
            return None
        start = 0 if start is None else start + source[dim] if start < 0 else start
        start = min(max(start, 0), source[dim])
        out = list(coords)
        out[dim] = f"({start} + {step} * {coords[dim]})" if coords[dim] != "0" else str(start)
        return out
    if name == "torch.aten.select.int":
        dim, index = args[0] % len(source), args[1]
        return [*coords[:dim], str(index % source[dim]), *coords[dim:]]
    return None


def is_identity_view(op) -> bool:
    """Does view `op` read each element where it is (an expand or reshape to the operand's own shape)?"""
    result = tensor_type(op.results[0].type)
    if result is None or tensor_type(op.operands[0].type) is None or tensor_type(op.operands[0].type).shape != result.shape:
        return False
    coords = [f"x{d}" for d in range(len(result.shape))]
    return view_coords(op, coords) == coords


def _reshaped_coords(source, result, coords: list[str]) -> list[str]:
    """A reshape's index map: dims of size 1 dropped or added by name; otherwise through the row-major offset."""
    if [n for n in source if n != 1] == [n for n in result if n != 1]:
        kept = iter(c for c, n in zip(coords, result) if n != 1)
        return ["0" if n == 1 else next(kept) for n in source]
    def scaled(c: str, k: int, op: str) -> str:
        return c if k == 1 else f"{c} {op} {k}"

    terms = [scaled(c, math.prod(result[d + 1 :]), "*") for d, c in enumerate(coords) if c != "0" and result[d] != 1]
    flat = f"({' + '.join(terms) or '0'})"
    return ["0" if n == 1 else f"({scaled(flat, math.prod(source[d + 1 :]), '//')} % {n})" for d, n in enumerate(source)]


# Ops that copy their operand's values: a group of these (and views) reads each element once wherever it is evaluated.
COPIES = frozenset({"torch.aten.clone"})
# Views that reorder dims: with reshapes, copies and expands to the operand's own shape, the steps of a relayout.
PERMUTES = frozenset({"torch.aten.permute", "torch.aten.transpose.int", "torch.aten.t"})


def relayout_op(op) -> bool:
    """Is `op` a step of a relayout (each result element one element of its operand, static shapes): a copy, a
    reshape, a permute, or an expand to the operand's own shape?"""
    if op.name in COPIES:
        return tensor_type(op.results[0].type) is not None and tensor_type(op.results[0].type).is_static
    if op.name in RESHAPES or op.name in PERMUTES:
        return constant_view(op) and tensor_type(op.operands[0].type).is_static
    return op.name == "torch.aten.expand" and constant_view(op) and is_identity_view(op)


def stored_relayout(op) -> bool:
    """Is `op` a `relayout_op` whose values, through further ones, are only stored (yielded by its group)?"""
    stack = [op]
    while stack:
        op = stack.pop()
        if op.name == "fusion.yield":
            continue
        if not relayout_op(op):
            return False
        stack.extend(u.owner for u in op.results[0].uses)
    return True


def relayout_strides(source: tuple[int, ...], ops: list) -> list[tuple[tuple[int, int], ...]] | None:
    """Where each element of a `source`-shaped value lies in the result of relayout chain `ops` (first applied first,
    `relayout_op`s) stored row-major: per source dim, its (size, stride) factors, major first, so that the
    element at coordinate c of a dim with factors (n1, s1) ... (nk, sk) is at sum(((c // (n{i+1}...nk)) % ni) * si).

    A q/k/v head split `x.view(b, t, h, d).transpose(1, 2).clone().view(b * h, t, d)` of x `[b, t, h * d]`:
    x's last dim has factors (h, t * d), (d, 1). None where a reshape regroups dims whose sizes do not divide
    each other (that needs the flat index), or a size is 0.
    """
    result = tuple(tensor_type(ops[-1].results[0].type).shape) if ops else tuple(source)
    if 0 in result:
        return None
    layout = [((n, s),) if n != 1 else () for n, s in zip(result, _row_major(result))]
    for op in reversed(ops):  # from the result's layout back to the source's
        name, shape = op.operation.name, tuple(tensor_type(op.operation.operands[0].type).shape)
        if name == "torch.aten.permute":
            dims = [d % len(shape) for d in view_args(op.operation)[0]]
            found = [()] * len(shape)
            for j, d in enumerate(dims):
                found[d] = layout[j]
            layout = found
        elif name in ("torch.aten.transpose.int", "torch.aten.t"):
            args = view_args(op.operation)
            a, b = (args[0] % len(shape), args[1] % len(shape)) if name.endswith(".int") else (0, len(shape) - 1)
            layout[a], layout[b] = layout[b], layout[a]
        elif name in RESHAPES:
            layout = _regroup([f for dim in layout for f in dim], shape)
            if layout is None:
                return None
    return [_merged(dim) for dim in layout]


def _row_major(shape) -> list[int]:
    return [math.prod(shape[d + 1 :]) for d in range(len(shape))]


def _regroup(factors: list[tuple[int, int]], shape) -> list[tuple[tuple[int, int], ...]] | None:
    """The (size, stride) factors, major first, of the row-major elements `factors` cut into the dims of `shape`."""
    factors, found = list(factors), []
    for n in shape:
        dim, need = [], n
        while need > 1:
            if not factors:
                return None
            size, stride = factors[0]
            if size <= need:
                if need % size:
                    return None
                dim.append(factors.pop(0))
                need //= size
            else:
                if size % need:
                    return None
                dim.append((need, stride * (size // need)))
                factors[0] = (size // need, stride)
                need = 1
        found.append(tuple(dim))
    return found if not factors else None


def _merged(dim: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """`dim`'s factors with neighbours that are one stride run (major stride = minor stride * minor size) joined."""
    out: list[tuple[int, int]] = []
    for size, stride in dim:
        if out and out[-1][1] == stride * size:
            out[-1] = (out[-1][0] * size, stride)
        else:
            out.append((size, stride))
    return tuple(out)


def relayout_offset(coords: list[str], layout: list[tuple[tuple[int, int], ...]]) -> str:
    """The offset (a Triton expression) of the element at `coords` in a relayout's result (`relayout_strides`)."""
    terms = []
    for c, dim in zip(coords, layout):
        inner = math.prod(n for n, _ in dim)
        for i, (n, s) in enumerate(dim):
            inner //= n
            term = c if inner == 1 else f"({c} // {inner})"
            term = f"({term} % {n})" if i else term  # the major factor: c < its dim's size (masked lanes aside)
            terms.append(term if s == 1 else f"{term} * {s}")
    return f"({' + '.join(terms) or '0'})"


def why_not_fusible(op) -> str | None:
    """None if the pad `op` can join a group (views join the group that reads them); otherwise the reason."""
    return None if pad_args(op.operation) is not None else "pad by non-constant or dynamic sizes"


FAMILY = Family(
    __name__, ALIASING_OPS | PADS, why_not_fusible, fused=PADS, pure=VIEW_OPS, lowering="mlirfuse/lowering/emitter.py",
    limits="views with constant arguments and a static result are read through (others run as ATen views); pads with "
    "constant sizes on static shapes, a reflect pad narrower than its input",
)

__all__ = [
    "VIEW_OPS", "ALIASING_OPS", "RESHAPES", "PADS", "FAMILY", "COPIES", "PERMUTES", "is_identity_view", "is_view", "pad_args",
    "relayout_offset", "relayout_op", "relayout_strides", "stored_relayout", "view_args", "view_chain", "view_coords", "why_not_fusible",
]
