"""The cost model: bytes, FLOPs and roofline time of fusion groups, kernels and whole programs (issue 22).

What a memory-bound kernel costs on a GPU is the bytes it moves through
device memory; what a compute-bound one costs is its FLOPs. Per group or
kernel:

- **bytes read**: each input once, as the kernel reads it. An input read only
  through views (a slice of a fused qkv, one head) counts the elements its
  views cover, at most the input's own size (a broadcast input is read once:
  the model assumes the cache keeps it); re-reads a schedule adds (a GEMM's
  A tile once per column block, a looped reduction's row once per pass) are
  not counted: this is the traffic of a kernel that reads each input from
  memory once, which a good schedule approaches.
- **bytes written**: each result once.
- **FLOPs**: 2·M·N·K per matmul (and per attention product; a convolution's
  implicit GEMM: 2·N·Cout·Hout·Wout·Cin/groups·kh·kw), one per result
  element for every other computing op (a scan too: one combine per element;
  a reduction: one per input element);
  views and constants none. Matmul FLOPs run on the tensor cores at the peak
  of their operands' dtype (f32 GEMMs and convolutions as tf32x3 in a Triton kernel, IEEE f32
  in an ATen call), the rest at the f32 CUDA-core peak.
- **roofline time** on a target: max(bytes / bandwidth, FLOPs / peak).

A program (the `forward` function after `fusion-outline`): every launch's
kernel cost, plus every unfused op that is not a view (an ATen call reading
its tensor operands and writing its results once). Its **lower bound** is
what any implementation must move: each argument that is read (inputs,
parameters, buffers; a backward graph's saved activations) once, each result
once.

Everything here reads static shapes; anything with a `?` size has no cost
(None). `fusion-cost` (passes/cost.py) writes these numbers on the IR,
`cm.stats` and the fusion report show the program's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlirfuse.ir import computes, ir, last_op, tensor_type, torch_name
from mlirfuse.ops.attention import SDPA
from mlirfuse.ops.conv import FAMILY as CONV_FAMILY
from mlirfuse.ops.conv import Conv, conv
from mlirfuse.ops.dtypes import BY_NAME as DTYPES
from mlirfuse.ops.dtypes import itemsize
from mlirfuse.ops.matmul import MATMUL_OPS
from mlirfuse.ops.reductions import REDUCTIONS as FUSED_REDUCTIONS
from mlirfuse.ops.views import VIEW_OPS

_K_OPERAND = {"torch.aten.addmm": 1, "torch.aten.baddbmm": 1}  # A's position where operand 0 is the bias
# Reductions count one FLOP per input element: the ones mlirfuse fuses, and ones that stay ATen calls.
_REDUCTIONS = frozenset(FUSED_REDUCTIONS) | {
    "torch.aten.max.dim", "torch.aten.min.dim", "torch.aten.var.correction", "torch.aten.logsumexp",
    "torch.aten.any.dim", "torch.aten.all.dim",
}


@dataclass(frozen=True)
class Target:
    """A GPU as the roofline sees it: device-memory bandwidth and peak FLOP rates (dense), with their source."""

    name: str
    device: str
    bandwidth: float  # bytes per second
    f32: float  # FLOP/s on the CUDA cores (elementwise math, IEEE f32 GEMMs)
    tf32x3: float  # FLOP/s of f32 GEMMs as three tf32 products on the tensor cores
    half: float  # FLOP/s of f16 and bf16 GEMMs on the tensor cores
    source: str

    def matmul_peak(self, dtype: str, extern: bool) -> float:
        if DTYPES[dtype].kind == "float" and DTYPES[dtype].bits == 16:
            return self.half
        # f32: a Triton GEMM runs tf32x3 (lowering/matmul.py); cuBLAS (an ATen call) IEEE f32 unless TF32 is allowed.
        return self.f32 if extern else self.tf32x3


TARGETS = {
    "sm_80": Target(
        "sm_80", "A100 SXM4 80GB", 2.039e12, f32=19.5e12, tf32x3=156e12 / 3, half=312e12,
        source="NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB; dense rates; tf32x3 is three tf32 products)",
    ),
    "sm_90": Target(
        "sm_90", "H100 SXM5 80GB", 3.35e12, f32=67e12, tf32x3=494.7e12 / 3, half=989.4e12,
        source="NVIDIA H100 Tensor Core GPU datasheet (SXM5; dense rates); a lent H100 measured about 3.0 TB/s "
        "(device-to-device copy) and 798 TFLOP/s (8192^3 bf16 GEMM)",
    ),
}


@dataclass(frozen=True)
class Cost:
    """What one group, kernel launch, ATen call or program moves and computes."""

    bytes_read: int = 0
    bytes_written: int = 0
    flops: int = 0  # all of them, matmul_flops included
    # Matmul/attention FLOPs per operand dtype and whether an ATen call does them: ((dtype, extern), flops) pairs.
    matmul_flops: tuple = ()

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written

    def __add__(self, other: Cost) -> Cost:
        merged = dict(self.matmul_flops)
        for key, flops in other.matmul_flops:
            merged[key] = merged.get(key, 0) + flops
        return Cost(
            self.bytes_read + other.bytes_read, self.bytes_written + other.bytes_written,
            self.flops + other.flops, tuple(sorted(merged.items())),
        )

    def seconds(self, target: Target) -> float:
        """The roofline time on `target`: the slower of moving the bytes and doing the FLOPs."""
        matmul = sum(f for _, f in self.matmul_flops)
        compute = sum(f / target.matmul_peak(dtype, extern) for (dtype, extern), f in self.matmul_flops)
        compute += (self.flops - matmul) / target.f32
        return max(self.bytes / target.bandwidth, compute)


def value_bytes(value: ir.Value) -> int | None:
    """The bytes of a tensor value (0 for a non-tensor); None for a `?` size or an unknown dtype."""
    t = tensor_type(value.type)
    if t is None:
        return 0 if "vtensor" not in str(value.type) else None
    if not t.is_static or t.dtype not in DTYPES:
        return None
    return t.numel * itemsize(t.dtype)


def _read_bytes(value: ir.Value) -> int | None:
    """The bytes a region reads of `value`: through views, the elements they cover, at most `value`'s own."""
    own = value_bytes(value)
    if own is None:
        return None
    covered, seen, stack = 0, [], [value]
    while stack:
        v = stack.pop()
        for use in v.uses:
            user = use.owner
            if user.name in VIEW_OPS and use.operand_number == 0:
                stack.append(user.results[0])
            elif not any(v == s for s in seen):
                seen.append(v)
                size = value_bytes(v)
                if size is None:
                    return own
                covered += size
    return min(own, covered)


def op_flops(op) -> tuple[int, tuple] | None:
    """(FLOPs, matmul FLOPs as Cost.matmul_flops) of one op; None where a size is `?`."""
    name = op.name
    results = [tensor_type(r.type) for r in op.results]
    if not computes(op) or name in VIEW_OPS or not results:
        return 0, ()
    if any(t is not None and not t.is_static for t in results):
        return None
    if name in MATMUL_OPS:
        a = tensor_type(op.operands[_K_OPERAND.get(name, 0)].type)
        if a is None or not a.is_static or results[0] is None:
            return None
        flops = 2 * results[0].numel * a.shape[-1]
        # The bias of linear/addmm/baddbmm: one more FLOP per result element, outside the product.
        bias = results[0].numel if _has_bias(op) else 0
        return flops + bias, (((a.dtype, False), flops),)
    if name in CONV_FAMILY.ops:
        c = conv(op.opview)
        if isinstance(c, Conv):
            return c.flops, (((c.dtype, False), c.gemm_flops),)
    if name == SDPA:
        q, k, v = (tensor_type(o.type) for o in list(op.operands)[:3])
        if any(t is None or not t.is_static for t in (q, k, v)):
            return None
        rows = results[0].numel // v.shape[-1]  # batch x heads x queries
        flops = 2 * rows * k.shape[-2] * (q.shape[-1] + v.shape[-1])
        return flops, (((q.dtype, False), flops),)
    if name in _REDUCTIONS:
        t = tensor_type(op.operands[0].type)
        return (t.numel if t is not None and t.is_static else 0), ()
    return sum(t.numel for t in results if t is not None), ()


def _has_bias(op) -> bool:
    if op.name in _K_OPERAND:
        return True
    return op.name == "torch.aten.linear" and len(op.operands) > 2 and tensor_type(op.operands[2].type) is not None


def region_cost(block: ir.Block, reads: list[ir.Value], writes: list[ir.Value]) -> Cost | None:
    """The cost of `block`'s ops reading `reads` (its arguments) and writing `writes`."""
    read, written = sum_sizes(_read_bytes(v) for v in reads), sum_sizes(value_bytes(v) for v in writes)
    if read is None or written is None:
        return None
    flops, matmul = 0, {}
    for op in block.operations:
        counted = op_flops(op.operation)
        if counted is None:
            return None
        flops += counted[0]
        for key, f in counted[1]:
            matmul[key] = matmul.get(key, 0) + f
    return Cost(read, written, flops, tuple(sorted(matmul.items())))


def sum_sizes(sizes) -> int | None:
    """The total of `sizes`, None if any is None (a `?` size)."""
    total = 0
    for size in sizes:
        if size is None:
            return None
        total += size
    return total


def _terminator_operands(block: ir.Block) -> list[ir.Value]:
    return list(last_op(block).operands) if len(block.operations) else []


def kernel_cost(kernel) -> Cost | None:
    """One launch of a `fusion.kernel` (or one `fusion.group`): its arguments read, its yielded values written."""
    block = kernel.regions[0].blocks[0]
    return region_cost(block, list(block.arguments), _terminator_operands(block))


def extern_cost(op) -> Cost | None:
    """An unfused op's ATen call: its tensor operands read once, its results written once; views cost nothing."""
    name = op.name
    if name in VIEW_OPS or name.startswith(("torch.constant.", "torch.prim.", "func.")):
        return Cost()
    read, written = sum_sizes(value_bytes(v) for v in op.operands), sum_sizes(value_bytes(v) for v in op.results)
    if read is None or written is None:
        return None
    counted = op_flops(op)
    if counted is None:
        return None
    flops, matmul = counted
    return Cost(read, written, flops, tuple(((dtype, True), f) for (dtype, _), f in matmul))


@dataclass
class ProgramCost:
    """A compiled function's cost: per launch and ATen call (in program order), the total and the lower bound."""

    steps: list = field(default_factory=list)  # (name, "launch" | "aten", Cost)
    total: Cost = field(default_factory=Cost)
    lower_bound_bytes: int = 0
    # Per step, its share of the lower bound: the function's arguments it is the first step to read, and the
    # function's results it writes (a step of a called layer: 0, its arguments are the caller's values).
    # `steps[i]`'s bytes beyond `bound_shares[i]` are what that step moves that no implementation must.
    bound_shares: list = field(default_factory=list)

    def seconds(self, target: str = "sm_90") -> float:
        """The sum of every step's roofline time on `target` (steps run one after another)."""
        return sum(cost.seconds(TARGETS[target]) for _, _, cost in self.steps)

    def lower_bound_seconds(self, target: str = "sm_90") -> float:
        """Moving the lower bound's bytes, or doing all the FLOPs, whichever is slower."""
        t = TARGETS[target]
        bound = Cost(self.lower_bound_bytes, 0, self.total.flops, self.total.matmul_flops)
        return bound.seconds(t)


def program_cost(module: ir.Module, func_name: str | None = None) -> ProgramCost | None:
    """The cost of the module's function (the first `func.func`, or `func_name`); None where a size is `?`."""
    kernels, func = {}, None
    body = module.body if isinstance(module, ir.Module) else module.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name == "fusion.kernel":
            kernels[ir.StringAttr(op.attributes["sym_name"]).value] = op
        elif op.operation.name == "func.func" and func is None:
            if func_name is None or ir.StringAttr(op.attributes["sym_name"]).value == func_name:
                func = op
    if func is None:
        return None
    block = func.regions[0].blocks[0]
    result = ProgramCost()
    returned = []
    for v in _terminator_operands(block):
        if not any(v == r for r in returned) and not isinstance(v.owner, ir.Block):  # an argument handed back: no write
            returned.append(v)
    unread = [a for a in block.arguments if any(True for _ in a.uses)]
    for op in block.operations:
        name = op.operation.name
        if name == "fusion.launch":
            kernel = ir.FlatSymbolRefAttr(op.attributes["kernel"]).value
            cost = kernel_cost(kernels[kernel])
            step = (kernel, "launch")
        elif name == "fusion.group":  # before fusion-outline: each group is one launch
            cost = kernel_cost(op)
            step = (name, "launch")
        elif name == "func.return":
            continue
        elif name == "func.call":  # a layer compiled once: its steps, per call
            callee = program_cost(module, ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            if callee is None:
                return None
            result.steps += callee.steps
            result.bound_shares += [0] * len(callee.steps)
            result.total = result.total + callee.total
            continue
        else:
            cost = extern_cost(op.operation)
            step = (torch_name(op), "aten")
            if cost is not None and cost == Cost():
                continue
        if cost is None:
            return None
        result.steps.append((*step, cost))
        result.total = result.total + cost
        first = [a for a in unread if any(a == v for v in op.operands)]
        unread = [a for a in unread if not any(a == v for v in first)]
        written = [r for r in op.results if any(r == v for v in returned)]
        result.bound_shares.append(sum_sizes(value_bytes(v) for v in first + written) or 0)
    bound = sum_sizes([*(value_bytes(a) for a in block.arguments if any(True for _ in a.uses)),
                  *(value_bytes(v) for v in returned)])
    if bound is None:
        return None
    result.lower_bound_bytes = bound
    return result


__all__ = ["Cost", "ProgramCost", "TARGETS", "Target", "extern_cost", "kernel_cost", "op_flops", "program_cost",
           "region_cost", "sum_sizes", "value_bytes"]


def count_text(n: int) -> str:
    """A FLOP count for people: 1.5k, 2.0M, 3.1G."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return str(n)


def bytes_text(n: int) -> str:
    """A byte count for people: 512 bytes, 1.5 KiB, 2.0 MiB."""
    if n < 1024:
        return f"{n} bytes"
    return f"{n / 1024:.1f} KiB" if n < 2**20 else f"{n / 2**20:.1f} MiB"
