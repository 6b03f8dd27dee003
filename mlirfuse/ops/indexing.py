"""Indexing and creation ops mlirfuse fuses, as data: what each reads, and from where.

Gathers (`embedding`, `index_select`, `gather`, `index.Tensor`) are loads
at computed addresses. In a pointwise or reduction group the op's value is
one `tl.load(table + offsets)`: the offset along each indexed dim of the
*table* (the indexed tensor) is an index value, along the other dims an
iteration coordinate. The table is always a group input (or a view chain of
one): any lane may read any of its elements, so it cannot be computed by the
same kernel. The index tensors broadcast into the result at dims
[start, start + width) - a `Gather` says where - and a kernel input read
as an index is loaded through trailing unsqueezes that put it there.

Creation ops (`arange`, `full`, `zeros`, `ones`, `*_like`, `new_*`,
`fill`, `eye`, `scalar_tensor`) load nothing: their values are computed
from the iteration coordinates; `tril`/`triu` mask their input by them.
An `*_like` op reads its tensor operand for its shape only.

`why_not_fusible(op)` names the reason an op stays outside (None: it can
join a group); `gather(op)` describes a fusible gather. The Triton side is
`mlirfuse.lowering.indexing`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlirfuse.ir import NO_CONSTANT, constant_int_list, constant_value, defining_op, ir, tensor_type
from mlirfuse.ops.family import Family
from mlirfuse.ops.pooling import WINDOWED
from mlirfuse.ops.pooling import why_not_fusible as why_not_pooled

INT_INDEX_DTYPES = ("int64", "int32")

# name -> (table operand, index operands, what eager raises for an index out of range)
GATHERS = {
    "torch.aten.embedding": (0, (1,), "IndexError"),
    "torch.aten.index_select": (0, (2,), "IndexError"),
    "torch.aten.gather": (0, (2,), "RuntimeError"),
    # The index tensors are the items of operand #1, a list.
    "torch.aten.index.Tensor": (0, (), "IndexError"),
    "torch.aten.index.Tensor_hacked_twin": (0, (), "IndexError"),
}
# Ops whose index tensors are the items of a list operand (#1).
INDEX_LISTS = (
    "torch.aten.index.Tensor", "torch.aten.index.Tensor_hacked_twin",
    "torch.aten.index_put", "torch.aten.index_put.hacked_twin", "torch.aten._index_put_impl",
)

# name -> (position of the fill value or None, position of the size list or None,
#          position of the dtype, shape-only tensor operand or None)
# Sizes come from the result type; dtype None means "like the result type says".
CREATIONS = {
    "torch.aten.full": (1, 0, 2, None),
    "torch.aten.zeros": (None, 0, 1, None),
    "torch.aten.ones": (None, 0, 1, None),
    "torch.aten.full_like": (1, None, 2, 0),
    "torch.aten.zeros_like": (None, None, 1, 0),
    "torch.aten.ones_like": (None, None, 1, 0),
    "torch.aten.new_full": (2, 1, 3, 0),
    "torch.aten.new_zeros": (None, 1, 2, 0),
    "torch.aten.new_ones": (None, 1, 2, 0),
    "torch.aten.fill.Scalar": (1, None, None, 0),
    "torch.aten.scalar_tensor": (0, None, 1, None),
    "torch.aten.arange": (None, None, 1, None),
    "torch.aten.arange.start": (None, None, 2, None),
    "torch.aten.arange.start_step": (None, None, 3, None),
    "torch.aten.eye": (None, None, 1, None),
    "torch.aten.eye.m": (None, None, 2, None),
}
ARANGES = ("torch.aten.arange", "torch.aten.arange.start", "torch.aten.arange.start_step")
EYES = ("torch.aten.eye", "torch.aten.eye.m")
# Elementwise ops on one tensor that also read their coordinates: x kept where col - row <= / >= diagonal.
TRIANGLES = {"torch.aten.tril": "<=", "torch.aten.triu": ">="}

# Scatters write their output at the places the same gather would read:
# name -> (table, indices, error as in GATHERS; source operand; accumulate, or the operand holding it).
SCATTERS = {
    "torch.aten.scatter.src": ((0, (2,), "RuntimeError"), 3, False),
    "torch.aten.scatter.value": ((0, (2,), "RuntimeError"), 3, False),
    "torch.aten.scatter_add": ((0, (2,), "RuntimeError"), 3, True),
    "torch.aten.index_put": ((0, (), "IndexError"), 2, 3),
    "torch.aten.index_put.hacked_twin": ((0, (), "IndexError"), 2, 3),
    "torch.aten._index_put_impl": ((0, (), "IndexError"), 2, 3),
}
# Uninitialized tensors: a scatter into one only it reads writes its kernel's fresh output, copying nothing in
# (`scatters_into_empty`; an inverse permutation `inv[perm] = arange(n)`, every element written).
EMPTIES = ("torch.aten.empty.memory_format", "torch.aten.empty_like", "torch.aten.new_empty")

# Dtypes `tl.atomic_add` takes on every target (and the interpreter).
ATOMIC_DTYPES = ("float32", "float64", "int32", "int64")

# The input with a slice (a select) replaced by `src` (operand #1), which is read
# at computed coordinates (it is a table, so a kernel input); the rest of the
# result reads the input where it is.
EMBEDS = ("torch.aten.slice_scatter", "torch.aten.select_scatter")

# Routing ops that stay library calls, and why (fusion-explain-unfused says it). histc becomes a reduction where
# `mlirfuse.passes.decompositions.indexing.why_not_histc` allows, and says why where not.
LIBRARY_CALLS = {
    "torch.aten.sort": "sort stays an ATen call: each output element depends on the whole row (no Triton sort template; "
    "a router's row of experts is one small call)",
    "torch.aten.topk": "topk stays an ATen call: a selection over the whole row with indices (no Triton top-k template; "
    "its consumers read both results)",
}

# (Pools and nearest upsampling read their input at computed places too: windows, see mlirfuse/ops/pooling.py.)
INDEXING_OPS = frozenset(GATHERS) | frozenset(CREATIONS) | frozenset(TRIANGLES) | frozenset(SCATTERS) | frozenset(EMBEDS) | WINDOWED


def scatters_into_empty(op) -> bool:
    """Does scatter `op` write into an `empty` (of its own shape and dtype) that nothing else reads?

    Its elements are undefined until written, so the scatter's output starts
    as a fresh buffer: the group holds the empty, the launch copies nothing.
    """
    target = op.operands[0]
    owner = target.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name not in EMPTIES or len(list(target.uses)) != 1:
        return False
    return target.type == op.results[0].type


@dataclass(frozen=True)
class Gather:
    """How a gather addresses its table.

    `indices[k]` addresses table dim `index_dims[k]`; every other table dim d
    is addressed by the coordinate of result dim `coord_of[d]`. The index
    tensors broadcast (right-aligned) into result dims [start, start + width).
    """

    table: ir.Value
    indices: tuple[ir.Value, ...]
    index_dims: tuple[int, ...]
    coord_of: tuple[int | None, ...]
    start: int
    width: int
    wrap: bool  # negative indices count from the end
    error: str  # the exception eager raises for an index out of range
    result_rank: int
    shape: tuple[int, ...] = ()  # the result (a scatter: its iteration space)

    @property
    def trailing(self) -> int:
        """Result dims after the index dims: how many unsqueezes put an index where it broadcasts."""
        return 0 if self.width == 0 else self.result_rank - self.start - self.width


def _broadcast(shapes: list[tuple]) -> tuple | None:
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(rank):
        sizes = {s[d - rank + len(s)] for s in shapes if d - rank + len(s) >= 0} - {1}
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def index_list(op) -> list[ir.Value | None] | str:
    """The items of an index.Tensor's list (None for `None`), or why they cannot be read."""
    items = defining_op(op.operands[1])
    if items is None or items.name != "torch.prim.ListConstruct":
        return "index list is not a list construct"
    out = []
    for v in items.operands:
        if constant_value(v) is None:
            out.append(None)
        elif tensor_type(v.type) is not None:
            out.append(v)
        else:
            return "index list holds something other than tensors and None"
    return out


def gather(op) -> Gather | str:
    """The addressing of a fusible gather, or why it is not fusible."""
    result = tensor_type(op.results[0].type)
    static = result is not None and result.is_static
    plan = _addressing(op, op.operation.name, GATHERS[op.operation.name], result.shape if static else None)
    if not isinstance(plan, str) and not static:
        return "result is not a statically shaped tensor"
    return plan


def _addressing(op, name: str, spec: tuple, result_shape: tuple | None) -> Gather | str:
    """How `op` (a gather, or a scatter addressing its output alike) addresses its table.

    `result_shape` is the iteration space; None: the one its indices give (index_put).
    """
    table_pos, index_pos, error = spec
    table = tensor_type(op.operands[table_pos].type)
    if table is None or not table.is_static:
        return "indexed tensor is not a statically shaped tensor"
    rank = len(table.shape)
    if rank == 0:
        return "indexes a 0-d tensor"
    if index_pos == ():
        items = index_list(op)
        if isinstance(items, str):
            return items
        indices = [(d, v) for d, v in enumerate(items) if v is not None]
    else:
        indices = [(None, op.operands[p]) for p in index_pos]
    for _, v in indices:
        t = tensor_type(v.type)
        if t is None or not t.is_static:
            return "index is not a statically shaped tensor"
        if t.dtype not in INT_INDEX_DTYPES:
            return f"index is {t.dtype} (a mask or byte index has a data-dependent shape)" if t.dtype in (
                "bool", "uint8") else f"index is {t.dtype}"
    shapes = [tensor_type(v.type).shape for _, v in indices]
    dim = None
    if len(op.operands) > 1 and index_pos != () and name != "torch.aten.embedding":
        dim = constant_value(op.operands[1])
        if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
            return "dim is not a constant in range"
        dim %= rank
    loose = False  # result dims addressed by coordinates may be shorter than the table's (gather, scatter)
    if name == "torch.aten.embedding":
        if rank != 2:
            return "embedding table is not 2-d"
        rrank = len(shapes[0]) + 1
        dims, start, width, wrap, coord_of = (0,), 0, len(shapes[0]), False, (None, rrank - 1)
    elif name == "torch.aten.index_select":
        if len(shapes[0]) > 1:
            return "index is not 1-d"
        rrank, dims, start, width, wrap = rank, (dim,), dim, len(shapes[0]), False
        coord_of = tuple(None if d == dim else d for d in range(rank))
    elif dim is not None:  # gather, scatter: the index has the table's rank
        if len(shapes[0]) != rank:
            return "index and input differ in rank"
        rrank, dims, start, width, wrap, loose = rank, (dim,), 0, rank, False, True
        coord_of = tuple(None if d == dim else d for d in range(rank))
    else:  # index.Tensor, index_put: a list of index tensors (None: a whole dim)
        if not indices:
            return "no index tensor"
        dims = tuple(d for d, _ in indices)
        if dims[-1] >= rank:
            return "more indices than dims"
        bshape = _broadcast(shapes)
        if bshape is None:
            return "index shapes do not broadcast"
        rest = [d for d in range(rank) if d not in dims]
        rrank, width, wrap = len(bshape) + len(rest), len(bshape), True
        if list(dims) == list(range(dims[0], dims[-1] + 1)):  # adjacent: the index dims replace them in place
            start = dims[0]
            coord_of = tuple(None if d in dims else d if d < start else d - len(dims) + len(bshape) for d in range(rank))
        else:  # apart: the index dims come first
            start = 0
            coord_of = tuple(None if d in dims else len(bshape) + rest.index(d) for d in range(rank))
    if result_shape is None:
        out = [1] * rrank
        for d, j in enumerate(coord_of):
            if j is not None:
                out[j] = table.shape[d]
        out[start:start + width] = _broadcast(shapes)
        result_shape = tuple(out)
    if len(result_shape) != rrank:
        return "result shape is not the one the indices give"
    for d, j in enumerate(coord_of):
        if j is not None and (result_shape[j] > table.shape[d] if loose else result_shape[j] != table.shape[d]):
            return "result shape is not the one the indices give"
    if any(len(s) > width or _broadcast([s, tuple(result_shape[start:start + width])]) != tuple(result_shape[start:start + width]) for s in shapes):
        return "result shape is not the one the indices give"
    return Gather(table=op.operands[table_pos], indices=tuple(v for _, v in indices), index_dims=tuple(dims),
                  coord_of=coord_of, start=start, width=width, wrap=wrap, error=error, result_rank=rrank,
                  shape=tuple(result_shape))


@dataclass(frozen=True)
class Scatter:
    """A scatter: `source` (or the constant `value`) stored where `target` addresses the output.

    The output starts as a copy of `target.table`; the iteration space is
    `target.shape` (the index's shape; for index_put, the shape x[indices] has).
    """

    target: Gather
    source: ir.Value | None
    value: object
    accumulate: bool


def scatter(op) -> Scatter | str:
    """The plan of a fusible scatter, or why it is not fusible."""
    name = op.operation.name
    spec, source_pos, accumulate = SCATTERS[name]
    table, result = tensor_type(op.operands[0].type), tensor_type(op.results[0].type)
    if table is None or result is None or not result.is_static or result.shape != table.shape:
        return "result is not a statically shaped tensor like its input"
    if not isinstance(accumulate, bool):
        accumulate = constant_value(op.operands[accumulate])
        if not isinstance(accumulate, bool):
            return "accumulate is not a constant"
    index = tensor_type(op.operands[spec[1][0]].type) if spec[1] else None
    target = _addressing(op, name, spec, None if index is None else index.shape)
    if isinstance(target, str):
        return target
    source, value = op.operands[source_pos], None
    t = tensor_type(source.type)
    if t is None:
        value, source = constant_value(source), None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "source is neither a tensor nor a constant number"
    elif not t.is_static:
        return "source is not a statically shaped tensor"
    elif spec[1] and (len(t.shape) != len(target.shape) or any(s < i for s, i in zip(t.shape, target.shape))):
        return "source is smaller than the index"
    elif not spec[1] and _broadcast([t.shape, target.shape]) != target.shape:
        return "values do not broadcast into the indexed shape"
    if accumulate and result.dtype not in ATOMIC_DTYPES:
        return f"accumulates {result.dtype}; atomics are fused for {', '.join(ATOMIC_DTYPES)}"
    return Scatter(target, source, value, accumulate)


def scatter_op(block: ir.Block):
    """The one scatter a scatter group's body ends in, or None."""
    found = [op for op in block.operations if op.operation.name in SCATTERS]
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True)
class Embed:
    """slice_scatter / select_scatter: along `dim`, result coordinate c holds src's (c - start) // step
    where start <= c < end and (c - start) % step == 0 (select: c == start, and src lacks `dim`)."""

    dim: int
    start: int
    end: int
    step: int
    select: bool


def embed(op) -> Embed | str:
    """The slice a slice_scatter / select_scatter replaces, or why it is not fusible."""
    name = op.operation.name
    types = [tensor_type(op.operands[i].type) for i in (0, 1)] + [tensor_type(op.results[0].type)]
    if any(t is None or not t.is_static for t in types):
        return "operand or result is not a statically shaped tensor"
    shape, src = types[0].shape, types[1].shape
    args = [constant_value(v) for v in list(op.operands)[2:]]
    if any(a is not None and (isinstance(a, bool) or not isinstance(a, int)) for a in args) or args[0] is None:
        return "dim, start, end or step is not a constant"
    if not shape or not -len(shape) <= args[0] < len(shape):
        return "dim out of range"
    dim = args[0] % len(shape)
    size = shape[dim]
    if name == "torch.aten.select_scatter":
        index = args[1] + size if args[1] < 0 else args[1]
        if not 0 <= index < size or src != shape[:dim] + shape[dim + 1 :]:
            return "index out of range or src of the wrong shape"
        return Embed(dim, index, index + 1, 1, True)
    start, end, step = (args + [None, None, 1])[1:4]
    start, end, step = 0 if start is None else start, size if end is None else end, 1 if step is None else step
    start, end = (min(max(v + size if v < 0 else v, 0), size) for v in (start, end))
    if step < 1 or src != shape[:dim] + (len(range(start, end, step)),) + shape[dim + 1 :]:
        return "step is not positive or src has the wrong shape"
    return Embed(dim, start, end, step, False)


def _dtype_ok(op, position) -> str | None:
    if position is None:
        return None
    value = constant_value(op.operands[position])
    return None if value is None or isinstance(value, int) else "dtype is not a constant"


def creation_value(op):
    """The constant a full/zeros/ones-like op fills with (None for arange and eye)."""
    name = op.operation.name
    if name.startswith(("torch.aten.zeros", "torch.aten.new_zeros")):
        return 0
    if name.startswith(("torch.aten.ones", "torch.aten.new_ones")):
        return 1
    position = CREATIONS[name][0]
    return None if position is None else constant_value(op.operands[position])


def _why_not_creation(op) -> str | None:
    name = op.operation.name
    _, sizes, dtype_pos, _ = CREATIONS[name]
    if sizes is not None and constant_int_list(op.operands[sizes]) is None:
        return "sizes are not constants"
    why = _dtype_ok(op, dtype_pos)
    if why:
        return why
    # layout, device, pin_memory follow the dtype; only the default strided layout and no pinning are kernels.
    if dtype_pos is not None:
        extra = [constant_value(v) for v in list(op.operands)[dtype_pos + 1 : dtype_pos + 4]]
        if len(extra) >= 1 and extra[0] not in (None, 0):
            return "layout is not strided"
        if len(extra) >= 2 and extra[1] is not None and not str(extra[1]).startswith(("cpu", "cuda")):
            return f"device {extra[1]!r} is not cpu or cuda"
        if len(extra) >= 3 and extra[2] not in (None, False):
            return "pinned memory"
    if name in ARANGES:
        args = [constant_value(v) for v in list(op.operands)[:dtype_pos]]
        if any(isinstance(a, bool) or not isinstance(a, (int, float)) for a in args):
            return "arange bounds are not constant numbers"
        return None
    if name in EYES:
        return None
    value = creation_value(op)
    if value is NO_CONSTANT or not isinstance(value, (int, float)):
        return "fill value is not a constant number"
    return None


def why_not_fusible(op) -> str | None:
    """None if the indexing or creation op `op` can join a group; otherwise the reason."""
    name = op.operation.name
    if name in WINDOWED:  # (max pools with indices have two results)
        return why_not_pooled(op)
    if len(op.results) != 1:
        return "has more than one result"
    if name in GATHERS:  # (a mask index, whose result shape is data-dependent, says so)
        plan = gather(op)
        return plan if isinstance(plan, str) else None
    result = tensor_type(op.results[0].type)
    if result is None or not result.is_static:
        return "result is not a statically shaped tensor of a supported dtype"
    if name in TRIANGLES:
        t = tensor_type(op.operands[0].type)
        if t is None or len(t.shape) < 2:
            return "input is not a tensor of rank 2 or more"
        return None if isinstance(constant_value(op.operands[1]), int) else "diagonal is not a constant"
    if name in CREATIONS:
        return _why_not_creation(op)
    if name in EMBEDS:
        plan = embed(op)
        return plan if isinstance(plan, str) else None
    if name in SCATTERS:
        plan = scatter(op)
        return plan if isinstance(plan, str) else None
    return "unsupported op"


def reads_shape_only(owner_name: str, operand_number: int) -> bool:
    """Whether operand `operand_number` of an op named `owner_name` is read for its shape (and device) only."""
    spec = CREATIONS.get(owner_name)
    return spec is not None and spec[3] == operand_number


def indexed_operand(op, operand_number: int) -> bool:
    """Whether `op` reads operand `operand_number` at computed addresses (a table or an index), not at the coordinates."""
    name = op.operation.name
    if name == "torch.prim.ListConstruct":
        return any(u.owner.operation.name in INDEX_LISTS and u.operand_number == 1 for u in op.results[0].uses)
    if name in EMBEDS:
        return operand_number == 1
    if name in WINDOWED:
        return operand_number == 0
    spec = GATHERS.get(name) or (SCATTERS[name][0] if name in SCATTERS else None)
    return spec is not None and (operand_number == spec[0] or operand_number in spec[1])


__all__ = [
    "ARANGES", "ATOMIC_DTYPES", "CREATIONS", "EMBEDS", "EYES", "Embed", "GATHERS", "Gather", "INDEXING_OPS", "INDEX_LISTS", "SCATTERS",
    "Scatter", "TRIANGLES", "creation_value", "embed", "gather", "index_list", "indexed_operand", "reads_shape_only", "scatter",
    "scatter_op", "why_not_fusible", "FAMILY",
]


# (The pools and upsamplings of INDEXING_OPS are the pooling family's.)
_OWN = INDEXING_OPS - WINDOWED
FAMILY = Family(
    __name__, _OWN, why_not_fusible, fused=_OWN, pure=_OWN, lowering="mlirfuse/lowering/indexing.py",
    limits="static shapes; int32 or int64 indices (a mask index has a data-dependent shape); constant sizes, fill "
    "values and dims; accumulating scatters of the dtypes atomics take",
)
