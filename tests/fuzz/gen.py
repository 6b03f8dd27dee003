"""Seeded random graphs over the ops mlirfuse claims to fuse, as Python source.

A case is plain data (`Case`): input specs and a list of nodes, each node one
line `v3 = torch.add($0, $1, alpha=2)` whose `$k` placeholders name earlier
values. `render` turns it into the source of an `nn.Module` plus the code
that builds its inputs; the same source runs eagerly, compiled, and as a
saved regression test. Every node is validated eagerly while the graph is
generated (an op eager rejects is redrawn), so a case is always a valid
eager program.

The op mix (`GENERATORS`' weights): about two thirds of the draws go to the
issue-9 families (unary, binary, scalar, where, cast, reduce, norm, view,
split, cat, matmul); the rest to the kernels added after it: more
elementwise ops (remainder/fmod/floor_divide/div modes on integers with
zeros and negatives, bitwise ops, in-range shifts, integer pow, activations,
tensor clamp bounds, lerp/addcmul/addcdiv, masked_fill.Tensor), pads (all
F.pad modes, negative constant pads), cat of computed pieces, avg/max
pooling, indexing (embedding, index_select, gather, advanced indexing,
scatter family, index_put, arange/full/tril/triu; indices in range, often
duplicated, negative where the op takes them), GEMMs with epilogues
(linear/matmul/bmm/addmm, silu * up, bias, gelu, residual, casts) and
attention (explicit softmax(q @ k^T * s + mask) @ v with causal or given
masks, F.scaled_dot_product_attention with is_causal, attn_mask,
enable_gqa), and slices that are empty (start = end, start past the end)
as cat pieces (issue 21), cumsum/cumprod along any dim with dtype= and the
mask/position chain around one (issue 22), and issue 21's edges: inputs with a
zero-size dim (about one shape in twelve), stepped, negative and out-of-range
slices, dilated and 3-d pools, GEMMs with a prologue on either operand (a 0-d
scale, a broadcast row or column, a cast) and K, M or N = 0, and operands of
mixed kinds (int, float, bool) in forward and backward ops. Sizes stay tiny:
Triton runs in its CPU interpreter.
"""

from __future__ import annotations

import copy
import math
import random
import re
import warnings
from dataclasses import dataclass, field

DTYPES = ("float32", "float16", "bfloat16", "int32", "int64", "bool")
FLOATS = ("float32", "float16", "bfloat16")
SPECIALS = ("float('inf')", "float('-inf')", "float('nan')", "-0.0")


@dataclass
class Input:
    name: str
    shape: list[int]
    dtype: str
    layout: str = "contiguous"  # contiguous | transposed | strided | expanded
    special: bool = False  # some elements are inf, -inf, nan, -0.0
    positive: bool = False  # values in (0.1, 2.1): variances, divisors
    seed: int = 0
    bounds: list[int] | None = None  # integer values drawn from [low, high): indices, shift amounts


@dataclass
class Node:
    outs: list[str]
    expr: str  # Python expression with $0, $1 ... for `args`
    args: list[str]
    tag: str  # op family, for the op mix table


@dataclass
class Case:
    inputs: list[Input]
    nodes: list[Node]
    returns: list[str]
    seed: int = 0
    tags: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- rendering


def input_code(inp: Input) -> list[str]:
    """Lines that build `inp.name` from its own seeded generator."""
    shape = list(inp.shape)
    base = list(shape)
    if inp.layout == "transposed" and len(shape) >= 2:
        base[-1], base[-2] = base[-2], base[-1]
    elif inp.layout == "strided" and shape:
        base[-1] = 2 * base[-1]
    elif inp.layout == "expanded" and shape and shape[0] > 1:
        base[0] = 1
    n = inp.name
    lines = [f"g = torch.Generator().manual_seed({inp.seed})"]
    if inp.bounds is not None:
        low, high = inp.bounds
        lines.append(f"{n} = torch.randint({low}, {high}, {base}, generator=g, dtype=torch.{inp.dtype})")
    elif inp.dtype == "bool":
        lines.append(f"{n} = torch.rand({base}, generator=g) > 0.5")
    elif inp.dtype.startswith("int"):
        low = 1 if inp.positive else -5
        lines.append(f"{n} = torch.randint({low}, 6, {base}, generator=g, dtype=torch.{inp.dtype})")
    else:
        if inp.positive:
            lines.append(f"{n} = (torch.rand({base}, generator=g) * 2 + 0.1).to(torch.{inp.dtype})")
        else:
            lines.append(f"{n} = (torch.randn({base}, generator=g) * 2).to(torch.{inp.dtype})")
        numel = math.prod(base)
        if inp.special and numel >= 2:
            rng = random.Random(inp.seed)
            k = min(numel, rng.randint(1, 4))
            idx = sorted(rng.sample(range(numel), k))
            vals = [rng.choice(SPECIALS) for _ in idx]
            lines.append(f"{n}.view(-1)[{idx}] = torch.tensor([{', '.join(vals)}], dtype=torch.{inp.dtype})")
    if inp.layout == "transposed" and len(shape) >= 2:
        lines.append(f"{n} = {n}.transpose(-1, -2)")
    elif inp.layout == "strided" and shape:
        lines.append(f"{n} = {n}[..., ::2]")
    elif inp.layout == "expanded" and shape and shape[0] > 1:
        lines.append(f"{n} = {n}.expand({shape})")
    return lines


def node_code(node: Node) -> str:
    expr = re.sub(r"\$(\d+)", lambda m: node.args[int(m.group(1))], node.expr)
    if len(node.outs) == 1 and not node.expr.endswith("#tuple"):
        return f"{node.outs[0]} = {expr}"
    return f"{', '.join(node.outs)}, = {expr.removesuffix('#tuple').rstrip()}"


def render(case: Case) -> str:
    """Source defining `Model` and `make_inputs()` for `case`."""
    names = [i.name for i in case.inputs]
    lines = [
        "import torch",
        "import torch.nn.functional as F",
        "",
        "",
        "class Model(torch.nn.Module):",
        f"    def forward(self, {', '.join(names)}):",
    ]
    lines += ["        " + node_code(n) for n in case.nodes]
    lines.append(f"        return ({', '.join(case.returns)},)")
    lines += ["", "", "def make_inputs():"]
    for inp in case.inputs:
        lines += ["    " + line for line in input_code(inp)]
    lines.append(f"    return ({', '.join(names)},)")
    return "\n".join(lines) + "\n"


def load(source: str) -> tuple:
    """(Model class, make_inputs) defined by `source`."""
    namespace: dict = {}
    exec(compile(source, "<fuzz case>", "exec"), namespace)
    return namespace["Model"], namespace["make_inputs"]


def eager_check(case: Case):
    """The eager outputs of `case`, or None if eager rejects it (then the case is invalid)."""
    import torch

    try:
        model, make_inputs = load(render(case))
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = model()(*make_inputs())
    except Exception:
        return None
    if not all(isinstance(o, torch.Tensor) for o in out):
        return None
    if any(o.numel() > 4096 for o in out):
        return None
    return out


# ---------------------------------------------------------------- generation


class _Builder:
    """Grows a case one eagerly validated node at a time."""

    def __init__(self, rng: random.Random, seed: int):
        import torch

        self.torch = torch
        self.rng = rng
        self.case = Case(inputs=[], nodes=[], returns=[], seed=seed)
        self.env: dict = {}  # name -> eager tensor
        self.count = 0

    # values -------------------------------------------------------------
    def fresh_name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def new_input(self, shape, dtype=None, positive=False, layout=None, bounds=None) -> str:
        rng = self.rng
        dtype = dtype or rng.choices(DTYPES, weights=(6, 2, 2, 1, 1, 1))[0]
        if layout is None:
            layout = rng.choices(("contiguous", "transposed", "strided", "expanded"), weights=(6, 2, 1, 1))[0]
        inp = Input(
            name=self.fresh_name("x"), shape=list(shape), dtype=dtype, layout=layout,
            special=dtype in FLOATS and not positive and rng.random() < 0.3,
            positive=positive, seed=rng.randrange(1 << 30), bounds=list(bounds) if bounds else None,
        )
        ns = {"torch": self.torch}
        for line in input_code(inp):
            exec(line, ns)
        self.case.inputs.append(inp)
        self.env[inp.name] = ns[inp.name]
        return inp.name

    def random_shape(self) -> list[int]:
        rank = self.rng.choices((1, 2, 3, 4), weights=(1, 4, 3, 1))[0]
        shape = [self.rng.choice((1, 2, 3, 4, 5, 8)) for _ in range(rank)]
        if self.rng.random() < 0.08:  # zero-size inputs (issue 21): every kernel must skip or mask them
            shape[self.rng.randrange(rank)] = 0
        return shape

    def pick(self, pred=lambda t: True) -> str | None:
        names = [n for n, t in self.env.items() if pred(t)]
        if not names:
            return None
        # Prefer recent values: graphs become chains rather than fans of inputs.
        weights = [1 + i for i in range(len(names))]
        return self.rng.choices(names, weights=weights)[0]

    def broadcast_partner(self, t, dtype=None, positive=False) -> str:
        """An existing value or a fresh input whose shape broadcasts against `t` (a fresh one if `positive`)."""
        rng = self.rng
        if rng.random() < 0.5 and not positive:
            same = self.pick(lambda u: tuple(u.shape) == tuple(t.shape) and (dtype is None or str(u.dtype)[6:] == dtype))
            if same is not None:
                return same
        shape = list(t.shape)
        r = rng.random()
        if r < 0.3 and shape:
            shape = shape[rng.randrange(len(shape)):]  # trailing suffix
        elif r < 0.6:
            shape = [1 if rng.random() < 0.4 else s for s in shape]
        return self.new_input(shape, dtype, positive=positive)

    # nodes --------------------------------------------------------------
    def try_node(self, expr: str, args: list[str], tag: str) -> bool:
        saved_inputs = len(self.case.inputs)
        saved_env = dict(self.env)
        ns = {"torch": self.torch, "F": self.torch.nn.functional}
        ns.update(self.env)
        code = re.sub(r"\$(\d+)", lambda m: args[int(m.group(1))], expr.removesuffix("#tuple"))
        try:
            with self.torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # std() with one element and the like: valid, eager warns
                value = eval(code, ns)
        except Exception:
            value = None
        ok = value is not None
        values = list(value) if isinstance(value, (tuple, list)) else [value]
        if ok and not all(isinstance(v, self.torch.Tensor) and v.numel() <= 2048 for v in values):
            ok = False
        if not ok:
            del self.case.inputs[saved_inputs:]
            self.env = saved_env
            return False
        outs = [self.fresh_name("v") for _ in values]
        if isinstance(value, (tuple, list)) and not expr.endswith("#tuple"):
            expr += " #tuple"
        self.case.nodes.append(Node(outs=outs, expr=expr, args=list(args), tag=tag))
        for n, v in zip(outs, values):
            self.env[n] = v
        return True


def _dim(rng, t):
    return rng.randrange(-t.dim(), t.dim()) if t.dim() else 0


def _scalar(rng):
    # 0.1 is no f16/bf16 value: eager's CPU add/sub/fmod round it to the tensor's dtype first, mul/div do not
    return rng.choice(("2", "0.5", "-1.5", "0", "3", "-2", "1e-3", "True", "0.1"))


UNARY_FLOAT = (
    "torch.exp($0)", "torch.log($0)", "torch.sqrt($0)", "torch.rsqrt($0)", "torch.sin($0)", "torch.cos($0)",
    "torch.erf($0)", "torch.floor($0)", "torch.ceil($0)", "torch.reciprocal($0)", "torch.sigmoid($0)",
    "torch.tanh($0)", "torch.sign($0)", "F.silu($0)", "F.gelu($0)", "F.gelu($0, approximate='tanh')",
    "F.hardsigmoid($0)", "F.hardswish($0)", "F.leaky_relu($0, 0.1)", "F.hardtanh($0)", "torch.exp2($0)",
    "torch.log2($0)", "torch.pow($0, 2)", "torch.pow($0, 0.5)", "torch.pow($0, -1)", "torch.pow($0, 3)",
    "torch.pow($0, -0.5)",
)
UNARY_ANY = (
    "-$0", "torch.abs($0)", "torch.relu($0)", "torch.logical_not($0)", "torch.bitwise_not($0)", "$0.clone()",
    "torch.clamp($0, -1, 2)", "torch.clamp_min($0, 0.5)", "torch.clamp_max($0, 1)", "torch.atan($0)",
)
BINARY = (
    "$0 + $1", "torch.add($0, $1, alpha=2)", "$0 - $1", "torch.sub($0, $1, alpha=0.5)", "$0 * $1", "$0 / $1",
    "torch.maximum($0, $1)", "torch.minimum($0, $1)", "$0 == $1", "$0 != $1", "$0 < $1", "$0 <= $1",
    "$0 > $1", "$0 >= $1", "torch.logical_and($0, $1)", "torch.logical_or($0, $1)", "torch.logical_xor($0, $1)",
    "$0 & $1", "$0 | $1", "$0 ^ $1", "torch.div($0, $1, rounding_mode='trunc')",
    "torch.div($0, $1, rounding_mode='floor')", "torch.atan2($0, $1)", "torch.where($0 > 0, $0, $1)",
    "torch.floor_divide($0, $1)", "torch.remainder($0, $1)", "torch.fmod($0, $1)",
)
# Integer division by zero raises in eager: their integer divisors are drawn non-zero.
INT_DIVISION = ("rounding_mode", "floor_divide", "remainder", "fmod")
SCALAR = (
    "$0 + {s}", "$0 - {s}", "{s} - $0", "$0 * {s}", "$0 / {s}", "$0 > {s}", "$0 == {s}", "$0 <= {s}",
    "torch.where($0 > 0, $0, {s})", "torch.where($0 > 0, {s}, $0)", "$0.masked_fill($0 < 0, {s})",
    "torch.add($0, {s}, alpha=2)", "torch.maximum($0, torch.tensor({s}))",
)
REDUCE = (
    "torch.sum($0, {d}, keepdim={k})", "torch.mean($0, {d}, keepdim={k})", "torch.amax($0, {d}, keepdim={k})",
    "torch.amin($0, {d}, keepdim={k})", "torch.prod($0, {d}, keepdim={k})", "torch.max($0, {d}, keepdim={k})",
    "torch.min($0, {d}, keepdim={k})", "torch.argmax($0, {d}, keepdim={k})", "torch.argmin($0, {d}, keepdim={k})",
    "torch.var($0, {d}, keepdim={k})", "torch.std($0, {d}, keepdim={k})", "torch.logsumexp($0, {d}, keepdim={k})",
    "torch.sum($0, ({d}, {d2}), keepdim={k})", "$0.sum()", "$0.amax()", "$0.mean()",
    "torch.var_mean($0, {d}, keepdim={k})",
)


def _gen_unary(b: _Builder):
    a = b.pick()
    return b.try_node(b.rng.choice(UNARY_FLOAT + UNARY_ANY), [a], "unary")


def _gen_cast(b: _Builder):
    a = b.pick()
    dtype = b.rng.choice(DTYPES)
    form = b.rng.choice(("$0.to(torch.{t})", "$0.to(torch.{t})", "$0.float()", "$0.bool()"))
    return b.try_node(form.format(t=dtype), [a], "cast")


def _gen_binary(b: _Builder):
    a = b.pick()
    t = b.env[a]
    other = b.broadcast_partner(t, dtype=str(t.dtype)[6:] if b.rng.random() < 0.6 else None)
    args = [a, other] if b.rng.random() < 0.8 else [other, a]
    expr = b.rng.choice(BINARY)
    if any(k in expr for k in INT_DIVISION) and not t.is_floating_point() and t.dtype != b.torch.bool:
        args = [a, b.broadcast_partner(t, dtype=str(t.dtype)[6:], positive=True)]
        if b.rng.random() < 0.5:
            expr = expr.replace("$1", "(-$1)")  # negative divisors too
    tag = expr.split("(")[0] if "(" in expr else expr.split()[1]
    return b.try_node(expr, args, "binary:" + tag)


def _gen_scalar(b: _Builder):
    a = b.pick()
    return b.try_node(b.rng.choice(SCALAR).format(s=_scalar(b.rng)), [a], "scalar")


def _gen_where(b: _Builder):
    c = b.pick(lambda t: t.dtype == b.torch.bool) or b.pick()
    t = b.env[c]
    x = b.broadcast_partner(t)
    y = b.broadcast_partner(t, dtype=str(b.env[x].dtype)[6:])
    cond = "$0" if b.env[c].dtype == b.torch.bool else "$0 > 0"
    return b.try_node(f"torch.where({cond}, $1, $2)", [c, x, y], "where")


def _gen_reduce(b: _Builder):
    a = b.pick(lambda t: t.dim() >= 1)
    if a is None:
        return False
    t = b.env[a]
    d, d2 = _dim(b.rng, t), _dim(b.rng, t)
    expr = b.rng.choice(REDUCE).format(d=d, d2=d2, k=b.rng.choice((True, False)))
    return b.try_node(expr, [a], "reduce:" + expr.split("(")[0].split(".")[-1])


SCAN = (
    "torch.cumsum($0, {d})", "$0.cumsum({d}) * 2", "torch.cumprod($0, {d})", "torch.cumsum($0, {d}, dtype=torch.{t})",
    "torch.cumprod($0, {d}, dtype=torch.{t})",
    # a decoder's position ids from its mask
    "(($0 > 0).long().cumsum({d}) - 1).masked_fill($0 <= 0, 1)",
)


def _gen_scan(b: _Builder):
    """cumsum/cumprod along any dim (a dtype= argument sometimes), and the mask/position chain around one."""
    a = b.pick(lambda t: t.dim() >= 1)
    if a is None:
        return False
    t = b.env[a]
    expr = b.rng.choice(SCAN).format(d=_dim(b.rng, t), t=b.rng.choice(("int32", "int64", "float32", "float64", "bfloat16")))
    return b.try_node(expr, [a], "scan:" + ("cumprod" if "cumprod" in expr else "cumsum"))


def _gen_norm(b: _Builder):
    rng = b.rng
    a = b.pick(lambda t: t.dim() >= 1 and t.is_floating_point())
    if a is None:
        a = b.new_input(b.random_shape(), rng.choice(FLOATS))
    t = b.env[a]
    dt = str(t.dtype)[6:]
    kind = rng.choice(("softmax", "log_softmax", "layer_norm", "rms_norm", "group_norm", "batch_norm"))
    if kind in ("softmax", "log_softmax"):
        return b.try_node(f"torch.{kind}($0, {_dim(rng, t)})", [a], kind)
    if kind in ("layer_norm", "rms_norm"):
        k = rng.randint(1, max(1, min(2, t.dim())))
        norm = list(t.shape[-k:])
        args = [a]
        if rng.random() < 0.6:
            args.append(b.new_input(norm, dt, layout="contiguous"))
            if kind == "layer_norm" and rng.random() < 0.7:
                args.append(b.new_input(norm, dt, layout="contiguous"))
        extra = "".join(f", ${i}" for i in range(1, len(args)))
        return b.try_node(f"F.{kind}($0, {tuple(norm)}{extra})", args, kind)
    if t.dim() < 2:
        return False
    c = t.shape[1]
    if kind == "group_norm":
        g = rng.choice([d for d in (1, 2, 3, 4) if c % d == 0])
        args = [a]
        if rng.random() < 0.6:
            args += [b.new_input([c], dt, layout="contiguous"), b.new_input([c], dt, layout="contiguous")]
        extra = "".join(f", ${i}" for i in range(1, len(args)))
        return b.try_node(f"F.group_norm($0, {g}{extra})", args, kind)
    mean = b.new_input([c], dt, layout="contiguous")
    var = b.new_input([c], dt, positive=True, layout="contiguous")
    return b.try_node("F.batch_norm($0, $1, $2, training=False)", [a, mean, var], kind)


def _gen_view(b: _Builder):
    rng = b.rng
    a = b.pick()
    t = b.env[a]
    shape = list(t.shape)
    r = t.dim()
    options = [f"$0.unsqueeze({rng.randint(-r - 1, r)})", "$0.contiguous()", "$0.flatten()"]
    if r >= 2:
        i, j = rng.sample(range(r), 2)
        perm = list(range(r))
        rng.shuffle(perm)
        options += [f"$0.transpose({i}, {j})", f"$0.permute({tuple(perm)})", "$0.mT"]
        if r == 2:
            options.append("$0.t()")
        options.append(f"$0.reshape({shape[0] * shape[1]}, {', '.join(map(str, shape[2:]))})".replace(", )", ")"))
        options.append(f"$0.view({shape[0] * shape[1]}{''.join(', ' + str(s) for s in shape[2:])})")
    if r >= 1:
        d = _dim(rng, t)
        n = shape[d]
        options.append(f"$0.squeeze({d})")
        if n > 1:
            start = rng.randrange(n - 1)
            options.append(f"$0.narrow({d}, {start}, {rng.randint(1, n - start)})")
            options.append(f"$0.select({d}, {rng.randrange(n)})")
            options.append("$0[..., 1:]" if d in (-1, r - 1) else "$0[1:]")
        ones = [i for i, s in enumerate(shape) if s == 1]
        if ones:
            new = list(shape)
            new[rng.choice(ones)] = rng.choice((2, 3))
            options.append(f"$0.expand({tuple(new)})")
    return b.try_node(rng.choice(options), [a], "view")


def _gen_split(b: _Builder):
    rng = b.rng
    a = b.pick(lambda t: t.dim() >= 1 and max(t.shape) > 1)
    if a is None:
        return False
    t = b.env[a]
    dims = [d for d in range(t.dim()) if t.shape[d] > 1]
    d = rng.choice(dims)
    n = t.shape[d]
    cut = rng.randint(1, n - 1)
    kind = rng.choice(("split", "split_sizes", "chunk", "unbind"))
    if kind == "split":
        expr = f"torch.split($0, {cut}, {d})"
    elif kind == "split_sizes":
        expr = f"torch.split($0, [{cut}, {n - cut}], {d})"
    elif kind == "chunk":
        expr = f"torch.chunk($0, {rng.randint(2, 3)}, {d})"
    else:
        expr = f"torch.unbind($0, {d})"
    return b.try_node(expr, [a], kind)


def _gen_cat(b: _Builder):
    rng = b.rng
    a = b.pick(lambda t: t.dim() >= 1)
    if a is None:
        return False
    t = b.env[a]
    d = rng.randrange(t.dim())
    parts = [a]
    for _ in range(rng.randint(1, 3)):
        same = [n for n, u in b.env.items() if u.dim() == t.dim() and n != a
                and all(u.shape[i] == t.shape[i] for i in range(t.dim()) if i != d)]
        if same and rng.random() < 0.6:
            parts.append(rng.choice(same))
        else:
            shape = list(t.shape)
            shape[d] = rng.randint(1, 3)
            parts.append(b.new_input(shape, str(t.dtype)[6:] if rng.random() < 0.8 else None))
    if rng.random() < 0.2:
        return b.try_node(f"torch.stack([{', '.join(f'${i}' for i in range(len(parts)))}], {d})",
                          [a] + [a] * (len(parts) - 1), "stack")
    return b.try_node(f"torch.cat([{', '.join(f'${i}' for i in range(len(parts)))}], {d})", parts, "cat")


def _gen_matmul(b: _Builder):
    rng = b.rng
    a = b.pick(lambda t: t.dim() >= 1 and t.is_floating_point())
    if a is None:
        a = b.new_input([rng.randint(1, 4), rng.randint(1, 8)], rng.choice(FLOATS))
    t = b.env[a]
    dt = str(t.dtype)[6:]
    k = t.shape[-1]
    n = rng.randint(1, 6)
    if rng.random() < 0.5:
        w = b.new_input([n, k], dt, layout=rng.choice(("contiguous", "transposed")))
        args = [a, w]
        if rng.random() < 0.6:
            args.append(b.new_input([n], dt, layout="contiguous"))
        extra = ", $2" if len(args) == 3 else ""
        return b.try_node(f"F.linear($0, $1{extra})", args, "linear")
    w = b.new_input([k, n], dt)
    return b.try_node("$0 @ $1", [a, w], "matmul")


# ------------------------------------------- op families of the kernels added after issue 9

UNARY_MORE = (
    "torch.expm1($0)", "torch.log1p($0)", "torch.log10($0)", "torch.tan($0)", "torch.sinh($0)", "torch.cosh($0)",
    "torch.asinh($0)", "torch.acosh($0)", "torch.atanh($0)", "torch.asin($0)", "torch.acos($0)",
    "torch.round($0)", "torch.trunc($0)", "torch.frac($0)", "F.elu($0)", "F.elu($0, alpha=0.5)", "F.celu($0, 2.0)",
    "F.selu($0)", "F.softplus($0)", "F.softplus($0, beta=2, threshold=1)", "F.mish($0)", "torch.logit($0)",
    "torch.logit($0, eps=0.1)", "torch.nan_to_num($0)", "torch.nan_to_num($0, nan=0.5, posinf=2.0, neginf=-3.0)",
    "F.threshold($0, 0.5, -1.0)", "F.relu6($0)", "torch.isnan($0)", "torch.isinf($0)", "torch.signbit($0)",
    "torch.pow(2, $0)", "torch.pow(0.5, $0)", "torch.pow($0, 0)", "torch.clamp($0, min=-0.5)",
    "torch.clamp($0, max=0)", "torch.square($0)", "torch.erfc($0)", "torch.sgn($0)",
)
BINARY_MORE = (
    "torch.copysign($0, $1)", "torch.fmax($0, $1)", "torch.fmin($0, $1)", "torch.xlogy($0, $1)",
    "torch.heaviside($0, $1)", "torch.logaddexp($0, $1)", "torch.lerp($0, $1, 0.3)", "torch.pow($0, $1)",
    "torch.clamp($0, $1)", "torch.clamp($0, max=$1)", "torch.hypot($0, $1)", "torch.nextafter($0, $1)",
    "torch.masked_fill($0, $1 > 0, torch.tensor(-1.5))", "torch.bitwise_and($0, $1)", "torch.bitwise_or($0, $1)",
)
TERNARY_MORE = (
    "torch.lerp($0, $1, $2)", "torch.addcmul($0, $1, $2, value=0.5)", "torch.addcdiv($0, $1, $2, value=-2)",
    "torch.clamp($0, $1, $2)", "torch.where($0 > $1, $2, $0)",
)
# Integer operands: dividends hold zeros and negatives, divisors are non-zero (eager raises on
# an integer division by zero), shift amounts lie in [0, bits of int32).
INT_SCALAR = (
    "$0 // {s}", "$0 % {s}", "torch.fmod($0, {s})", "torch.remainder($0, {s})", "torch.div($0, {s}, rounding_mode='trunc')",
    "torch.div($0, {s}, rounding_mode='floor')", "torch.div($0, {s})", "$0 & {s}", "$0 | {s}", "$0 ^ {s}",
    "$0 << {a}", "$0 >> {a}", "torch.bitwise_left_shift($0, {a})", "torch.pow($0, {a})", "$0 ** 2",
    "torch.clamp($0, -2, {s})",
)
INT_TENSOR = (
    "$0 // $1", "$0 % $1", "torch.fmod($0, $1)", "torch.remainder($0, $1)", "torch.div($0, $1, rounding_mode='trunc')",
    "torch.div($0, $1, rounding_mode='floor')", "torch.div($0, $1)", "torch.floor_divide($0, $1)",
)
INT_SHIFT = ("$0 << $1", "$0 >> $1", "torch.bitwise_right_shift($0, $1)", "torch.pow($0, $1)")


def _gen_elementwise_more(b: _Builder):
    """Remainder, shifts, integer pow, activations, tensor clamp bounds, lerp/addcmul and friends."""
    rng = b.rng
    r = rng.random()
    if r < 0.35:
        a = b.pick(lambda t: t.dtype in (b.torch.int32, b.torch.int64)) if rng.random() < 0.7 else None
        if a is None:
            a = b.new_input(b.random_shape(), rng.choice(("int32", "int64")))
        t = b.env[a]
        dt = str(t.dtype)[6:]
        k = rng.random()
        if k < 0.4:
            expr = rng.choice(INT_SCALAR).format(s=rng.choice(("3", "-3", "2", "-1", "7")), a=rng.randint(0, 5))
            return b.try_node(expr, [a], "int:" + expr.split("(")[0].strip("$0 ").split(" ")[0])
        if k < 0.75:
            other = b.broadcast_partner(t, dtype=dt, positive=True)
            expr = rng.choice(INT_TENSOR)
            if rng.random() < 0.5:
                expr = expr.replace("$1", "(-$1)")
            return b.try_node(expr, [a, other], "int:" + expr.split("(")[0].strip("$0 ").split(" ")[0])
        shape = list(t.shape)
        amount = b.new_input([1 if rng.random() < 0.4 else s for s in shape], dt, bounds=(0, 8))
        expr = rng.choice(INT_SHIFT)
        return b.try_node(expr, [a, amount], "int:shift")
    a = b.pick()
    t = b.env[a]
    if r < 0.65:
        return b.try_node(rng.choice(UNARY_MORE), [a], "unary+")
    other = b.broadcast_partner(t, dtype=str(t.dtype)[6:] if rng.random() < 0.8 else None)
    if r < 0.88:
        return b.try_node(rng.choice(BINARY_MORE), [a, other], "binary+")
    third = b.broadcast_partner(t, dtype=str(t.dtype)[6:] if rng.random() < 0.8 else None)
    return b.try_node(rng.choice(TERNARY_MORE), [a, other, third], "ternary")


def _gen_pad(b: _Builder):
    """constant_pad_nd (negative pads crop) and F.pad's reflect/replicate/circular modes."""
    rng = b.rng
    a = b.pick(lambda t: t.dim() >= 1)
    if a is None:
        return False
    t = b.env[a]
    mode = rng.choices(("constant", "reflect", "replicate", "circular"), weights=(4, 1, 1, 1))[0]
    k = rng.randint(1, min(t.dim(), 3 if mode == "constant" else 2))
    pads = []
    for d in range(k):
        size = t.shape[-1 - d]
        lo = -min(size - 1, 1) if mode == "constant" else 0
        pads += [rng.randint(lo, 2), rng.randint(lo, 2)]
    if mode == "constant":
        value = rng.choice(("", ", value=0.0", ", value=-1.5", ", value=2", ", value=float('-inf')"))
        return b.try_node(f"F.pad($0, {pads}{value})", [a], "pad")
    return b.try_node(f"F.pad($0, {pads}, mode='{mode}')", [a], "pad:" + mode)


def _gen_cat_computed(b: _Builder):
    """cat of computed pieces (an op on each piece inside the cat) and inputs, at any dim."""
    rng = b.rng
    a = b.pick(lambda t: t.dim() >= 1)
    if a is None:
        return False
    t = b.env[a]
    d = _dim(rng, t)
    shape = list(t.shape)
    shape[d] = rng.randint(1, 3)
    other = b.new_input(shape, str(t.dtype)[6:])
    f = rng.choice(("$0 * 2", "torch.relu($0)", "-$0", "$0 + $1.sum()", "$0.to(torch.float32)"))
    g = rng.choice(("$1", "torch.abs($1)", "$1 - 1"))
    return b.try_node(f"torch.cat([{f}, {g}, $0], {d})", [a, other], "cat:computed")


def _value_and_dim(b: _Builder):
    """(a value of rank >= 1, one of its dims, that dim's size), or None if there is none."""
    a = b.pick(lambda t: t.dim() >= 1)
    if a is None:
        return None
    d = b.rng.randrange(b.env[a].dim())
    return a, d, b.env[a].shape[d]


def _gen_empty_piece(b: _Builder):
    """A slice that is empty (start = end, or start past the end) as a piece of a cat beside a non-empty one (issue 21)."""
    rng = b.rng
    picked = _value_and_dim(b)
    if picked is None:
        return False
    a, d, n = picked
    start = rng.choice((0, n // 2, n, n + 1))
    stop = rng.choice(("", str(start))) if start >= n else str(start)
    piece = f"$0[{':, ' * d}{start}:{stop}]"
    piece = rng.choice((piece, f"({piece} * 2)", f"torch.abs({piece})"))
    other = rng.choice(("$0", "($0 - 1)", "torch.neg($0)"))
    pieces = [piece, other] if rng.random() < 0.5 else [other, piece]
    return b.try_node(f"torch.cat([{', '.join(pieces)}], {d})", [a], "cat:empty-piece")


def _gen_pool(b: _Builder):
    rng = b.rng
    kind = rng.choice(("avg_pool1d", "max_pool1d", "avg_pool2d", "max_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
                       "avg_pool3d", "max_pool3d"))
    rank = {"1d": 3, "2d": 4, "3d": 5}[kind[-2:]]
    a = b.pick(lambda t: t.dim() in (rank - 1, rank) and t.is_floating_point() and min(t.shape) >= 2)
    if a is None or rng.random() < 0.5:
        shape = [rng.randint(1, 2), rng.randint(1, 3)] + [rng.randint(2, 7 if rank < 5 else 4) for _ in range(rank - 2)]
        a = b.new_input(shape, rng.choices(FLOATS, weights=(4, 1, 1))[0])
    if kind.startswith("adaptive"):
        out = rng.randint(1, 3)
        return b.try_node(f"F.{kind}($0, {out})", [a], "pool:" + kind)
    k = rng.randint(1, 3)
    stride = rng.choice(("", f", stride={rng.randint(1, 3)}"))
    pad = rng.choice(("", f", padding={rng.randint(0, k // 2)}"))
    ceil = rng.choice(("", ", ceil_mode=True"))
    if kind.startswith("avg"):
        extra = rng.choice(("", ", count_include_pad=False"))
    else:  # dilated windows: the window spans dilation * (k - 1) + 1 elements
        extra = rng.choice(("", "", f", dilation={rng.randint(2, 3)}"))
    return b.try_node(f"F.{kind}($0, {k}{stride}{pad}{ceil}{extra})", [a], "pool:" + kind)


def _index_input(b: _Builder, shape, n: int, negative: bool = False, dtype: str = "int64") -> str:
    """Indices into a dim of size `n` (duplicates likely; negative ones where the op takes them)."""
    return b.new_input(shape, dtype, layout="contiguous", bounds=(-n if negative else 0, n))


def _gen_index(b: _Builder):
    """embedding, index_select, gather, advanced indexing, scatter family, arange/full/tril/triu."""
    rng = b.rng
    kind = rng.choice(("embedding", "index_select", "gather", "index", "index2", "scatter", "index_put", "factory"))
    if kind == "embedding":
        n, dim = rng.randint(1, 7), rng.randint(1, 5)
        w = b.new_input([n, dim], rng.choice(FLOATS), layout="contiguous")
        idx = _index_input(b, [rng.randint(1, 3), rng.randint(1, 4)][: rng.randint(1, 2)], n)
        pad = rng.choice(("", f", padding_idx={rng.randrange(n)}"))
        return b.try_node(f"F.embedding($1, $0{pad})", [w, idx], "embedding")
    a = b.pick(lambda t: t.dim() >= 1 and min(t.shape) >= 1)
    if a is None:  # as picked: no empty dim (indices into it, index shapes drawn below it)
        a = b.new_input([max(1, s) for s in b.random_shape()] or [1])
    t = b.env[a]
    d = _dim(rng, t)
    n = t.shape[d]
    if kind == "index_select":
        idx = _index_input(b, [rng.randint(1, 5)], n, dtype=rng.choice(("int64", "int32")))
        return b.try_node(f"torch.index_select($0, {d}, $1)", [a, idx], "index_select")
    if kind == "gather":
        shape = [rng.randint(1, s) for s in t.shape]
        shape[d] = rng.randint(1, 4)
        idx = _index_input(b, shape, n)
        return b.try_node(f"torch.gather($0, {d}, $1)", [a, idx], "gather")
    if kind == "index":
        idx = _index_input(b, [rng.randint(1, 3) for _ in range(rng.randint(1, 2))], t.shape[0], negative=True)
        form = rng.choice(("$0[$1]", "$0[$1] * 2"))
        if t.dim() >= 2 and rng.random() < 0.5:
            idx = _index_input(b, [rng.randint(1, 4)], t.shape[1], negative=True)
            form = "$0[:, $1]"
        return b.try_node(form, [a, idx], "index.Tensor")
    if kind == "index2" and t.dim() >= 2:
        i = _index_input(b, [rng.randint(1, 3), 1], t.shape[0], negative=True)
        j = _index_input(b, [rng.randint(1, 3)], t.shape[1], negative=True)
        return b.try_node("$0[$1, $2]", [a, i, j], "index.Tensor")
    if kind == "scatter":
        shape = [rng.randint(1, s) for s in t.shape]
        idx = _index_input(b, shape, n)
        src = b.new_input(shape, str(t.dtype)[6:])
        op = rng.choice((
            f"torch.scatter($0, {d}, $1, $2)", f"torch.scatter_add($0, {d}, $1, $2)",
            f"torch.scatter($0, {d}, $1, 1.5)",
            f"torch.scatter_reduce($0, {d}, $1, $2, reduce='{rng.choice(('sum', 'prod', 'amax', 'amin', 'mean'))}', "
            f"include_self={rng.choice((True, False))})",
        ))
        return b.try_node(op, [a, idx, src], "scatter")
    if kind == "index_put":
        idx = _index_input(b, [rng.randint(1, 4)], t.shape[0], negative=True)
        vals = b.new_input([1] + list(t.shape[1:]), str(t.dtype)[6:])
        acc = rng.choice((True, False)) if rng.random() < 0.5 else False  # duplicates without accumulate: any write wins
        if not acc:
            return b.try_node("torch.index_put($0, ($1,), torch.tensor(-2, dtype=$0.dtype))", [a, idx], "index_put")
        return b.try_node("torch.index_put($0, ($1,), $2.expand($1.shape[0], *$0.shape[1:]), accumulate=True)",
                          [a, idx, vals], "index_put")
    shape = list(t.shape)
    r = t.dim()
    form = rng.choice((
        f"$0 + torch.arange({shape[-1]})", f"$0 * torch.arange(1, {2 * shape[-1] + 1}, 2, dtype=torch.float32)",
        f"$0 + torch.full({shape}, 2.5)", f"$0 * torch.ones({shape[-1]}, dtype=$0.dtype)",
        f"torch.zeros({shape}, dtype=torch.int64) + $0", "torch.full_like($0, 3)",
        *( (f"torch.tril($0, {rng.randint(-1, 1)})", f"torch.triu($0, {rng.randint(-1, 1)})") if r >= 2 else ()),
    ))
    return b.try_node(form, [a], "factory")


def _gen_gemm(b: _Builder):
    """matmul/linear/bmm/addmm with the epilogues GEMM kernels fuse: bias, gelu, silu * up, residual, cast."""
    rng = b.rng
    dt = rng.choices(FLOATS, weights=(4, 1, 1))[0]
    m, k, n = rng.randint(1, 6), rng.choice((1, 2, 3, 5, 8, 16)), rng.randint(1, 6)
    batch = [rng.randint(1, 3)] if rng.random() < 0.4 else []
    x = b.pick(lambda t: t.dim() >= 2 and t.is_floating_point() and str(t.dtype)[6:] == dt) if rng.random() < 0.3 else None
    if x is None:
        x = b.new_input(batch + [m, k], dt)
    else:
        k = b.env[x].shape[-1]
    kind = rng.choice(("linear", "matmul", "bmm", "addmm", "swiglu"))
    if kind in ("linear", "swiglu"):
        w = b.new_input([n, k], dt, layout=rng.choice(("contiguous", "transposed")))
        if kind == "swiglu":
            up = b.new_input([n, k], dt, layout="contiguous")
            if not b.try_node("F.silu(F.linear($0, $1)) * F.linear($0, $2)", [x, w, up], "gemm:swiglu"):
                return False
        else:
            args = [x, w] + ([b.new_input([n], dt, layout="contiguous")] if rng.random() < 0.6 else [])
            if not b.try_node("F.linear($0, $1" + (", $2)" if len(args) == 3 else ")"), args, "gemm:linear"):
                return False
    elif kind == "bmm" and b.env[x].dim() == 3:
        w = b.new_input([b.env[x].shape[0], k, n], dt)
        expr = rng.choice(("torch.bmm($0, $1)", "torch.baddbmm($2, $0, $1, beta=0.5, alpha=2)"))
        args = [x, w] + ([b.new_input([1, n], dt)] if "$2" in expr else [])
        if not b.try_node(expr, args, "gemm:bmm"):
            return False
    elif kind == "addmm" and b.env[x].dim() == 2:
        w = b.new_input([k, n], dt, layout=rng.choice(("contiguous", "transposed")))
        bias = b.new_input(rng.choice(([n], [1, n], [b.env[x].shape[0], n])), dt)
        if not b.try_node("torch.addmm($2, $0, $1)", [x, w, bias], "gemm:addmm"):
            return False
    else:
        w = b.new_input([k, n], dt, layout=rng.choice(("contiguous", "transposed")))
        if not b.try_node("torch.matmul($0, $1)", [x, w], "gemm:matmul"):
            return False
    y = b.case.nodes[-1].outs[0]
    shape = list(b.env[y].shape)
    for _ in range(rng.randint(0, 2)):
        epi = rng.choice(("bias", "gelu", "silu", "residual", "cast", "relu", "scale"))
        if epi == "bias":
            ok = b.try_node("$0 + $1", [y, b.new_input([shape[-1]], dt, layout="contiguous")], "gemm:epilogue")
        elif epi == "residual":
            ok = b.try_node("$0 + $1", [y, b.new_input(shape, dt)], "gemm:epilogue")
        elif epi == "cast":
            ok = b.try_node(f"$0.to(torch.{rng.choice(FLOATS)})", [y], "gemm:epilogue")
        else:
            expr = {"gelu": "F.gelu($0)", "silu": "F.silu($0)", "relu": "torch.relu($0)", "scale": "$0 * 0.125"}[epi]
            ok = b.try_node(expr, [y], "gemm:epilogue")
        if not ok:
            break
        y = b.case.nodes[-1].outs[0]
    return True


def _gen_attention(b: _Builder):
    """softmax(q @ k^T * s + mask) @ v written out, and F.scaled_dot_product_attention."""
    rng = b.rng
    dt = rng.choices(FLOATS, weights=(4, 1, 1))[0]
    batch = [rng.randint(1, 2), rng.randint(1, 2)][: rng.randint(0, 2)]
    hq = batch[-1] if len(batch) == 2 else 1
    gqa = len(batch) == 2 and rng.random() < 0.3
    hkv = hq
    if gqa:
        hq = hkv * 2
        qb = batch[:-1] + [hq]
    else:
        qb = batch
    lq, lk, d, dv = rng.randint(1, 5), rng.randint(1, 6), rng.choice((1, 2, 3, 4, 8)), rng.choice((1, 2, 4, 5))
    q = b.new_input(qb + [lq, d], dt)
    k = b.new_input(batch + [lk, d], dt)
    v = b.new_input(batch + [lk, dv], dt)
    mask_kind = rng.choice(("none", "causal", "float", "bool"))
    args = [q, k, v]
    if mask_kind == "float":
        args.append(b.new_input([1 if rng.random() < 0.5 else lq, lk], dt))
    elif mask_kind == "bool":
        args.append(b.new_input([lq, lk], "bool", layout="contiguous"))
    if rng.random() < 0.5:
        opts = []
        if len(args) == 4:
            opts.append("attn_mask=$3")
        elif mask_kind == "causal":
            opts.append("is_causal=True")
        if rng.random() < 0.4:
            opts.append(f"scale={rng.choice((0.5, 0.125, 2.0))}")
        if gqa:
            opts.append("enable_gqa=True")
        return b.try_node(f"F.scaled_dot_product_attention($0, $1, $2{''.join(', ' + o for o in opts)})", args, "attn:sdpa")
    if gqa:
        return False
    scale = rng.choice(("", " * 0.5", f" * {1 / math.sqrt(d):.6g}", " / 2"))
    if not b.try_node(f"$0 @ $1.transpose(-2, -1){scale}", [q, k], "attn:explicit"):
        return False
    s = b.case.nodes[-1].outs[0]
    if mask_kind == "causal":
        ok = b.try_node(f"$0.masked_fill(torch.ones({lq}, {lk}, dtype=torch.bool).triu(1), float('-inf'))", [s], "attn:explicit")
    elif mask_kind == "float":
        ok = b.try_node("$0 + $1", [s, args[3]], "attn:explicit")
    elif mask_kind == "bool":
        ok = b.try_node("$0.masked_fill($1, -1e4)", [s, args[3]], "attn:explicit")
    else:
        ok = True
    if not ok:
        return False
    s = b.case.nodes[-1].outs[0]
    form = rng.choice(("torch.softmax($0, -1)", "torch.softmax($0.float(), -1).to($0.dtype)", "F.softmax($0, dim=-1)"))
    if not b.try_node(form, [s], "attn:explicit"):
        return False
    p = b.case.nodes[-1].outs[0]
    return b.try_node("$0 @ $1", [p, v], "attn:explicit")


def _gen_slice(b: _Builder):
    """Stepped, negative and out-of-range slices (bounds past either end are clamped by eager; issue 21)."""
    rng = b.rng
    picked = _value_and_dim(b)
    if picked is None:
        return False
    a, d, n = picked
    bound = lambda: rng.choice(("", str(rng.randint(-n - 2, n + 2))))  # noqa: E731
    step = rng.choice(("", "", ":2", ":3"))
    piece = f"$0[{':, ' * d}{bound()}:{bound()}{step}]"
    form = rng.choice(("{p}", "{p} * 2", "torch.exp({p})", "{p}.sum(-1)", "{p} + 1"))
    return b.try_node(form.format(p=piece), [a], "slice")


def _gen_gemm_prologue(b: _Builder):
    """A GEMM whose A or B operand (or both) is computed: a scale by a 0-d tensor, a broadcast row/column, a cast (issue 21)."""
    rng = b.rng
    dt = rng.choices(FLOATS, weights=(4, 1, 1))[0]
    # K = 0 (zeros, then the epilogue) and empty M or N now and then
    m, k, n = rng.choice((0, 1, 2, 3, 5, 6)), rng.choice((0, 1, 2, 3, 4, 8)), rng.choice((0, 1, 2, 4, 6))
    batch = [rng.randint(1, 2)] if rng.random() < 0.3 else []
    x = b.new_input(batch + [m, k], dt)
    w = b.new_input([n, k] if rng.random() < 0.5 else [k, n], dt, layout=rng.choice(("contiguous", "transposed")))
    linear = b.env[w].shape == (n, k) and (n != k or rng.random() < 0.5)

    def prologue(operand: str, shape: list[int], slot: int) -> tuple[str, list[str]]:
        kind = rng.choice(("none", "scalar0d", "sqrt0d", "row", "col", "cast", "act"))
        if kind == "none":
            return operand, []
        if kind in ("scalar0d", "sqrt0d"):
            s = b.new_input([], dt, positive=kind == "sqrt0d")
            return (f"({operand} * ${slot})" if kind == "scalar0d" else f"({operand} / torch.sqrt(${slot}))"), [s]
        if kind == "row":
            return f"({operand} + ${slot})", [b.new_input([shape[-1]], dt, layout="contiguous")]
        if kind == "col":
            return f"({operand} * ${slot})", [b.new_input([shape[-2], 1], dt, layout=rng.choice(("contiguous", "expanded")))]
        if kind == "cast":
            return f"{operand}.float().to(torch.{dt})", []
        return f"F.silu({operand})", []

    pa, extra_a = prologue("$0", b.env[x].shape, 2)
    pb, extra_b = prologue("$1", list(b.env[w].shape), 2 + len(extra_a))
    expr = f"F.linear({pa}, {pb})" if linear else f"torch.matmul({pa}, {pb})"
    if rng.random() < 0.4:
        expr = f"F.gelu({expr})" if rng.random() < 0.5 else f"({expr} + 1)"
    return b.try_node(expr, [x, w] + extra_a + extra_b, "gemm:prologue")


MIXED = (
    "torch.ops.aten.threshold_backward($0, $1, 0)", "torch.ops.aten.threshold_backward($1, $0, 0.5)",
    "torch.ops.aten.sigmoid_backward($0, $1)", "torch.ops.aten.tanh_backward($0, $1)",
    "torch.ops.aten.gelu_backward($0, $1)", "torch.ops.aten.silu_backward($0, $1)",
    "torch.ops.aten.hardtanh_backward($0, $1, -1.0, 1.0)", "torch.ops.aten.leaky_relu_backward($0, $1, 0.1, False)",
    "$0 + $1", "$0 * $1", "$0 / $1", "torch.where($0 > 0, $0, $1)", "torch.maximum($0, $1)", "$0 - $1.float()",
    "torch.add($0, $1, alpha=2)", "$0 ** $1", "torch.lerp($0.float(), $1.float(), 0.25)",
)


def _gen_mixed(b: _Builder):
    """Operands of different kinds (int, float, bool) in forward and backward ops: eager's type promotion decides (issue 21)."""
    rng = b.rng
    a = b.pick()
    t = b.env[a]
    kinds = {"int": ("int32", "int64"), "float": FLOATS, "bool": ("bool",)}
    mine = "bool" if t.dtype == b.torch.bool else "float" if t.is_floating_point() else "int"
    other = rng.choice([k for k in kinds if k != mine])
    partner = b.broadcast_partner(t, dtype=rng.choice(kinds[other]))
    args = [a, partner] if rng.random() < 0.5 else [partner, a]
    return b.try_node(rng.choice(MIXED), args, "mixed")


GENERATORS = (
    (_gen_unary, 5), (_gen_cast, 2), (_gen_binary, 6), (_gen_scalar, 3), (_gen_where, 1), (_gen_reduce, 3),
    (_gen_norm, 2), (_gen_view, 3), (_gen_split, 1.5), (_gen_cat, 1.5), (_gen_matmul, 1),
    (_gen_elementwise_more, 5), (_gen_pad, 1.5), (_gen_cat_computed, 1), (_gen_pool, 1.5), (_gen_index, 3),
    (_gen_gemm, 2), (_gen_attention, 1.5), (_gen_empty_piece, 0.5), (_gen_scan, 1),
    (_gen_slice, 1), (_gen_gemm_prologue, 1), (_gen_mixed, 1),
)


def generate(seed: int, max_nodes: int = 6, focus: tuple[str, ...] = ()) -> Case:
    """A random valid case; the same seed (and `focus`) always gives the same case.

    `focus`: generator names without `_gen_` (e.g. "gemm", "attention") drawn 10 times as often.
    """
    rng = random.Random(seed)
    unknown = set(focus) - {g.__name__.removeprefix("_gen_") for g, _ in GENERATORS}
    if unknown:
        raise ValueError(f"unknown op families {sorted(unknown)}")
    weights = [w * (10 if g.__name__.removeprefix("_gen_") in focus else 1) for g, w in GENERATORS]
    b = _Builder(rng, seed)
    b.new_input(b.random_shape())
    if rng.random() < 0.5:
        b.new_input(b.random_shape())
    target = rng.randint(1, max_nodes)
    tries = 0
    while len(b.case.nodes) < target and tries < 60:
        tries += 1
        fn = rng.choices([g for g, _ in GENERATORS], weights=weights)[0]
        fn(b)
    if not b.case.nodes:
        b.try_node("$0.clone()", [b.case.inputs[0].name], "unary")
    case = b.case
    # Return the last value and, sometimes, intermediate ones (multi-output groups); the rest is dead code.
    produced = [o for n in case.nodes for o in n.outs]
    returns = [produced[-1]]
    for o in produced[:-1]:
        if rng.random() < 0.25:
            returns.insert(0, o)
    case.returns = returns
    case.tags = [n.tag for n in case.nodes]
    return case


def clone(case: Case) -> Case:
    return copy.deepcopy(case)
