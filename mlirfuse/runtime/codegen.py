"""A Program as straight-line Python: `def call(args):`, one line per step (Inductor's `call()` wrapper).

`Program.run` interprets its steps per call: for each step it gathers the
arguments from a slot list, calls the step and stores its results, then drops
the slots the liveness plan (runtime/liveness.py) releases there. The generated
function does the same work with none of the interpreting: one local variable
per slot (`s7`), one line per step, `del` of the slots after their last use at
the same points as `run` (a dead value kept for a later launch to take its
buffer stays in its variable until that launch), constants and the functions
called bound as globals, and the results returned as `run` returns them.

A launch line calls its kernel's `DirectLauncher` (runtime/kernels.py): a
static kernel's sizes, views, grid, blocks, options, output shapes and
per-layout strides are computed once per device, so a launch is its views,
its output allocations and `fn[grid](...)`; everything else takes the
`Launcher`'s path. Either way the same kernels run on the same values.

`generate(program)` is a pure function of the built Program: the source text
and a dict of globals, which a package can store and load again (issue 20).

    def call(args):
        s0, s1, s2 = args
        args.clear()
        s3, = fused_add_tanh_0(s0, s1)
        del s0
        s4 = aten_mm(s3, s2)
        del s3, s2
        return [s4]
"""

from __future__ import annotations

import builtins
import hashlib
import keyword
import linecache
import math
import re
from dataclasses import dataclass
from typing import Callable

FILENAME_PREFIX = "<mlirfuse program"  # the generated function's `co_filename`: this, its source's hash, ">"

# Names a global must not take: the function's own, its parameter's, and Python's builtins.
_RESERVED = {"call", "args", *dir(builtins)}

# Constants written into the source as literals; everything else is a global of its own.
_LITERALS = (bool, int, str, type(None))


@dataclass(frozen=True)
class Generated:
    """A Program's `call(args)`: its source and the globals the source names."""

    source: str
    globals: dict
    step_lines: tuple[int, ...]  # per step of the program, the line (from 1) of the source running it

    def function(self) -> Callable[[list], list]:
        """The compiled `call`: takes the arguments list and empties it, returns the results list, as `run`."""
        namespace = dict(self.globals)
        filename = f"{FILENAME_PREFIX} {hashlib.sha256(self.source.encode()).hexdigest()[:12]}>"
        # Tracebacks and debuggers show the generated lines.
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(keepends=True), filename)
        exec(compile(self.source, filename, "exec"), namespace)
        return namespace["call"]


class _Names:
    """The globals of one generated function: one name per object, readable where the object has a name."""

    def __init__(self):
        self.globals: dict[str, object] = {}
        self._by_id: dict[object, str] = {}

    def bind(self, value, hint: str, key: object = None) -> str:
        """The global naming `value` (one per `key`, by default per object), named after `hint`."""
        key = id(value) if key is None else key
        if key in self._by_id:
            return self._by_id[key]
        base = re.sub(r"\W", "_", hint.removeprefix("torch.")).strip("_") or "g"
        base = base if base[0].isalpha() else "g_" + base
        name, n = base, 0
        while name in self.globals or name in _RESERVED or keyword.iskeyword(name) or re.fullmatch(r"s\d+", name):
            n += 1
            name = f"{base}_{n}"
        self.globals[name] = value
        self._by_id[key] = name
        return name


def _targets(slots) -> str:
    """The left side unpacking a sequence into `slots`' variables: `s3, s4`, or `s3,` for one."""
    names = [f"s{s}" for s in slots]
    return ", ".join(names) if len(names) > 1 else f"{names[0]},"


def _literal(v) -> bool:
    """Does `repr(v)` read back as an equal value of the same type (ints, finite floats, strings; lists, tuples
    and dicts of them)?"""
    if isinstance(v, float):
        return type(v) is float and math.isfinite(v)
    if isinstance(v, (list, tuple)):
        return type(v) in (list, tuple) and all(map(_literal, v))
    if isinstance(v, dict):
        return type(v) is dict and all(_literal(k) and _literal(x) for k, x in v.items())
    return type(v) in _LITERALS


def generate(program) -> Generated:
    """The straight-line `call(args)` of `program` (runtime.program.Program), released as its plan says."""
    plan, names = program.plan, _Names()

    def value(arg) -> str:
        kind, v = arg
        if kind == "slot":
            return f"s{v}"
        if kind == "list":
            return "[" + ", ".join(value(a) for a in v) + "]"
        return repr(v) if _literal(v) else names.bind(v, "c")

    lines = ["def call(args):"]
    if program.num_args:
        lines.append(f"    {_targets(range(program.num_args))} = args")
    lines.append("    args.clear()")
    if plan.release_at_start:
        lines.append("    del " + ", ".join(f"s{s}" for s in plan.release_at_start))
    step_lines: list[int] = []
    kept: set[int] = set()  # dead slots whose tensors wait in their variables for a launch to take their buffers
    for i, step in enumerate(program.steps):
        if step.kind == "launch":
            fn = names.bind(step.fn.direct, step.name)
        elif step.kind == "call":  # a layer compiled once: one global for every call of it
            fn = names.bind(program.callees[step.name].call, step.name, key=("call", step.name))
        elif step.kind == "aten":
            fn = names.bind(step.fn, step.name)
        else:
            fn = None
        args = [value(a) for a in step.args]
        args += [f"{k}={value(a)}" for k, a in step.kwargs.items()]
        taken = plan.take.get(i, {})
        if taken:
            args.append("buffers={" + ", ".join(f"{j}: s{s}" for j, s in taken.items()) + "}")
        if step.kind == "const":
            expression = names.bind(step.fn(), "const")
        elif step.kind == "list":
            expression = args[0]
        else:
            expression = f"{fn}({', '.join(args)})"
        if not step.outs:
            line = expression
        elif len(step.outs) == 1 and step.kind not in ("launch", "list", "call"):
            line = f"s{step.outs[0]} = {expression}"
        else:
            line = f"{_targets(step.outs)} = {expression}"
        step_lines.append(len(lines) + 1)
        lines.append(f"    {line}")
        released = [s for s in plan.release_after[i] if s not in plan.kept] + [s for s in taken.values()]
        kept.update(s for s in plan.release_after[i] if s in plan.kept)
        kept.difference_update(taken.values())
        if released:
            lines.append("    del " + ", ".join(f"s{s}" for s in released))
    assert not kept, f"kept buffers never taken: {sorted(kept)}"
    lines.append("    return [" + ", ".join(value(a) for a in program.returns) + "]")
    return Generated("\n".join(lines) + "\n", names.globals, tuple(step_lines))
