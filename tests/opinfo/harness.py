"""PyTorch's OpInfo samples through mlirfuse, compared with eager (issue 13, item 4).

For an OpInfo entry of `op_db` and a dtype, each sample input is wrapped in
`OpCall` (a module whose forward calls `opinfo.op`; the sample's tensors
are forward inputs, everything else constants), compiled with
`mlirfuse.compile`, run, and compared with eager by the fuzzer's
`compare_one` (values at the dtype's `assert_close` tolerances, dtypes,
shapes, NaN/inf positions, signed zeros; a low-precision result close to
eager run in float64 is no wrong answer either: a fused kernel rounds once,
eager after every op). Each sample gives an `Outcome`:

- `matched`: equal to eager, with its Triton launches, the torch ops it
  imported and those of them that stayed ATen calls;
- `unsupported`: `mlirfuse.UnsupportedModelError` (torch.export or
  torch-mlir could not take the op, or the runtime cannot run it): allowed;
- `mismatch` (a wrong answer) and `crash` (any other exception): bugs;
- `random`: the graph holds an op tagged `nondeterministic_seeded`, eager
  differs from itself under two seeds, or the OpInfo says its output is
  uninitialized memory: skipped, and listed;
- `eager-error`: eager rejects the sample, and `skipped`: the op takes
  no dtype tried here (complex only): skipped.

`Summary` adds outcomes up into the printed table, including the share of
the ops Inductor lowers to kernels that stay ATen calls here.
"""

from __future__ import annotations

import collections
import functools
import re
import traceback
import zlib
from dataclasses import asdict, dataclass, field

import torch
from torch.utils import _pytree as pytree

import mlirfuse
from mlirfuse.compiler import CompiledModule
from mlirfuse.frontend.importer import import_module
from mlirfuse.ir import ir
from mlirfuse.runtime.aten import aten_overload

try:  # `tests.opinfo.harness` (bench, worker) ...
    from ..fuzz.harness import compare_one, normalize
except ImportError:  # ... or `opinfo.harness` under pytest, whose sys.path holds tests/
    from fuzz.harness import compare_one, normalize

# Tensors above this many elements make a sample slow in Triton's interpreter and prove nothing more.
MAX_NUMEL = 4096
# An op without float32 samples is tried in the first of these it supports (bitwise ops, gcd ...).
OTHER_DTYPES = (torch.int64, torch.int32, torch.bool, torch.uint8, torch.int8, torch.int16, torch.float64)
# Ops Inductor lowers to templates or library calls, not to generated pointwise/reduction kernels:
# left out of the share of Inductor-lowered ops that stay ATen calls.
TEMPLATE_OPS = re.compile(
    r"^(mm|bmm|addmm|baddbmm|addbmm|matmul|linear|dot|vdot|mv|addmv|addr|_int_mm|_weight_int\w*mm\w*"
    r"|\w*conv\w*|\w*scaled_dot_product\w*|_flash_attention\w*|_efficient_attention\w*|_scaled_mm)$"
)


def op_key(opinfo) -> str:
    """`name` or `name.variant`: the id of an OpInfo entry."""
    return f"{opinfo.name}.{opinfo.variant_test_name}" if opinfo.variant_test_name else opinfo.name


@functools.cache
def opinfos() -> dict:
    from torch.testing._internal.common_methods_invocations import op_db

    return {op_key(o): o for o in op_db}


def stable_sample(keys, stride: int, shard: int = 0) -> list[str]:
    """Every `stride`-th key by a hash of its name (shard `shard` of `stride`): the same keys on every machine and run."""
    return sorted(k for k in keys if zlib.crc32(k.encode()) % stride == shard)


def dtypes_for(opinfo) -> list[torch.dtype]:
    """float32 (and bfloat16 where supported); an op without float32, the first of OTHER_DTYPES it takes."""
    supported = opinfo.supported_dtypes("cpu")
    if torch.float32 in supported:
        return [torch.float32] + ([torch.bfloat16] if torch.bfloat16 in supported else [])
    return [d for d in OTHER_DTYPES if d in supported][:1]


def spread(items: list, k: int) -> list:
    """At most `k` items, evenly spaced, first and last included."""
    if len(items) <= k:
        return items
    if k == 1:
        return items[:1]
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)]


def _leaves(value) -> list:
    return pytree.tree_leaves(value)


def small(sample, max_numel: int = MAX_NUMEL) -> bool:
    leaves = _leaves((sample.input, sample.args, sample.kwargs))
    return all(t.numel() <= max_numel for t in leaves if isinstance(t, torch.Tensor))


def _describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"Tensor{list(value.shape)}:{str(value.dtype).removeprefix('torch.')}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_describe(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_describe(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_describe(v)}" for k, v in value.items()) + "}"
    return repr(value)


def describe_sample(index: int, sample) -> str:
    return f"#{index} input={_describe(sample.input)} args={_describe(list(sample.args))} kwargs={_describe(sample.kwargs)}"


class OpCall(torch.nn.Module):
    """forward(*tensors) = op(input, *args, **kwargs), with the sample's tensors as inputs.

    Every tensor leaf of (input, args, kwargs) becomes a forward input, in
    order; everything else is a constant of the module.
    """

    def __init__(self, op, sample):
        super().__init__()
        self.op = op
        leaves, self.spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
        self.is_tensor = [isinstance(leaf, torch.Tensor) for leaf in leaves]
        self.constants = [None if t else leaf for t, leaf in zip(self.is_tensor, leaves)]
        self.inputs = tuple(leaf for leaf in leaves if isinstance(leaf, torch.Tensor))

    def forward(self, *tensors):
        supplied = iter(tensors)
        leaves = [next(supplied) if t else c for t, c in zip(self.is_tensor, self.constants)]
        x, args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        return self.op(x, *args, **kwargs)


@dataclass
class Outcome:
    op: str
    dtype: str
    sample: str  # describe_sample(...)
    status: str  # matched | unsupported | mismatch | crash | random | eager-error | skipped
    detail: str = ""
    launches: int = 0
    # Torch ops of the imported IR (views left out) and, of those, the ones that stayed ATen calls.
    aten: list[str] = field(default_factory=list)
    unfused: list[str] = field(default_factory=list)

    @property
    def is_bug(self) -> bool:
        return self.status in ("mismatch", "crash")

    def line(self) -> str:
        return f"{self.op} [{self.dtype}] {self.sample}: {self.status}: {self.detail}"


def _eager(model, inputs, seed: int):
    torch.manual_seed(seed)
    with torch.no_grad():
        return model(*(t.clone() for t in inputs))


def _same(a, b) -> bool:
    """Bit-for-bit the same outputs (NaN equal to NaN)."""
    la, lb = _leaves(a), _leaves(b)
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb):
        if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
            if x != y:
                return False
            continue
        try:
            torch.testing.assert_close(x, y, rtol=0, atol=0, equal_nan=True)
        except (AssertionError, TypeError, RuntimeError):
            return False
    return True


def _reference(model, inputs, expected):
    """Eager with float inputs in float64, cast back to eager's output dtypes; None where it does not apply."""
    try:
        up = _eager(model, [t.double() if t.is_floating_point() else t for t in inputs], 0)
    except Exception:  # noqa: BLE001 - ops that take no float64 have no reference
        return None
    leaves, exp = _leaves(up), _leaves(expected)
    if len(leaves) != len(exp):
        return None
    return [
        r.to(e.dtype) if isinstance(r, torch.Tensor) and isinstance(e, torch.Tensor) and r.shape == e.shape else None
        for r, e in zip(leaves, exp)
    ]


def _is_view(name: str) -> bool:
    try:
        schema = aten_overload(name)._schema
    except mlirfuse.UnsupportedModelError:
        return False
    return bool(schema.returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def _draws_random_numbers(name: str) -> bool:
    try:
        return torch.Tag.nondeterministic_seeded in aten_overload(name).tags
    except mlirfuse.UnsupportedModelError:
        return False


def torch_op_name(op) -> str | None:
    """`torch.aten.add.Tensor`, `torch.prims.x`, or a `torch.operator`'s target; None for other ops."""
    name = op.name
    if name == "torch.operator":
        target = ir.StringAttr(op.attributes["name"]).value
        return target if target.startswith("torch.") else "torch." + target
    return name if name.startswith(("torch.aten.", "torch.prims.")) else None


def imported_ops(module: ir.Module) -> list[str]:
    """The computing torch ops of an imported module, views left out (they launch nothing, here or in Inductor)."""
    names = []

    def visit(op):
        name = torch_op_name(op)
        if name is not None and not _is_view(name):
            names.append(name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return names


def _first_lines(error: BaseException, limit: int = 400) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    text = " | ".join(line.strip() for line in text.splitlines() if line.strip())
    return text if len(text) <= limit else text[:limit] + " ..."


def run_sample(opinfo, dtype: torch.dtype, index: int, sample) -> Outcome:
    """Compile one sample, run it, compare it with eager."""
    key, name = op_key(opinfo), str(dtype).removeprefix("torch.")
    out = Outcome(key, name, describe_sample(index, sample), "matched")
    if opinfo.has_nondeterministic_output:
        out.status, out.detail = "random", "OpInfo: nondeterministic output"
        return out
    model = OpCall(opinfo.op, sample)
    try:
        expected = _eager(model, model.inputs, 0)
    except Exception as e:  # noqa: BLE001 - an invalid sample is not mlirfuse's
        out.status, out.detail = "eager-error", _first_lines(e, 200)
        return out
    if not _same(expected, _eager(model, model.inputs, 1)):
        out.status, out.detail = "random", "eager differs under two seeds"
        return out
    reference = _reference(model, model.inputs, expected)
    try:
        imported = import_module(model, model.inputs)
        out.aten = imported_ops(imported.module)
        seeded = [n for n in out.aten if _draws_random_numbers(n)]
        if seeded:
            # OpInfo wraps random ops in `wrapper_set_seed`, so eager repeats itself; the graph cannot.
            out.status, out.detail = "random", f"{seeded[0].removeprefix('torch.')} draws random numbers"
            return out
        cm = CompiledModule(model, model.inputs, imported=imported)
        torch.manual_seed(0)
        actual = cm(*(t.clone() for t in model.inputs))
    except mlirfuse.UnsupportedModelError as e:
        out.status, out.detail = "unsupported", _first_lines(e)
        out.unfused = list(out.aten)
        return out
    except Exception as e:  # noqa: BLE001 - anything else is a crash by definition
        out.status = "crash"
        out.detail = _first_lines(e) + " | " + traceback.format_exc(limit=-4).replace("\n", " | ")[-1500:]
        out.unfused = list(out.aten)
        return out
    out.launches = cm.stats["launches"]
    out.unfused = [s.name for s in cm.program.steps if s.kind == "aten" and not s.view]
    problem = _compare(actual, expected, reference)
    if problem is not None:
        out.status, out.detail = "mismatch", problem
    return out


def _comparable(t):
    """Sparse tensors as dense, complex32 as complex64 (torch compares neither); same dtypes checked before."""
    if not isinstance(t, torch.Tensor):
        return t
    if t.layout != torch.strided:
        t = t.to_dense()
    return t.to(torch.complex64) if t.dtype == torch.complex32 else t


def _compare(actual, expected, reference) -> str | None:
    got, want = _leaves(actual), _leaves(expected)
    if len(got) != len(want):
        return f"{len(got)} outputs, eager gives {len(want)}"
    for i, (a, e) in enumerate(zip(got, want)):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor) or (a.dtype, a.layout) != (e.dtype, e.layout):
                return f"output {i}: {_describe(a)} {getattr(a, 'layout', '')}, eager {_describe(e)} {e.layout}"
            ref = reference[i] if reference is not None else None
            problem = compare_one(*(_comparable(t) for t in (a, e, ref)))
            if problem is not None:
                return f"output {i}: {problem[0]}: {problem[1]}"
        elif a != e:
            return f"output {i}: {a!r} != eager {e!r}"
    return None


def samples_for(opinfo, dtype: torch.dtype, max_samples: int | None, max_numel: int = MAX_NUMEL, claimed=None):
    """(index, sample) pairs: the small ones, at most `max_samples`, spread over the OpInfo's list."""
    torch.manual_seed(0)  # sample_inputs draws from the global generator
    samples = [
        (i, s)
        for i, s in enumerate(opinfo.sample_inputs("cpu", dtype, requires_grad=False))
        if small(s, max_numel) and (claimed is None or claimed(s))
    ]
    return samples if max_samples is None else spread(samples, max_samples)


def run_op(key: str, max_samples: int | None, dtypes=None) -> list[Outcome]:
    """Every chosen sample of one OpInfo entry in each of its dtypes."""
    opinfo = opinfos()[key]
    dtypes = dtypes or dtypes_for(opinfo)
    if not dtypes:
        return [Outcome(key, "-", "(none)", "skipped", "no float32, integer or bool dtype (complex only)")]
    outcomes = []
    for dtype in dtypes:
        try:
            samples = samples_for(opinfo, dtype, max_samples)
        except Exception as e:  # noqa: BLE001 - a broken sample generator is the OpInfo's
            outcomes.append(Outcome(key, str(dtype).removeprefix("torch."), "(samples)", "eager-error", _first_lines(e, 200)))
            continue
        for index, sample in samples:
            outcomes.append(run_sample(opinfo, dtype, index, sample))
            if outcomes[-1].status == "random":
                return outcomes
    return outcomes or [Outcome(key, "-", "(none)", "skipped", f"no sample of at most {MAX_NUMEL} elements")]


# --- Inductor's view of an op ---------------------------------------------------------------


@functools.cache
def _inductor_tables():
    import torch._inductor.decomposition as decomposition
    import torch._inductor.lowering as lowering

    return set(lowering.lowerings), set(lowering.fallbacks), set(decomposition.select_decomp_table())


def inductor_kind(name: str) -> str:
    """How Inductor treats a torch-mlir op name: "kernel" (lowered or decomposed), "template", "fallback", "scalar" or "other"."""
    try:
        overload = aten_overload(name)
    except mlirfuse.UnsupportedModelError:
        return "other"
    if TEMPLATE_OPS.match(overload._schema.name.split("::")[-1]):
        return "template"
    if not any(str(r.type) in ("Tensor", "Tensor[]", "List[Tensor]") for r in overload._schema.returns):
        return "scalar"  # size.int, item, ...: no tensor out, nothing to launch
    lowerings, fallbacks, decompositions = _inductor_tables()
    if overload in fallbacks:
        return "fallback"
    if overload in lowerings or overload in decompositions:
        return "kernel"
    return "other"


# --- the summary ------------------------------------------------------------------------------


def reason(detail: str) -> str:
    """The class of an UnsupportedModelError: its first clause, numbers and names of values stripped."""
    text = detail.removeprefix("UnsupportedModelError: ")
    if text.startswith("torch.export could not trace"):
        return "torch.export could not trace the op"
    if text.startswith("torch-mlir could not import"):
        return "torch-mlir could not import the graph"
    return normalize(text.split(" | ")[0])[:120]


class Summary:
    """Outcomes of many ops, added up; `render()` is the printed table."""

    def __init__(self):
        self.outcomes: list[Outcome] = []

    def add(self, outcomes) -> None:
        self.outcomes.extend(o if isinstance(o, Outcome) else Outcome(**o) for o in outcomes)

    def by_op(self) -> dict[str, list[Outcome]]:
        ops: dict[str, list[Outcome]] = {}
        for o in self.outcomes:
            ops.setdefault(o.op, []).append(o)
        return ops

    def op_status(self, outcomes: list[Outcome]) -> str:
        """One word per op: failed, random, fused, aten (matched, never a launch), unsupported or skipped."""
        statuses = {o.status for o in outcomes}
        if statuses & {"mismatch", "crash"}:
            return "failed"
        if "random" in statuses:
            return "random"
        matched = [o for o in outcomes if o.status == "matched"]
        if matched:
            return "fused" if any(o.launches for o in matched) else "aten"
        return "unsupported" if "unsupported" in statuses else "skipped"

    def counts(self) -> dict[str, int]:
        return collections.Counter(self.op_status(v) for v in self.by_op().values())

    def share(self) -> tuple[int, int, list[str]]:
        """(ATen calls, occurrences) of Inductor-lowered ops over the samples that imported; the ops most often left."""
        total, left = 0, collections.Counter()
        for o in self.outcomes:
            if o.status not in ("matched", "unsupported", "mismatch", "crash"):
                continue
            kernel_ops = [n for n in o.aten if inductor_kind(n) == "kernel"]
            total += len(kernel_ops)
            remaining = collections.Counter(o.unfused)
            for n in kernel_ops:
                if remaining[n] > 0:
                    remaining[n] -= 1
                    left[n] += 1
        return sum(left.values()), total, [f"{n.removeprefix('torch.')} x{c}" for n, c in left.most_common()]

    def render(self, title: str = "mlirfuse OpInfo differential run") -> str:
        ops = self.by_op()
        counts = self.counts()
        samples = collections.Counter(o.status for o in self.outcomes)
        tried = sum(counts[k] for k in ("failed", "fused", "aten", "unsupported"))
        lines = [
            title,
            f"  ops tried          : {tried}   (samples: {sum(samples[k] for k in ('matched', 'unsupported', 'mismatch', 'crash'))})",
            f"  matched            : {counts['fused'] + counts['aten']}   (samples: {samples['matched']})",
            f"    fused (>= 1 launch): {counts['fused']}",
            f"    all ATen         : {counts['aten']}",
            f"  unsupported        : {counts['unsupported']}   (samples: {samples['unsupported']}, some in ops that matched too)",
            f"  mismatches         : {samples['mismatch']} samples in {len({o.op for o in self.outcomes if o.status == 'mismatch'})} ops",
            f"  crashes            : {samples['crash']} samples in {len({o.op for o in self.outcomes if o.status == 'crash'})} ops",
            f"  skipped, random    : {counts['random']}",
            f"  skipped, no sample : {counts['skipped']}   (eager rejects the samples, none is small enough, or complex only)",
        ]
        left, total, worst = self.share()
        if total:
            lines.append(
                f"  Inductor-lowered ops left as ATen calls: {left} of {total} ({100 * left / total:.1f}%)"
                "   (ops Inductor lowers or decomposes, not fallbacks, matmul/conv/SDPA; views and scalar ops left out)"
            )
            kernel_ops = {n for o in self.outcomes for n in o.aten if inductor_kind(n) == "kernel"}
            never_fused = {w.rsplit(" x", 1)[0] for w in worst}
            lines.append(f"    distinct ops: {len(never_fused)} of {len(kernel_ops)} left as ATen calls somewhere")
            if worst:
                lines.append("    most often left: " + ", ".join(worst[:25]))
        reasons = collections.defaultdict(list)
        for o in self.outcomes:
            if o.status == "unsupported":
                reasons[reason(o.detail)].append(o.op)
        if reasons:
            lines.append("  unsupported, by reason (samples: ops):")
            for why, names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
                distinct = sorted(set(names))
                shown = ", ".join(distinct[:12]) + (f", ... ({len(distinct)} ops)" if len(distinct) > 12 else "")
                lines.append(f"    {len(names):4d}  {why}: {shown}")
        random_ops = sorted(k for k, v in ops.items() if self.op_status(v) == "random")
        if random_ops:
            lines.append("  random (skipped): " + ", ".join(random_ops))
        bugs = [o for o in self.outcomes if o.is_bug]
        if bugs:
            lines.append("  wrong answers and crashes:")
            lines += [f"    {o.line()[:600]}" for o in bugs]
        return "\n".join(lines)


def to_json(outcomes: list[Outcome]) -> list[dict]:
    return [asdict(o) for o in outcomes]
