"""Checks on textual IR input (mlirfuse-opt's, the fusion graph's) that MLIR's parser does not make, or makes by crashing.

Before parsing (on the bytes and text): the input is UTF-8, its brackets nest
no deeper than `MAX_NESTING` (the parser recurses once per level and
overflows the C stack a few thousand levels down, killing the process with
SIGSEGV), and it holds something besides comments.

After parsing (on the IR): the context accepts unregistered dialects so that
the `fusion` ops parse (see mlirfuse.dialect.fusion), which would also let
any misspelled dialect through; only `fusion` may be unregistered (unless
--allow-unregistered-dialect, as in mlir-opt). And no tensor type holds more
elements than int64 can count.

Each failure is a `Diag` (text checks) or a diagnostic emitted on the
offending op (IR checks), located at line:col like MLIR's own.
"""

from __future__ import annotations

import math
import re

from mlirfuse.diagnostics import Diag
from mlirfuse.ir import ir, tensor_type

MAX_NESTING = 256
_INT64_MAX = 2**63 - 1
# Tokens that matter for nesting: string literals and comments (skipped), `->`
# (its `>` closes nothing), then brackets.
_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|[{(\[<]|[})\]>]')
_OPENERS, _CLOSERS = "{([<", "})]>"


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and byte column of `offset`, as MLIR counts them."""
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def decode(data: bytes, filename: str) -> tuple[str | None, Diag | None]:
    """The input as text, or an error at the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        line, col = _line_col(data, e.start)
        return None, Diag("error", filename, line, col, f"input is not valid UTF-8: byte 0x{data[e.start]:02x} ({e.reason})")


def check_text(text: str, filename: str) -> Diag | None:
    """An error for input that holds nothing, or nests too deeply to parse safely."""
    # A string literal holding `//` keeps its opening quote, so this is empty only for comments.
    if not re.sub(r"//[^\n]*", "", text).strip():
        return Diag("error", filename, 1, 1, "input holds no operations (it is empty or only comments)")
    depth = 0
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token in _OPENERS:
            depth += 1
            if depth > MAX_NESTING:
                before = text[: m.start()].encode()
                line, col = _line_col(before, len(before))
                return Diag("error", filename, line, col, f"input nests deeper than {MAX_NESTING} levels")
        elif token in _CLOSERS:
            depth -= 1
    return None


def check_ir(module: ir.Module, allow_unregistered: bool = False) -> bool:
    """Emit an error for each op of an unknown dialect and each oversized tensor; True if none.

    `allow_unregistered` (mlir-opt's --allow-unregistered-dialect) lets ops of unknown dialects through.
    """
    ok = True
    context = module.context

    def visit(op):
        nonlocal ok
        problem = _problem(op, allow_unregistered, context)
        if problem is not None:
            op.location.emit_error(problem)
            ok = False
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return ok


def _problem(op, allow_unregistered: bool, context: ir.Context) -> str | None:
    """The first thing wrong with `op` itself (not its regions), if anything."""
    name = op.name
    if not (allow_unregistered or name.startswith("fusion.") or context.is_registered_operation(name)):
        return f"operation '{name}' belongs to no registered dialect"
    for attr_name in op.attributes:
        bad = _unknown_in_attr(op.attributes[attr_name])
        if bad is not None:
            return f"attribute '{attr_name}' holds {bad} of no registered dialect"
    values = list(op.results) + [a for r in op.regions for b in r.blocks for a in b.arguments]
    return next((m for m in (_bad_type(v.type) for v in values) if m is not None), None)


def _bad_type(t: ir.Type) -> str | None:
    bad = _unknown_in_type(t)
    if bad is not None:
        return f"type {bad} belongs to no registered dialect"
    tensor = tensor_type(t)
    if tensor is not None and tensor.is_static and math.prod(tensor.shape) > _INT64_MAX:
        return f"type {t} has more elements than int64 can count"
    return None


def _unknown_in_attr(attr: ir.Attribute) -> str | None:
    """The first attribute or type from an unregistered dialect inside `attr`."""
    if isinstance(attr, ir.OpaqueAttr):
        return f"'{attr}'"
    if isinstance(attr, ir.TypeAttr):
        return _unknown_in_type(attr.value)
    if isinstance(attr, ir.ArrayAttr):
        return next((b for b in map(_unknown_in_attr, attr) if b is not None), None)
    if isinstance(attr, ir.DictAttr):
        return next((b for b in (_unknown_in_attr(a.attr) for a in attr) if b is not None), None)
    return None


def _unknown_in_type(t: ir.Type) -> str | None:
    if isinstance(t, ir.OpaqueType):
        return f"'{t}'"
    if isinstance(t, ir.FunctionType):
        return next((b for b in map(_unknown_in_type, list(t.inputs) + list(t.results)) if b is not None), None)
    return None
