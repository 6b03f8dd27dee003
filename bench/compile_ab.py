"""The pipeline's CPU time at two revisions, run interleaved: is a change a compile-time regression?

    python bench/compile_ab.py --base main               # this checkout vs main: LSTM-400 and the 32-layer GPT-2 stack
    python bench/compile_ab.py --base ab16d45 --steps 100 200 --layers 4 --no-write

Wall-clock tables (bench/compile_time.py) taken on a shared machine move
with the load; this script compares two checkouts under the same load. The
unrolled LSTM and the GPT-2-style stack of bench/compile_time.py (d=128;
imported with `import_module`, so layer deduplication is off: every layer
goes through the pipeline) are imported once (by this checkout) and written
out as torch-dialect text; then for each repeat, each revision parses it in
a fresh subprocess and runs `mlirfuse-pipeline` once, timed with
`time.process_time` (CPU seconds of that process, not wall time; the
import is not counted). The two revisions alternate, so load changes hit
both; the tables show the median of the repeats (and, per model, their
minimum: on this shared machine one process's CPU seconds swing up to 2x
with other tenants' load, so the minimum is the steadier estimate of what
the code costs), per model in CPU seconds per 1000 torch ops (issue 20's
goal: <= 0.3), and per pass on the largest
of each family (each pass's CPU time, from the pipeline's progress
callback). The base revision is unpacked with `git archive` into a
temporary directory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from report import header, markdown_table, publish  # noqa: E402

# Run in the checkout under test (its mlirfuse first on sys.path); prints {"total": s, "passes": {name: s}} in CPU seconds.
CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
try:
    from mlirfuse.dialect import make_context
except ImportError:  # older checkouts
    from mlirfuse.ir import make_context
from mlirfuse.ir import ir
from mlirfuse.passes.pipeline import build_pass_manager
text = open(sys.argv[2]).read()
marks = []
def progress(index, total, name):
    marks.append((name, time.process_time()))
with make_context() as ctx:
    module = ir.Module.parse(text)
    try:
        pm = build_pass_manager("builtin.module(mlirfuse-pipeline)", ctx, progress=progress)
    except TypeError:  # a checkout without progress callbacks: the total only
        pm = build_pass_manager("builtin.module(mlirfuse-pipeline)", ctx)
    start = time.process_time()
    pm.run(module.operation)
    end = time.process_time()
passes = {}
for (name, t), (_, t_next) in zip(marks, marks[1:] + [(None, end)]):
    passes[name] = passes.get(name, 0.0) + t_next - t
print(json.dumps({"total": end - start, "passes": passes}))
"""


def cpu_seconds(checkout: Path, mlir: Path) -> dict:
    """{"total": CPU seconds of `pm.run`, "passes": {pass: CPU seconds}} of `checkout`'s pipeline on `mlir`."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(checkout), str(mlir)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.splitlines()[-1])


def unpack(rev: str, into: Path) -> str:
    """`rev`'s tree under `into`; returns its short hash."""
    short = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True, check=True)
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return short.stdout.strip()


def _median_passes(runs: list[dict]) -> dict[str, float]:
    names = list(dict.fromkeys(name for run in runs for name in run["passes"]))
    return {name: statistics.median(run["passes"].get(name, 0.0) for run in runs) for name in names}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the git revision to compare this checkout with")
    parser.add_argument("--steps", type=int, nargs="*", default=[400], help="LSTM sizes (time steps)")
    parser.add_argument("--layers", type=int, nargs="*", default=[32], help="GPT-2 stack sizes (layers)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="do not write bench/RESULTS.md")
    args = parser.parse_args(argv)

    import torch

    from mlirfuse.compiler import count_aten_ops
    from mlirfuse.frontend.importer import import_module
    from compile_time import gpt2_stack, lstm

    head = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
    this = head.stdout.strip()
    models = [("LSTM", f"{n} steps", lstm, n) for n in args.steps]
    models += [("GPT-2 stack", f"{n} layers", gpt2_stack, n) for n in args.layers]
    rows, by_pass = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        base_dir = Path(tmp) / "base"
        base_dir.mkdir()
        base = unpack(args.base, base_dir)
        for family, size, build, n in models:
            torch.manual_seed(0)
            model, inputs = build(n)
            imported = import_module(model.eval(), inputs)  # one import for both revisions, not timed
            ops = count_aten_ops(imported.module)
            mlir = Path(tmp) / "model.mlir"
            mlir.write_text(str(imported.module))
            runs: dict[str, list[dict]] = {"base": [], "this": []}
            for _ in range(args.repeats):
                runs["base"].append(cpu_seconds(base_dir, mlir))
                runs["this"].append(cpu_seconds(ROOT, mlir))
            b, t = (statistics.median(r["total"] for r in runs[k]) for k in ("base", "this"))
            b_min, t_min = (min(r["total"] for r in runs[k]) for k in ("base", "this"))
            print(f"{family} {size}: base {[round(r['total'], 2) for r in runs['base']]} "
                  f"this {[round(r['total'], 2) for r in runs['this']]}", file=sys.stderr)
            rows.append([family, size, str(ops), f"{b:.2f}", f"{t:.2f}", f"{1000 * b / ops:.3f}", f"{1000 * t / ops:.3f}",
                         f"{t / b:.2f}", f"{1000 * b_min / ops:.3f}", f"{1000 * t_min / ops:.3f}"])
            by_pass[family] = (size, _median_passes(runs["base"]), _median_passes(runs["this"]))
    columns = ("model", "size", "ops", f"{base} CPU s", f"{this} CPU s", f"{base} s / 1000 ops",
               f"{this} s / 1000 ops", "ratio", f"{base} min s / 1000 ops", f"{this} min s / 1000 ops")
    pass_columns, pass_rows = ["pass"], {}
    for family, (size, base_passes, this_passes) in by_pass.items():
        pass_columns += [f"{family} {size}: {base}", this]
        for name in dict.fromkeys([*base_passes, *this_passes]):
            pass_rows.setdefault(name, {})[family] = (base_passes.get(name), this_passes.get(name))
    table = [[name] + [f"{v:.3f}" if v is not None else "-" for family in by_pass for v in cells.get(family, (None, None))]
             for name, cells in pass_rows.items()]
    report = (
        f"{header('compile_ab.py')}\n\n`mlirfuse-pipeline` CPU seconds on imported IR (median of {args.repeats}, "
        f"interleaved subprocesses, import not counted; the min of the repeats beside it: the machine is shared, and "
        f"one process's CPU seconds swing up to 2x with other tenants' load), {args.base} ({base}) vs this checkout "
        f"({this}):\n\n"
        f"{markdown_table(columns, rows, 2)}\n\nCPU seconds per pass (median):\n\n"
        f"{markdown_table(pass_columns, table, 1)}\n"
    )
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
