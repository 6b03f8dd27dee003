"""The pipeline's CPU time at two revisions, run interleaved: is a change a compile-time regression?

    python bench/compile_ab.py --base ab16d45            # this checkout vs ab16d45, table to bench/RESULTS.md
    python bench/compile_ab.py --base HEAD~3 --steps 100 --no-write

Wall-clock tables (bench/compile_time.py) taken on a shared machine move
with the load; this script compares two checkouts under the same load. The
unrolled LSTM of bench/compile_time.py is imported once (by this checkout)
and written out as torch-dialect text; then for each repeat, each revision
parses it in a fresh subprocess and runs `mlirfuse-pipeline` once, timed
with `time.process_time` (CPU seconds of that process, not wall time). The
two revisions alternate, so load changes hit both; the table shows the best
of the repeats. The base revision is unpacked with `git archive` into a
temporary directory.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from report import header, markdown_table, publish  # noqa: E402

# Run in the checkout under test (its mlirfuse first on sys.path); prints CPU seconds.
CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
try:
    from mlirfuse.dialect import make_context
except ImportError:  # older checkouts
    from mlirfuse.ir import make_context
from mlirfuse.ir import ir
from mlirfuse.passes.pipeline import build_pass_manager
text = open(sys.argv[2]).read()
with make_context() as ctx:
    module = ir.Module.parse(text)
    pm = build_pass_manager("builtin.module(mlirfuse-pipeline)", ctx)
    start = time.process_time()
    pm.run(module.operation)
    print(time.process_time() - start)
"""


def cpu_seconds(checkout: Path, mlir: Path) -> float:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(checkout), str(mlir)], capture_output=True, text=True, check=True
    )
    return float(out.stdout.split()[-1])


def unpack(rev: str, into: Path) -> str:
    """`rev`'s tree under `into`; returns its short hash."""
    short = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True, check=True)
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return short.stdout.strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the git revision to compare this checkout with")
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 200, 400], help="LSTM sizes (time steps)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="do not append to bench/RESULTS.md")
    args = parser.parse_args(argv)

    from mlirfuse.compiler import count_aten_ops
    from mlirfuse.frontend.importer import import_module
    from compile_time import lstm

    head = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base_dir = Path(tmp) / "base"
        base_dir.mkdir()
        base = unpack(args.base, base_dir)
        for steps in args.steps:
            model, inputs = lstm(steps)
            imported = import_module(model.eval(), inputs)
            mlir = Path(tmp) / f"lstm{steps}.mlir"
            mlir.write_text(str(imported.module))
            times: dict[str, list[float]] = {"base": [], "this": []}
            for _ in range(args.repeats):
                times["base"].append(cpu_seconds(base_dir, mlir))
                times["this"].append(cpu_seconds(ROOT, mlir))
            b, t = min(times["base"]), min(times["this"])
            print(f"LSTM {steps}: base {times['base']} this {times['this']}", file=sys.stderr)
            rows.append([f"{steps} steps", str(count_aten_ops(imported.module)), f"{b:.2f}", f"{t:.2f}", f"{t / b:.2f}"])
    columns = ("LSTM", "ops", f"{base} CPU s", f"{head.stdout.strip()} CPU s", "ratio")
    report = (
        f"{header('compile_ab.py')}\n\n`mlirfuse-pipeline` CPU seconds (best of {args.repeats}, "
        f"interleaved subprocesses), {args.base} ({base}) vs this checkout:\n\n{markdown_table(columns, rows, 1)}\n"
    )
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
