"""What every bench script prints and writes into bench/RESULTS.md (its own section, the newest run only)."""

from __future__ import annotations

import datetime
import os
import platform
import re
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def markdown_table(columns, rows: list[list[str]], text_columns: int = 1) -> str:
    """A markdown table; the first `text_columns` are left-aligned, the rest right-aligned numbers."""
    align = ["---"] * text_columns + ["---:"] * (len(columns) - text_columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def header(script: str) -> str:
    """`### bench/<script>, <date>: <machine> / <cores>, torch <v>, triton <v>`, then the command that ran."""
    import torch
    import triton

    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    machine = platform.processor() or platform.machine()
    command = " ".join(["python", f"bench/{script}", *sys.argv[1:]])
    return (
        f"### bench/{script}, {now}: {machine} / {os.cpu_count()} cores, "
        f"torch {torch.__version__}, triton {triton.__version__}\n\n`{command}`"
    )


PAGE_INTRO = """# Benchmark results

The current table of each script in bench/, one section per script: running a
script without `--no-write` (`--no-append` for fuzz.py) replaces its section.
Earlier tables are in git's history of this file (`git log -p bench/RESULTS.md`).
"""

_SECTION = re.compile(r"^### bench/([\w.]+),", re.MULTILINE)


def sections(text: str) -> dict[str, str]:
    """Script name -> its newest section (the header line up to the next `##`/`###` heading) in `text`."""
    found = {}
    for m in _SECTION.finditer(text):
        rest = text[m.start():]
        first = rest.find("\n") + 1 or len(rest)
        end = re.search(r"^##", rest[first:], re.MULTILINE)
        found[m.group(1)] = (rest if end is None else rest[: first + end.start()]).strip()
    return found


def page(by_script: dict[str, str]) -> str:
    return PAGE_INTRO + "".join(f"\n{by_script[name]}\n" for name in sorted(by_script))


def replace(report: str) -> None:
    """Put `report` (a section beginning with `header()`) in place of its script's section."""
    current = sections(RESULTS.read_text()) if RESULTS.exists() else {}
    current.update(sections(report))
    RESULTS.write_text(page(current))


def publish(report: str, write: bool) -> None:
    """Print a bench script's report and, if `write`, make it its script's section of bench/RESULTS.md."""
    print(report)
    if write:
        replace(report)
