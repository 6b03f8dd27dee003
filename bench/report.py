"""What every bench script prints and appends to bench/RESULTS.md."""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def markdown_table(columns, rows: list[list[str]], text_columns: int = 1) -> str:
    """A markdown table; the first `text_columns` are left-aligned, the rest right-aligned numbers."""
    align = ["---"] * text_columns + ["---:"] * (len(columns) - text_columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def header(script: str) -> str:
    """`### bench/<script>, <date>: <machine> / <cores>, torch <v>, triton <v>`."""
    import torch
    import triton

    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    machine = platform.processor() or platform.machine()
    return (
        f"### bench/{script}, {now}: {machine} / {os.cpu_count()} cores, "
        f"torch {torch.__version__}, triton {triton.__version__}"
    )


def append(report: str) -> None:
    if not RESULTS.exists():
        RESULTS.write_text("# Benchmark results\n\nTables appended by the scripts in bench/, newest last.\n")
    with RESULTS.open("a") as f:
        f.write("\n" + report)


def publish(report: str, write: bool) -> None:
    """Print a bench script's report and, if `write`, append it to bench/RESULTS.md."""
    print(report)
    if write:
        append(report)
