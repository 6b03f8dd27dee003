"""Run a compiled `forward` function: ATen for unfused ops, Triton for launches.

The function's ops are turned once into a flat list of steps over numbered
slots (no IR is touched per call). Constants and lists of constants are
evaluated at build time. Each slot is dropped after its last use
(runtime/liveness.py), so intermediates are freed during the call.

A call runs the steps as generated straight-line Python (runtime/codegen.py,
`Program.execute`); `run` interprets them, for `straight_line=False` and for
measurements that watch every step (`on_step`).
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Callable

import torch

from mlirfuse.dialect import SCALAR_MARK, GroupKind, find_kernel, group_kind, launch_scalars
from mlirfuse.errors import UnsupportedModelError
from mlirfuse.ir import NO_CONSTANT, constant_value, ir, last_op, tensor_type
from mlirfuse.lowering.triton import LoweringError, TritonKernel, lower_kernel
from mlirfuse.ops.dtypes import itemsize
from mlirfuse.runtime.aten import RESHAPING, aten_overload, convert, split_by_schema
from mlirfuse.runtime.codegen import Generated, generate
from mlirfuse.runtime.kernels import Launcher
from mlirfuse.runtime.liveness import Plan, buffers, plan, reuse_enabled

logger = logging.getLogger("mlirfuse")


@dataclass
class Step:
    fn: Callable
    args: list  # ("slot", i) | ("const", value) | ("list", [...])
    kwargs: dict
    outs: list[int]
    kind: str  # "aten" | "launch" | "list" | "const" | "call"
    name: str
    view: bool = False  # an ATen op whose result aliases its input: no kernel, no copy
    operand_view: bool = False  # a view inside an extern group: part of the extern call's operands
    in_place: bool = False  # an ATen op writing into an operand and returning it: no new buffer
    reusable: tuple = ()  # a launch: (output, argument position) pairs its kernel may write in place (liveness)
    inner_peak: int | None = 0  # a call: the planned peak of the callee's intermediates (None: dynamic)


class Program:
    """The steps of one func.func, ready to run on torch values."""

    def __init__(self, func_op, module: ir.Module, on_kernel=None, lower: Callable = lower_kernel,
                 caller: Program | None = None, straight_line: bool = True, written_back: dict[int, int] | None = None):
        """`on_kernel(index, total, name)` is called as each kernel is lowered (progress); `lower` lowers one
        fusion.kernel (`lower_kernel`, or the persistent cache's `KernelCache`).

        `written_back`: result position -> argument position, for the results the caller copies into an
        argument after each call (mutated buffers); where the plan can, a launch stores such a result in the
        argument itself (runtime/liveness.py), and the copy finds it there: `written_back_in_place`.

        `caller`: the program calling this function (`func.call`); they share kernels, callees and `lower`.
        `straight_line`: calls run the generated function (`source`) instead of interpreting the steps (`run`).
        """
        self._lower = lower if caller is None else caller._lower
        self._straight_line = straight_line if caller is None else caller.straight_line
        self.slots: dict[ir.Value, int] = {}
        self._next_slot = 0
        self._slot_bytes: dict[int, int | None] = {}  # result slot -> bytes of its tensor (None: dynamic)
        self._slot_dtypes: dict[int, str] = {}  # tensor slot -> its dtype
        # Kernels over `?` sizes the lowering cannot size at call time -> why; their launches run as ATen ops.
        self.aten_kernels: dict[str, str] = {}
        self.steps: list[Step] = []
        self.kernels: dict[str, TritonKernel] = {}
        self._launchers: dict[str, Launcher] = {}
        self._lists: dict[ir.Value, list] = {}  # ListConstruct results, built per call from their items
        self._aliases: dict[ir.Value, tuple] = {}  # extern groups' block arguments and results: what they stand for
        self._on_kernel = on_kernel
        self._total_kernels = sum(op.operation.name == "fusion.kernel" for op in module.body.operations)
        self._resource_blobs: dict[str, bytes] | None = None  # dense_resource literals' data, read once
        self.callees: dict[str, Program] = {}  # functions called (deduplicated layers), each built once
        if caller is not None:
            self.aten_kernels, self.kernels, self._launchers = caller.aten_kernels, caller.kernels, caller._launchers
            self.callees, self._resource_blobs = caller.callees, caller._resource_blobs
        block = func_op.regions[0].blocks[0]
        self.num_args = len(block.arguments)
        for arg in block.arguments:
            self._slot(arg)
        for op in block.operations:
            self._add(op, module)
        returned = last_op(block).operands
        # Only a result of its argument's type: the caller's copy finds the same data (same shape and dtype).
        self._written_back = {p: a for p, a in (written_back or {}).items() if returned[p].type == block.arguments[a].type}
        self.plan: Plan = plan(
            self.steps, self.returns, self.num_args, self._next_slot, self._slot_bytes, reuse=reuse_enabled(),
            slot_dtypes=self._slot_dtypes, written_back=self._written_back,
        )
        for i, reuse in self.plan.reuse.items():
            self.steps[i].kwargs["reuse"] = ("const", reuse)

    def _blobs(self, module: ir.Module) -> dict[str, bytes]:
        if self._resource_blobs is None:
            self._resource_blobs = resource_blobs(module)
        return self._resource_blobs

    def _slot(self, value: ir.Value) -> int:
        if value not in self.slots:
            self.slots[value] = self._next_slot
            self._slot_bytes[self._next_slot] = _nbytes(value.type)
            t = tensor_type(value.type)
            if t is not None:
                self._slot_dtypes[self._next_slot] = t.dtype
            self._next_slot += 1
        return self.slots[value]

    def _arg(self, value: ir.Value):
        if value in self._aliases:
            return self._aliases[value]
        const = constant_value(value)
        if const is not NO_CONSTANT:
            return ("const", const)
        if value in self._lists:
            return ("list", self._lists[value])
        return ("slot", self.slots[value])

    def _add(self, op, module) -> None:
        name = op.operation.name
        if name.startswith("torch.constant."):
            return
        if name == "torch.prim.ListConstruct":
            self._lists[op.results[0]] = [self._arg(v) for v in op.operands]
            return
        if name == "torch.prim.ListUnpack":
            outs = [self._slot(r) for r in op.results]
            self.steps.append(Step(lambda xs: xs, [self._arg(op.operands[0])], {}, outs, "list", name))
            return
        if name == "func.return":
            self.returns = [self._arg(v) for v in op.operands]
            return
        if name == "torch.vtensor.literal":
            tensor = _literal(op, lambda: self._blobs(module))
            self.steps.append(Step(lambda t=tensor: t, [], {}, [self._slot(op.results[0])], "const", name))
            return
        if name == "func.call":
            self._add_call(op, module)
            return
        if name == "fusion.group" and group_kind(op) == GroupKind.EXTERN:
            self._add_extern(op, module)
            return
        if name == "fusion.launch":
            kernel_name = op.attributes["kernel"].value
            if kernel_name in self.aten_kernels:
                self._add_body(find_kernel(op.operation, kernel_name), op, module)
                return
            if kernel_name not in self.kernels:
                if self._on_kernel is not None:
                    self._on_kernel(len(self.kernels), self._total_kernels, kernel_name)
                kernel = find_kernel(op.operation, kernel_name)
                try:
                    self.kernels[kernel_name] = self._lower(kernel)
                except LoweringError as e:
                    if not _has_dynamic_sizes(kernel):
                        raise
                    # A kernel over `?` sizes the lowering cannot size at call time: its ops run as ATen ops.
                    self.aten_kernels[kernel_name] = str(e)
                    logger.info("mlirfuse: %s runs as ATen ops: %s", kernel_name, e)
                    self._add_body(kernel, op, module)
                    return
                self._launchers[kernel_name] = Launcher(self.kernels[kernel_name])
            args = [self._arg(v) for v in op.operands]
            outs = [self._slot(r) for r in op.results]
            launcher = self._launchers[kernel_name]
            values = launch_scalars(op)  # a kernel shared modulo constants: this launch's values, rounded once here
            kwargs = {"scalars": ("const", launcher.scalars(values))} if values else {}
            self.steps.append(Step(launcher, args, kwargs, outs, "launch", kernel_name, reusable=launcher.in_place))
            return
        if name == "torch.operator":
            target = op.attributes["name"].value
            name = target if target.startswith("torch.") else "torch." + target
        if not name.startswith("torch.") or len(op.regions):
            raise UnsupportedModelError(f"mlirfuse cannot run '{name}' (at {op.location})")
        try:
            overload = aten_overload(name)
        except UnsupportedModelError as e:
            raise UnsupportedModelError(f"mlirfuse cannot run '{name}' (at {op.location}): {e}") from None
        schema = overload._schema
        if len(schema.arguments) != len(op.operands):
            raise UnsupportedModelError(
                f"mlirfuse cannot run '{name}' (at {op.location}): {len(op.operands)} operands, its ATen schema has {len(schema.arguments)}"
            )
        values = []
        for schema_arg, value in zip(schema.arguments, op.operands):
            arg = self._arg(value)
            values.append(("const", convert(str(schema_arg.real_type), arg[1])) if arg[0] == "const" else arg)
        args, kwargs = split_by_schema(schema, values)
        outs = [self._slot(r) for r in op.results]
        # _unsafe_view's schema declares a fresh result, but view_or_reshape returns a view where it can: its
        # result shares its operand's buffer, which must then not be written over in place (fuzz seed 2800217:
        # a returned flatten of a copied expand read the softmax a later kernel wrote into that buffer).
        view = all(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns) or name in RESHAPING
        in_place = any(r.alias_info is not None and r.alias_info.is_write for r in schema.returns)
        fn = RESHAPING.get(name, overload)
        if not view and len(op.results) == 1:
            fn = _with_dtype(fn, op.results[0].type)
        self.steps.append(Step(fn, args, kwargs, outs, "aten", name, view, in_place=in_place))

    def _add_extern(self, group, module) -> None:
        """An extern group's body runs as ATen calls: views of the operands, then the call."""
        block = group.regions[0].blocks[0]
        # Operands may be constants or lists as well as tensors.
        for arg, operand in zip(block.arguments, group.operands):
            self._aliases[arg] = self._arg(operand)
        first = len(self.steps)
        ops = list(block.operations)
        for op in ops[:-1]:
            self._add(op, module)
        for step in self.steps[first:]:
            step.operand_view = step.view
        for result, value in zip(group.results, ops[-1].operands):
            self._aliases[result] = self._arg(value)

    def _add_call(self, op, module) -> None:
        """A call of a function of the module (a layer compiled once): its program, built once, run per call."""
        name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        if name not in self.callees:
            callee = next((f for f in module.body.operations if f.operation.name == "func.func"
                           and ir.StringAttr(f.attributes["sym_name"]).value == name), None)
            if callee is None or not len(callee.regions[0].blocks):
                raise UnsupportedModelError(f"mlirfuse cannot run a call of @{name}: no such function (at {op.location})")
            self.callees[name] = Program(callee, module, self._on_kernel, caller=self)
        callee = self.callees[name]
        args = [self._arg(v) for v in op.operands]
        outs = [self._slot(r) for r in op.results]
        self.steps.append(Step(callee.call, args, {}, outs, "call", name, inner_peak=callee.plan.planned_peak_bytes))

    @property
    def straight_line(self) -> bool:
        """How a call runs: the generated straight-line function (runtime/codegen.py), or `run` interpreting the
        steps. Set on the calling program, it holds for every function it calls."""
        return self._straight_line

    @straight_line.setter
    def straight_line(self, value: bool) -> None:
        for program in [self, *self.callees.values()]:
            program._straight_line = bool(value)

    @functools.cached_property
    def generated(self) -> Generated:
        """This program as straight-line Python (runtime/codegen.py): its source text and globals."""
        return generate(self)

    @property
    def source(self) -> str:
        """The generated `call(args)`, with each called layer's after it."""
        parts = [self.generated.source]
        for name, callee in self.callees.items():
            parts.append(f"# @{name}\n{callee.generated.source}")
        return "\n".join(parts)

    @functools.cached_property
    def _generated_call(self) -> Callable[[list], list]:
        return self.generated.function()

    def execute(self, arguments: list) -> list:
        """The results for `arguments` (a list the program takes over and empties, as `run`): through the
        generated function where `straight_line` is on, else `run`."""
        if self.straight_line:
            return self._generated_call(arguments)
        return self.run(arguments)

    def call(self, *arguments) -> list:
        """The results for `arguments`, each a tensor of its own: a result sharing an argument's buffer
        (or a constant's) is copied, so that the caller's plan, which counts a call's results as new
        buffers, holds."""
        results = self.execute(list(arguments))
        for i in self._aliased_returns:
            results[i] = results[i].clone()
        return results

    @functools.cached_property
    def _aliased_returns(self) -> list[int]:
        owner = buffers(self.steps, self._next_slot)
        made = {s for step in self.steps if step.kind in ("launch", "aten", "call") and not step.view and not step.in_place
                for s in step.outs}
        return [i for i, (kind, v) in enumerate(self.returns) if kind != "slot" or owner[v] not in made]

    @property
    def written_back_in_place(self) -> frozenset[int]:
        """The positions of `written_back` results a launch stores in their argument (the caller's copy moves nothing)."""
        return self.plan.stored_in_place

    @functools.cached_property
    def arguments_written_in_place(self) -> tuple[int, ...]:
        """The argument positions a launch stores a `written_back` result in."""
        return tuple(sorted(self._written_back[p] for p in self.plan.stored_in_place))

    @property
    def allocated_bytes(self) -> int | None:
        """All intermediates' bytes allocated per run, the callees' per call; None where a size is dynamic."""
        total = self.plan.allocated_bytes
        for step in self.steps:
            if step.kind == "call" and total is not None:
                inner = self.callees[step.name].allocated_bytes
                total = None if inner is None else total + inner
        return total

    def launch_counts(self) -> dict[str, int]:
        """Kernel name -> its launches per call (a deduplicated layer's once per call of it)."""
        counts: dict[str, int] = {}
        for step in self.flat_steps():
            if step.kind == "launch":
                counts[step.name] = counts.get(step.name, 0) + 1
        return counts

    def flat_steps(self):
        """The steps a call runs, the callees' in place of each call step."""
        for step in self.steps:
            if step.kind == "call":
                yield from self.callees[step.name].flat_steps()
            else:
                yield step

    def _add_body(self, kernel, launch, module) -> None:
        """A launch of a kernel the lowering refused: its body's ops as ATen steps, in fresh slots per launch."""
        block = kernel.regions[0].blocks[0]
        for arg, operand in zip(block.arguments, launch.operands):
            self._aliases[arg] = self._arg(operand)
        values = launch_scalars(launch)
        for op in block.operations:  # the kernel's scalar arguments: this launch's values
            if SCALAR_MARK in op.attributes:
                self._aliases[op.results[0]] = ("const", values[ir.IntegerAttr(op.attributes[SCALAR_MARK]).value])
        ops = list(block.operations)
        for op in ops[:-1]:
            self._add(op, module)
        for result, value in zip(launch.results, ops[-1].operands):
            self._aliases[result] = self._arg(value)
        # The next launch of this kernel computes its values anew: forget these values' slots (not their numbers).
        for op in ops[:-1]:
            for r in op.results:
                self.slots.pop(r, None)
                self._lists.pop(r, None)

    def run(self, arguments: list, on_step: Callable | None = None) -> list:
        """The results for `arguments`, a list the program takes over and empties (AOTAutograd's boxed
        convention), so that an input whose last use has passed is freed where the caller holds no other
        reference (a backward graph's saved activations).

        `on_step(index, env)` is called after each step, before the slots it used last are dropped
        (what is live during the step: memory measurements); dead values' tensors kept for a later launch
        to take (`Plan.take`) follow the slots in `env`.
        """
        env = list(arguments) + [None] * (self._next_slot - len(arguments))
        arguments.clear()
        release, take, kept = self.plan.release_after, self.plan.take, self.plan.kept
        spare = {}  # dead slots' tensors kept for a later launch to take as an output buffer
        for s in self.plan.release_at_start:
            env[s] = None
        for i, step in enumerate(self.steps):
            args = [_value(env, a) for a in step.args]
            kwargs = {k: _value(env, a) for k, a in step.kwargs.items()}
            if i in take:
                kwargs["buffers"] = {j: spare.pop(s) for j, s in take[i].items()}
            result = step.fn(*args, **kwargs)
            args = kwargs = None
            if step.outs:
                if len(step.outs) == 1 and step.kind not in ("launch", "list", "call"):
                    env[step.outs[0]] = result
                else:
                    for slot, r in zip(step.outs, result):
                        env[slot] = r
            result = None
            if on_step is not None:
                on_step(i, [*env, *spare.values()] if spare else env)
            for s in release[i]:
                if s in kept:
                    spare[s] = env[s]
                env[s] = None
        return [_value(env, a) for a in self.returns]


def _value(env: list, arg):
    """A step argument's value.

    A module-level function: a closure over `env` calling itself (for lists) is a reference cycle that
    kept `env`, and every tensor in it, alive after the call until the cyclic collector ran: a forward's
    saved activations outlived their last use in the backward.
    """
    kind, v = arg
    if kind == "slot":
        return env[v]
    if kind == "const":
        return v
    return [_value(env, a) for a in v]


def _nbytes(t: ir.Type) -> int | None:
    """The bytes a tensor of type `t` holds; None for `?` sizes; 0 for anything that is not a tensor."""
    tt = tensor_type(t)
    if tt is None:
        return 0
    if not tt.is_static:
        return None
    return tt.numel * itemsize(tt.dtype)


def _with_dtype(fn: Callable, result_type: ir.Type) -> Callable:
    """`fn`, its tensor result converted to the dtype the IR declares (export's record of eager's dtype).

    The importer may pass a scalar in another type than the model did: a
    bool literal becomes `torch.aten.Int.bool`, and ATen promotes
    `where(c, 1, bool_tensor)` to int64 where the model's `where(c, True, b)`
    stays bool (fuzz seed 123016).
    """
    t = tensor_type(result_type)
    dtype = getattr(torch, t.dtype, None) if t is not None else None
    if not isinstance(dtype, torch.dtype):
        return fn

    def call(*args, **kwargs):
        result = fn(*args, **kwargs)
        if isinstance(result, torch.Tensor) and result.dtype != dtype:
            return result.to(dtype)
        return result

    return call


def _has_dynamic_sizes(kernel) -> bool:
    block = kernel.regions[0].blocks[0]
    values = list(block.arguments) + [r for op in block.operations for r in op.results]
    return any(t is not None and not t.is_static for t in (tensor_type(v.type) for v in values))


def _literal(op, blobs: Callable[[], dict[str, bytes]]) -> torch.Tensor:
    """The tensor of a `torch.vtensor.literal`: dense elements, or a `dense_resource` blob (the FX importer's form)."""
    t = tensor_type(op.results[0].type)
    if t is None:
        raise UnsupportedModelError(f"mlirfuse cannot run a 'torch.vtensor.literal' of type {op.results[0].type} (at {op.location})")
    dtype = getattr(torch, t.dtype)
    attr = op.attributes["value"]
    if isinstance(attr, ir.DenseElementsAttr):
        if attr.is_splat:
            value = attr.get_splat_value()
            return torch.full(t.shape, value.value if isinstance(value, (ir.FloatAttr, ir.BoolAttr)) else ir.IntegerAttr(value).value, dtype=dtype)
        try:
            data = bytes(memoryview(attr))
        except BufferError:  # bf16: no Python buffer; its printed elements are exact
            values = [float(v) for v in re.findall(r"[-+]?(?:inf|nan|[\d.]+(?:e[-+]?\d+)?)", str(attr).split(":")[0][6:])]
            return torch.tensor(values, dtype=torch.float32).to(dtype).reshape(t.shape)
    else:
        name = str(attr).removeprefix("dense_resource<").split(">", 1)[0]
        if name not in blobs():
            raise UnsupportedModelError(f"mlirfuse cannot run a 'torch.vtensor.literal' of {attr}: no such blob (at {op.location})")
        data = blobs()[name]
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(t.shape).clone() if data else torch.empty(t.shape, dtype=dtype)


# One blob of the `{-# dialect_resources: { builtin: { name: "0x..." } } #-}` section.
_BLOB = re.compile(r'^\s*("(?:[^"\\]|\\.)*"|[^\s:]+): "0x([0-9A-Fa-f]*)"', re.MULTILINE)


def resource_blobs(module: ir.Module) -> dict[str, bytes]:
    """Name -> bytes of the module's `dense_resource` blobs.

    The bindings read no blob back, and an op prints without them: the
    module's printed resource section is the one place they are. A blob's
    first 4 bytes are its alignment.
    """
    _, _, section = str(module).rpartition("{-#")
    return {key.strip('"'): bytes.fromhex(data)[4:] for key, data in _BLOB.findall(section)}
