"""The one Triton emitter: a kernel's text, one buffer, one table of per-op emitters.

Every kernel the lowering writes reads like a hand-written one,

    pid -> offsets -> mask -> index per dim -> loads -> one `tmpN = ...` per op -> stores

and every kind of kernel is written by a `KernelEmitter`: the pointwise and
concat schedule (`lowering/pointwise.py`) and the reduction schedule
(`lowering/reduction.py`) only decide *where* values live (a flat block of
[XBLOCK] lanes, or [XBLOCK, RBLOCK] tiles, inside or outside a loop) and
which lines go where; the lines themselves come from here:

- `emit_op(op, operand_value)` - one `tmpN = ...` line for an elementwise op,
  from the rule table in `mlirfuse.ops.elementwise` (casts, promotion, f16/bf16
  computed in f32, bool arithmetic as eager does it);
- `load` / `store` - one masked `tl.load` / `tl.store` line;
- `coords` - flat index -> row-major coordinates;
- `render` - the kernel module: header comments, imports and the helpers the
  body uses, `@triton.jit`, the signature, the body.

Extension point for templates. A GEMM or flash-attention template emits its
own main loop (`tl.dot`, online softmax) and hosts a prologue or epilogue by
calling `emit_op` with an `operand_value` that maps the op's tensor operands
to tile expressions (`acc` for the matmul result, loads of the epilogue's
other inputs as `[BLOCK_M, BLOCK_N]` tiles). Per-op emitters only combine
expressions elementwise, so the same rule gives the same line on a 1D block,
a reduction tile or a GEMM tile. Nothing here knows the tile's shape.

This package only writes text; it never imports triton (see
`mlirfuse.runtime.kernels` for why that matters), and it depends only on
`mlirfuse.ir`, `mlirfuse.errors` and the op rule tables.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from enum import Enum
from typing import Callable, Sequence

from mlirfuse.dialect import SCALAR_MARK, GroupKind
from mlirfuse.errors import MlirfuseError
from mlirfuse.ir import TensorType, block_ops, constant_value, ir, is_constant_like, op_id, tensor_type, torch_name
from mlirfuse.lowering.math_helpers import MATH_HELPERS
from mlirfuse.ops.dtypes import INT_DTYPES, TRITON_DTYPES, number_as, round_to
from mlirfuse.ops.elementwise import RULES, Types, compute_dtype, literal, promote
from mlirfuse.ops.indexing import indexed_operand, reads_shape_only
from mlirfuse.ops.pooling import window_ops
from mlirfuse.ops.views import PADS, RESHAPES, VIEW_OPS, pad_args, stored_relayout, view_chain, walk_views


class LoweringError(MlirfuseError):
    """A fusion.kernel holds something the Triton lowering cannot express."""


@dataclass(frozen=True)
class Site:
    """What a kernel loads: input `input` seen through `chain`, views applied in order.

    `name` is the pointer parameter (`in2`, or `in2_v0` for a view of it); the
    launcher applies the chain with torch's view functions and passes the
    resulting tensor and its strides in the iteration space.
    """

    input: int
    chain: tuple = ()  # ((op name, constant args), ...)
    name: str = ""
    # A pad after the views: (mode, (low, size) per dim, value); see views.pad_args.
    pad: tuple | None = None
    # A gather's table: addressed at computed offsets through its own `table_rank` strides.
    table_rank: int = 0
    # A gather's index input: (indexed dim's size, negatives wrap?, eager's exception name), checked before launch.
    check: tuple | None = None

    def comment(self) -> str:
        def text(arg) -> str:
            return str(list(arg)) if isinstance(arg, tuple) else str(arg)

        views = "".join(f".{op.split('.')[2]}({', '.join(map(text, args))})" for op, args in self.chain)
        if self.pad is not None:
            mode, dims, value = self.pad
            views += f".pad({mode}, low={[low for low, _ in dims]}" + (f", value={value})" if mode == "constant" else ")")
        return f"load %arg{self.input}{views}"


class Role(Enum):
    """What a kernel parameter is: how the launch fills it and how an ahead-of-time compile types it."""

    LOAD = "load"  # pointer to a load site: a kernel input, or a view of one
    OUTPUT = "output"  # pointer to an output
    SCALAR = "scalar"  # an f32 constant with no literal, or a kernel's scalar argument (a LaunchScalar)
    SIZE = "size"  # a size or numel of the iteration space (or of a template's operands)
    STRIDE = "stride"  # one stride of a load site


@dataclass(frozen=True)
class Param:
    """One parameter of a generated kernel: its name in the source, its role, and what it stands for."""

    name: str
    role: Role
    index: int = 0  # LOAD: the kernel input it reads; OUTPUT: the output; SCALAR: the scalar; STRIDE: the site


def kernel_params(sites: Sequence[Site], outputs: int, scalars: int, sizes: Sequence[str], stride_dims: Sequence[int]) -> tuple[Param, ...]:
    """Parameters in the runtime's launch order: loads, outputs, scalars, sizes, strides (`stride_dims[i]` of site i)."""
    params = [Param(site.name, Role.LOAD, site.input) for site in sites]
    params += [Param(f"out{j}", Role.OUTPUT, j) for j in range(outputs)]
    params += [Param(f"c{k}", Role.SCALAR, k) for k in range(scalars)]
    params += [Param(size, Role.SIZE) for size in sizes]
    params += [
        Param(f"{site.name}_st{d}", Role.STRIDE, i) for i, (site, dims) in enumerate(zip(sites, stride_dims)) for d in range(dims)
    ]
    return tuple(params)


@dataclass(frozen=True)
class LaunchScalar:
    """A scalar parameter each launch fills: its `scalars` value #`index` (a `fusion.scalar` constant), rounded
    to `rounding` (f16/bf16) where the lowering rounds that constant's literal (`_round_scalars`)."""

    index: int
    rounding: str | None = None

    def value(self, scalars: Sequence[float]) -> float:
        v = scalars[self.index]
        return v if self.rounding is None else round_to(v, self.rounding)


@dataclass(frozen=True)
class TritonKernel:
    """A kernel's source and what the runtime needs to launch it."""

    name: str
    source: str
    inputs: tuple[TensorType, ...]
    outputs: tuple[TensorType, ...]
    # The c0, c1 ... parameters: values of constants with no literal; LaunchScalars for the kernel's scalar arguments.
    scalars: tuple[float | LaunchScalar, ...]
    params: tuple[Param, ...] = ()
    kind: GroupKind = GroupKind.POINTWISE
    # What the kernel loads, in parameter order: inputs and views of them (see Site).
    sites: tuple[Site, ...] = ()
    # The shape every site broadcasts into: the stored values' shape
    # (pointwise) or the reduced input's (reduction); and the reduced dims.
    space: tuple[int, ...] = ()
    reduced: tuple[int, ...] = ()
    # Templates: each site's own space (default: `space` for all) and the
    # template's launch facts (a `mlirfuse.ops.matmul.Gemm` for matmul kernels).
    site_spaces: tuple[tuple[int, ...], ...] = ()
    template: object = None
    # Where a kernel without inputs (creation ops only) allocates its outputs.
    device: str = ""
    # (output, input) pairs: the output starts as a copy of the input (a scatter writes into it).
    init: tuple = ()
    # A kernel over `?` sizes: how the launcher sizes it per call (lowering/dynamic.DynamicSizes).
    dynamic: object = None
    # It takes the `WIDE` constexpr (64-bit offsets or not, per launch).
    wide_flag: bool = False
    # (output, input) pairs the schedule lets store the output over the input's (contiguous) buffer: every
    # element of the input is read only for the output's element at the same place, before it is stored
    # (reductions' row and 0-d outputs, lowering/reduction.py; pointwise pairs: runtime/kernels.in_place_pairs).
    overwrites: tuple = ()

    @property
    def shape(self) -> tuple[int, ...]:
        """The iteration space."""
        return self.space

    def renamed(self, name: str) -> TritonKernel:
        """The same kernel called `name`: its name replaced wherever it is a whole word of the source."""
        return replace(self, name=name, source=re.sub(rf"\b{re.escape(self.name)}\b", name, self.source))

    def pointer_dtype(self, param: Param) -> str:
        """The element dtype behind a pointer parameter: its output's, or the input its load reads."""
        return (self.outputs if param.role is Role.OUTPUT else self.inputs)[param.index].dtype


@dataclass
class Value:
    """A value in the kernel: a Triton expression (usually a `tmpN` name) and its compute dtype."""

    text: str
    dtype: str


def cast(v: Value, dtype: str) -> str:
    """`v` converted to `dtype` (a torch dtype name), as eager converts."""
    if v.dtype == dtype:
        return v.text
    if dtype == "bool":
        # a bf16 value (a rounded f32 one) is compared in f32: the interpreter's bf16 compare yields a
        # mis-sized bool block that a later cast cannot read (fuzz seed 9200311: x.bool() == 0.5)
        return f"({v.text}.to(tl.float32) != 0)" if v.dtype == "bfloat16" else f"({v.text} != 0)"
    if dtype == "bfloat16":
        # Through f32, as eager converts every dtype to bf16 (the interpreter
        # cannot convert ints or bools to bf16 at all).
        text = v.text if v.dtype == "float32" else f"{v.text}.to(tl.float32)"
        return f"round_to_bf16({text})"
    return f"{v.text}.to({TRITON_DTYPES[dtype]})"


# Helper functions a kernel module defines when its kernel uses them, by name.
HELPERS = {
    # f32 -> bf16 rounding to nearest even, as eager does, spelled out on the
    # bits: Triton's interpreter truncates f32 -> bf16 (even with
    # fp_downcast_rounding="rtne") while compiled code rounds. After rounding
    # the low 16 bits are zero, so the final cast is exact on both. A NaN is
    # cast, not rounded: a GPU's NaN is 0x7FFFFFFF, which the carry would turn
    # into -0.0 (found with real launches on an H100; the interpreter's NaN is
    # 0x7FC00000).
    "round_to_bf16": """@triton.jit
def round_to_bf16(x):
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return tl.where(x != x, x, bits.to(tl.float32, bitcast=True)).to(tl.bfloat16)
""",
    # a / b as IEEE division rounds it, on every path: Triton's `/` on f32 is
    # div.full.f32 on NVIDIA GPUs (2 ulp: x / x can be 0.99999994, and a
    # truncating division then gives 0). The sum with -0.0 (the additive
    # identity, signs of zeros kept) makes both operands f32 tensors, whatever
    # they were (a literal, an int, an f16 value); f64 stays `/` (div.rn.f64).
    "fdiv": """@triton.jit
def fdiv(a, b):
    q = a / b
    if q.dtype == tl.float32:
        q = tl.math.div_rn(tl.full(q.shape, -0.0, tl.float32) + a, tl.full(q.shape, -0.0, tl.float32) + b)
    return q
""",
    # tanh within ~1 ulp of eager's: Triton has no tanh the interpreter runs,
    # and 2*sigmoid(2x)-1 cancels near 0 (5e-5 relative error at 1e-3). In
    # f32, x + x^3 P(x^2) (a minimax fit, < 1 ulp) below 0.55 and
    # 1 - 2/(exp(2|x|) + 1) above, where nothing cancels. f64 has no f64-exact
    # literals for a polynomial: t/(t+2) with t = expm1(2|x|) by Kahan's
    # (u-1)*y/log(u), exact to a few ulp wherever exp and log are.
    "tanh": """@triton.jit
def tanh(x):
    ax = tl.abs(x)
    if x.dtype == tl.float64:
        y = 2 * ax
        u = tl.exp(y)
        t = tl.where(u == 1, y, (u - 1) * y / tl.log(u))
        big = tl.where(ax > 20, 1, t / (t + 2))
    else:
        s = x * x
        p = (((-0.0062743742 * s + 0.021071814) * s - 0.053852357) * s + 0.13332587) * s - 0.33333316
        big = 1 - 2 / (tl.exp(2 * ax) + 1)
        big = tl.where(ax < 0.55, x + x * (s * p), big)
    big = tl.where(x < 0, -tl.abs(big), big)
    return tl.where(x == 0, x, big)  # tanh(-0.0) is -0.0
""",
    # tl.dot of bf16 tiles. Triton's interpreter multiplies bf16 bits as if
    # they were integers; the kernel passes INTERPRET and takes the f32 path
    # there (products of bf16 values are exact in f32). Compiled, a bf16 dot.
    "dot_bf16": """@triton.jit
def dot_bf16(a, b, INTERPRET: tl.constexpr):
    if INTERPRET:
        out = tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
    else:
        out = tl.dot(a, b)
    return out
""",
    # tl.reduce combine functions: product, and (value, index) pairs for
    # argmax/argmin as eager picks them (NaN wins, ties go to the first index).
    "multiply": """@triton.jit
def multiply(a, b):
    return a * b
""",
    # max/min that propagate NaN like eager (tl.max/tl.min drop NaNs).
    "maximum": """@triton.jit
def maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)
""",
    "minimum": """@triton.jit
def minimum(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)
""",
    "argmax_combine": """@triton.jit
def argmax_combine(v0, i0, v1, i1):
    nan0 = v0 != v0
    nan1 = v1 != v1
    first = (v0 > v1) | (nan0 & ~nan1) | (((v0 == v1) | (nan0 & nan1)) & (i0 < i1))
    return tl.where(first, v0, v1), tl.where(first, i0, i1)
""",
    "argmin_combine": """@triton.jit
def argmin_combine(v0, i0, v1, i1):
    nan0 = v0 != v0
    nan1 = v1 != v1
    first = (v0 < v1) | (nan0 & ~nan1) | (((v0 == v1) | (nan0 & nan1)) & (i0 < i1))
    return tl.where(first, v0, v1), tl.where(first, i0, i1)
""",
}


HELPERS.update(MATH_HELPERS)


def module_prelude(body: list[str]) -> list[str]:
    """The imports, and the helpers the body uses (and the helpers those use), that start a kernel's source file."""
    lines = ["import triton", "import triton.language as tl", "", ""]
    text = "\n".join(body)
    used: set[str] = set()
    while True:
        new = {name for name in HELPERS if name not in used and re.search(rf"\b{name}\b", text)}
        if not new:
            break
        used |= new
        text += "".join(HELPERS[name] for name in new)
    for name, source in HELPERS.items():
        if name in used:
            lines += source.splitlines() + ["", ""]
    return lines


def coords(index: str, dims: list[int], prefix: str) -> list[str]:
    """Row-major coordinates `{prefix}{d}` of the flat `index` over `dims` (sizes s{d})."""
    if not dims:
        return []
    if len(dims) == 1:
        return [f"{prefix}{dims[0]} = {index}"]
    lines = []
    for k in range(len(dims) - 1, -1, -1):
        inner = " * ".join(f"s{d}" for d in dims[k + 1 :])
        d = dims[k]
        if k == len(dims) - 1:
            lines.append(f"{prefix}{d} = {index} % s{d}")
        elif k == 0:
            lines.append(f"{prefix}{d} = {index} // ({inner})")
        else:
            lines.append(f"{prefix}{d} = ({index} // ({inner})) % s{d}")
    return lines


def load_sites(name: str, block: ir.Block, cat_of_inputs: bool = True, computed_pads: bool = False) -> dict:
    """Every value a kernel body reads from memory: arguments and view chains of them read by compute ops.

    Keyed by the value, or for the pieces of a cat of inputs by (cat result,
    piece number); `cat_of_inputs=False` for concat kernels, whose cat is a store.
    `computed_pads`: the kernel evaluates the operands of pads and views and
    the pieces of cats that are computed (pointwise kernels); others must read inputs.
    """
    sites: dict[ir.Value, Site] = {}
    views_of: dict[int, int] = {}

    reads = VIEW_OPS | PADS | ({"torch.prim.ListConstruct"} if cat_of_inputs else set())
    window = window_ops(block)

    def read_by_compute(v: ir.Value) -> bool:
        # Gathers read their tables and index inputs at computed places (lowering/indexing.py), *_like ops only a
        # shape; pools' window prologues read theirs at window positions (lowering/pooling.py).
        return any(
            u.owner.operation.name not in reads
            and not indexed_operand(u.owner, u.operand_number)
            and not reads_shape_only(u.owner.operation.name, u.operand_number)
            and op_id(u.owner.operation) not in window
            for u in v.uses
        )

    for arg in block.arguments:
        if read_by_compute(arg):
            sites[arg] = Site(arg.arg_number, (), f"in{arg.arg_number}")
    for op in block_ops(block)[0]:
        if op.operation.name == "torch.aten.cat" and cat_of_inputs:
            # Each piece is a constant pad of itself to the cat's shape, keyed (cat result, piece number).
            items, dim = op.operands[0].owner, constant_value(op.operands[1])
            shape = tensor_type(op.results[0].type).shape
            dim %= len(shape)
            start = 0
            for k, piece in enumerate(items.operands):
                chain, size = view_chain(piece, block), tensor_type(piece.type).shape
                if chain is None and computed_pads:
                    start += size[dim]
                    continue
                if chain is None:
                    raise LoweringError(f"kernel @{name}: a cat read by the kernel must concatenate kernel inputs (through views)")
                dims = tuple((start if d == dim else 0, n) for d, n in enumerate(size))
                i, views = chain
                j = views_of.setdefault(i, 0)
                views_of[i] += 1
                sites[(op.results[0], k)] = Site(i, views, f"in{i}_v{j}", ("constant", dims, 0))
                start += size[dim]
            continue
        if op.operation.name in PADS:
            chain, pad = view_chain(op.operands[0], block), pad_args(op)
            if chain is None and pad is not None and computed_pads:
                continue
            if chain is None or pad is None:
                raise LoweringError(f"kernel @{name}: '{op.operation.name}' must pad a kernel input (through views) by constants")
            i, views = chain
            k = views_of.setdefault(i, 0)
            views_of[i] += 1
            sites[op.results[0]] = Site(i, views, f"in{i}_v{k}", pad)
            continue
        if op.operation.name not in VIEW_OPS:
            continue
        result = op.results[0]
        chain = view_chain(result, block)
        if chain is None:
            if op.operation.name in RESHAPES and all(u.owner.operation.name in RESHAPES | {"fusion.yield"} for u in result.uses):
                continue  # an exit reshape: stored, not loaded
            if stored_relayout(op.operation):
                continue  # a relayout of a computed value only stored: a GEMM stores its tile in that layout
            if computed_pads:
                continue  # a view of a computed value: evaluated at the view's coordinates (pointwise kernels)
            raise LoweringError(f"kernel @{name}: '{op.operation.name}' must read a kernel input through views only")
        if read_by_compute(result):
            i, views = chain
            k = views_of.setdefault(i, 0)
            views_of[i] += 1
            sites[result] = Site(i, views, f"in{i}_v{k}")
    return dict(sorted(sites.items(), key=lambda kv: (kv[1].input, kv[1].name != f"in{kv[1].input}")))


def stored_value(v: ir.Value, sites: dict) -> ir.Value:
    """The value a result is computed from: through exit reshapes of computed values."""
    return walk_views(v, through=lambda op: op.results[0] not in sites and op.name in RESHAPES)[0]


INT32_MAX = 2**31 - 1


def needs_64bit(types: Sequence[TensorType], space: Sequence[int | None] = ()) -> bool:
    """Does a tensor the kernel reads or writes, or its iteration space, hold more than 2^31 - 1 elements?

    Then its indices and offsets must be int64, where int32 would wrap (a 32k-vocabulary logits tensor
    at 16 x 4096 tokens is 2.1 G elements). Elsewhere 32 bits, the fast path. Sizes known only at call
    time count as small.
    """
    sizes = [t.numel for t in types if t.is_static]
    if space and all(d is not None for d in space):
        sizes.append(math.prod(space))
    return max(sizes, default=0) > INT32_MAX


def index(expr: str, wide: bool) -> str:
    """`expr` (an index: program ids, aranges) as int64 where the kernel `needs_64bit`, else as it is."""
    return f"({expr}).to(tl.int64)" if wide else expr


# The constexpr of a kernel over `?` sizes saying whether this launch needs 64-bit offsets (runtime/kernels.py
# sets it from the launch's tensors): one compiled variant per answer, 32 bits wherever the sizes allow.
WIDE = "WIDE"


def program_offset(types: Sequence[TensorType], space: Sequence[int | None]) -> str:
    """The first element of this program's block, `tl.program_id(0) * XBLOCK`: in 64 bits where the kernel
    `needs_64bit` (every index and offset derived from it is then int64); over `?` sizes, as `WIDE` says."""
    if needs_64bit(types, space):
        return "tl.program_id(0).to(tl.int64) * XBLOCK"
    if any(not t.is_static for t in types) or any(d is None for d in space):
        return f"(tl.program_id(0).to(tl.int64) if {WIDE} else tl.program_id(0)) * XBLOCK"
    return "tl.program_id(0) * XBLOCK"


def static_signature(name: str, block: ir.Block, terminator, dynamic: bool = False) -> tuple[list[TensorType], list[TensorType]]:
    """The kernel's argument and result types; every one must be a statically shaped tensor.

    `dynamic`: sizes may be `?` (a schedule that sizes itself at call time, see lowering/dynamic.py).
    """
    inputs = [tensor_type(a.type) for a in block.arguments]
    outputs = [tensor_type(v.type) for v in terminator.operands]
    if any(t is None or not (dynamic or t.is_static) for t in inputs + outputs):
        raise LoweringError(f"kernel @{name}: every argument and result must be a statically shaped tensor")
    return inputs, outputs


class KernelEmitter:
    """The text of one kernel: its body lines, its values, its scalar parameters.

    `out` is where lines go; a schedule points it at a loop body and back.
    """

    def __init__(self, name: str, block: ir.Block):
        self.name = name
        self.block = block
        # fusion-outline{precision=eager}: every f16/bf16 op result rounded to its dtype, as eager stores it.
        owner = block.owner
        self.eager_precision = "precision" in owner.attributes and ir.StringAttr(owner.attributes["precision"]).value == "eager"
        self.body: list[str] = []
        self.out = self.body
        self.env: dict[ir.Value, Value] = {}
        self.consts: dict[ir.Value, object] = {}
        self.scalars: list[float | LaunchScalar] = []
        # The body's scalar arguments (fusion-outline's lift-constants): constant -> its `scalars` index.
        self.lifted = {op.results[0]: ir.IntegerAttr(op.attributes[SCALAR_MARK]).value
                       for op in block.operations if SCALAR_MARK in op.attributes}
        self.count = 0

    # --- lines -----------------------------------------------------------------------------

    def tmp(self, expr: str, dtype: str, comment: str) -> Value:
        name = f"tmp{self.count}"
        self.count += 1
        self.out.append(f"{name} = {expr}  # {comment}")
        return Value(name, dtype)

    def load(self, address: str, dtype: str, comment: str, mask: str, other: str | None = None) -> Value:
        """One masked load of a `dtype` tensor; f16/bf16 are widened to f32 for computing."""
        other = "" if other is None else f", other={other}"
        value = self.tmp(f"tl.load({address}, mask={mask}{other})", dtype, comment)
        if compute_dtype(dtype) != dtype:
            value = self.tmp(f"{value.text}.to(tl.float32)", "float32", "compute in f32")
        return value

    def store(self, pointer: str, offset: str, value: Value, dtype: str, mask: str, comment: str = "") -> None:
        """One masked store of `value` converted to the output's `dtype`."""
        comment = f"  # {comment}" if comment else ""
        self.out.append(f"tl.store({pointer} + {offset}, {cast(value, dtype)}, mask={mask}){comment}")

    def scalar_text(self, value) -> str:
        text = literal(value)
        if text is not None:
            return text
        if isinstance(value, float):  # inf / nan: passed in as a kernel argument
            self.scalars.append(value)
            return f"c{len(self.scalars) - 1}"
        return repr(value)

    def launch_scalar(self, constant: ir.Value, rounding: str) -> str:
        """The parameter standing for scalar argument `constant`, rounded to `rounding` where that is f16/bf16."""
        scalar = LaunchScalar(self.lifted[constant], rounding if rounding in ("float16", "bfloat16") else None)
        if scalar not in self.scalars:
            self.scalars.append(scalar)
        return f"c{self.scalars.index(scalar)}"

    # --- the per-op emitters ---------------------------------------------------------------

    def emit_body_op(self, op) -> None:
        """A body op in program order: constants are remembered, list constructs skipped, the rest emitted."""
        name = op.operation.name
        if name.startswith("torch.constant."):
            self.consts[op.results[0]] = constant_value(op.results[0])
            return
        if name == "torch.prim.ListConstruct":  # view sizes, reduction dims: read as constants
            return
        self.env[op.results[0]] = self.emit_op(op, self.env.get)

    def emit_op(self, op, operand_value: Callable[[ir.Value], Value | None]) -> Value:
        """One `tmpN = ...` line for an elementwise op; `operand_value(v)` gives its tensor operands.

        Templates host epilogues through this: `operand_value` may return any
        tile expression; the line combines them elementwise.
        """
        name = torch_name(op)
        rule = RULES.get(name)
        if rule is None:
            raise LoweringError(f"kernel @{self.name}: no Triton lowering for '{name}'")
        result = tensor_type(op.results[0].type)
        consts, tensors = [], {}
        for i, operand in enumerate(op.operands):
            value = None if is_constant_like(operand) else operand_value(operand)
            if value is not None:
                tensors[i] = value
                consts.append(None)
            else:
                consts.append(self.consts.get(operand, constant_value(operand)))
        target = _target_dtype(rule, result, tensors, consts)
        # Eager's bool arithmetic is int arithmetic tested != 0 (True + True is True).
        bool_arith = rule.kind == "arith" and target == "bool"
        if bool_arith:
            target = "int32"
        rounding = None  # the dtype Python-number operands are rounded to, as eager rounds them
        if rule.kind == "compare":
            rounding = promote([tensor_type(op.operands[i].type).dtype for i in tensors])
        elif rule.half_scalars and self.eager_precision:
            rounding = result.dtype
        if rounding is not None:
            consts = _round_scalars(consts, rounding)
        if rule.kind == "select" and (target in INT_DTYPES or target == "bool"):
            # A float number selected into an integer result is that integer, as eager converts it: masked_fill of
            # an int32 tensor with -1.5 fills -1; the float literal made the kernel's value float (fuzz seed 2790892).
            # Into a bool result it is its truth (-1.5 is True; seed 2860034, from a GPU run, the same in the interpreter).
            consts = [number_as(c, target) for c in consts]
        args = []
        for i, c in enumerate(consts):
            if i in tensors:
                want = "bool" if (rule.kind == "logical" or (rule.kind == "select" and i == rule.cond)) else target
                args.append(tensors[i].text if rule.kind == "cast" else cast(tensors[i], want))
            elif op.operands[i] in self.lifted:
                args.append(self.launch_scalar(op.operands[i], rounding))
            else:
                args.append(self.scalar_text(c))
        if rule.by_dtype:
            expr = rule.emit(args, consts, tensor_type(op.operands[min(tensors)].type).dtype)
        elif rule.typed:
            storage = tensor_type(op.operands[min(tensors)].type).dtype if tensors else result.dtype
            expr = rule.emit(args, consts, Types(target, storage, result.dtype, self.eager_precision))
        else:
            expr = rule.emit(args, consts)
        if bool_arith:
            expr = f"({expr}) != 0"
        out_dtype = compute_dtype(result.dtype)
        if rule.kind == "cast":
            expr = cast(as_declared(op.operands[0], Value(expr, tensors[0].dtype)), result.dtype)
            if result.dtype != out_dtype:  # round through f16/bf16 as eager does
                expr = f"{expr}.to({TRITON_DTYPES[out_dtype]})"
        elif self.eager_precision and result.dtype != out_dtype and result.dtype in ("float16", "bfloat16"):
            expr = f"{cast(Value(f'({expr})', out_dtype), result.dtype)}.to({TRITON_DTYPES[out_dtype]})"
        return self.tmp(expr, out_dtype, name)

    # --- the kernel module -----------------------------------------------------------------

    def params(self, sites: list[Site], outputs: int, sizes: list[str], rank: int) -> tuple[Param, ...]:
        """Parameters in the runtime's launch order: loads, outputs, scalars, sizes, strides (`rank` per site, a table's own)."""
        return kernel_params(sites, outputs, len(self.scalars), sizes, [site.table_rank or rank for site in sites])

    def render(self, header: list[str], params: Sequence[Param], blocks: list[str], lines: list[str]) -> str:
        """The kernel's source file: header comments, prelude, `@triton.jit def ...`, `lines` indented."""
        return "\n".join(
            [
                f"# Generated by mlirfuse from fusion.kernel @{self.name}; do not edit.",
                *(f"# {line}" for line in header),
                *module_prelude(lines),
                "@triton.jit",
                f"def {self.name}({', '.join([p.name for p in params] + [f'{b}: tl.constexpr' for b in blocks])}):",
                *("    " + line for line in lines),
                "",
            ]
        )


def as_declared(v: ir.Value, value: Value) -> Value:
    """`value`, the kernel's text for `v`, rounded to `v`'s declared dtype where it was computed wider.

    An f16/bf16 value is computed in f32; where it leaves that precision
    (a cast, a cat piece stored into a wider output) eager's operand holds
    only values of its dtype.
    """
    declared = tensor_type(v.type).dtype
    if value.dtype != declared and not _holds_its_dtype(v):
        return Value(cast(value, declared), declared)
    return value


def _holds_its_dtype(value: ir.Value) -> bool:
    """Is `value` exactly representable in its declared dtype in a kernel: loaded (through views) or a cast's result?"""
    root, _ = walk_views(value, through=lambda op: torch_name(op) in VIEW_OPS)  # any arguments: views keep the dtype
    if isinstance(root.owner, ir.Block):  # loaded
        return True
    rule = RULES.get(torch_name(root.owner))
    return rule is not None and rule.kind == "cast"


def _target_dtype(rule, result: TensorType, tensors: dict, consts: list) -> str:
    """The dtype a rule's tensor operands are cast to."""
    if rule.kind in ("arith", "bitwise", "select"):
        return compute_dtype(result.dtype)
    if rule.kind == "compare":
        dtype = promote([t.dtype for t in tensors.values()])
        if dtype not in ("float32", "float64") and any(isinstance(c, float) for c in consts):
            dtype = "float32"
        return compute_dtype(dtype)
    return result.dtype


def _round_scalars(consts: list, dtype: str) -> list:
    """Eager compares an f16/bf16 tensor with a Python float rounded to that dtype."""
    if dtype not in ("float16", "bfloat16"):
        return consts
    return [round_to(c, dtype) if isinstance(c, float) else c for c in consts]


__all__ = [
    "KernelEmitter", "LaunchScalar", "LoweringError", "Site", "TritonKernel", "Value", "as_declared", "cast", "coords",
    "load_sites", "module_prelude", "static_signature", "stored_value",
]
