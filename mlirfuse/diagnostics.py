"""Diagnostics as mlir-opt prints them, and `-verify-diagnostics` (for mlirfuse-opt and the fusion graph).

Diagnostics are collected from the context's handler and from MLIRError
exceptions, then printed as `file:line:col: error: message`. Under
`--verify-diagnostics`, each `// expected-error @+N {{text}}` (also
`warning`, `remark`, `note`; `@-N`, `@above`, `@below`) must be matched by a
diagnostic on that line whose message contains `text`, and no diagnostic may
go unexpected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlirfuse.ir import ir

_LOC = re.compile(r'loc\("([^"]*)":(\d+):(\d+)\)')
_EXPECT = re.compile(r"expected-(error|warning|remark|note)\s*(?:@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}")
_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.REMARK: "remark",
    ir.DiagnosticSeverity.NOTE: "note",
}


@dataclass(frozen=True)
class Diag:
    severity: str
    file: str
    line: int
    col: int
    message: str

    def format(self) -> str:
        where = f"{self.file}:{self.line}:{self.col}" if self.line else self.file
        return f"{where}: {self.severity}: {self.message}"


def to_diag(severity, location, message: str, filename: str) -> Diag:
    m = _LOC.search(str(location))
    if not m:
        return Diag(severity, filename, 0, 0, message)
    file = filename if m.group(1) in ("-", "") else m.group(1)
    return Diag(severity, file, int(m.group(2)), int(m.group(3)), message)


class Collector:
    """Context diagnostic handler that keeps everything it sees."""

    def __init__(self, context: ir.Context, filename: str):
        self.filename = filename
        self.diags: list[Diag] = []
        self._handle = context.attach_diagnostic_handler(self._on_diagnostic)

    def _on_diagnostic(self, d) -> bool:
        self.add(_SEVERITY.get(d.severity, "error"), d.location, d.message)
        for note in d.notes:
            self.add("note", note.location, note.message)
        return True

    def add(self, severity, location, message) -> None:
        diag = to_diag(severity, location, message, self.filename)
        if diag not in self.diags:
            self.diags.append(diag)

    def add_error(self, error: ir.MLIRError) -> None:
        infos = list(error.error_diagnostics)
        if not infos:
            self.diags.append(Diag("error", self.filename, 0, 0, str(error)))
        for info in infos:
            self.add("error", info.location, info.message)
            for note in info.notes:
                self.add("note", note.location, note.message)

    def detach(self) -> None:
        self._handle.detach()


def expectations(text: str, first_line: int) -> list[tuple[str, int, str]]:
    """(severity, line, text) for each expected-* annotation; lines are 1-based in the file."""
    found = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        for m in _EXPECT.finditer(line):
            severity, offset, message = m.groups()
            target = first_line + i
            if offset == "above":
                target -= 1
            elif offset == "below":
                target += 1
            elif offset:
                target += int(offset)
            found.append((severity, target, message))
    return found


def verify(diags: list[Diag], expected: list[tuple[str, int, str]], filename: str) -> list[str]:
    """Messages for every mismatch between produced and expected diagnostics."""
    problems = []
    unmatched = list(diags)
    for severity, line, message in expected:
        hit = next((d for d in unmatched if d.severity == severity and d.line == line and message in d.message), None)
        if hit is None:
            problems.append(f'{filename}:{line}: error: expected {severity} "{message}" was not produced')
        else:
            unmatched.remove(hit)
    for d in unmatched:
        problems.append(f"{d.file}:{d.line}:{d.col}: error: unexpected {d.severity}: {d.message}")
    return problems
