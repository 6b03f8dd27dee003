"""The pipeline's output on every lit RUN line, and on two imported models, written to a folder: a refactor's check.

    python bench/ir_snapshot.py --out /tmp/before        # at the base commit
    python bench/ir_snapshot.py --out /tmp/after --compare /tmp/before

Each `// RUN:` / `# RUN:` line of test/lit is run up to its first `|` (the
FileCheck half dropped), `%s` and `%PYTHON` substituted, in the lit
environment (analyses verified, bounds checked); stdout, stderr and the exit
code go to one file per line. The models are an unrolled 100-step LSTM and a
4-layer GPT-2-style stack (bench/compile_time.py's), their final IR after
`mlirfuse.compile`. `--compare` lists every file that differs and exits 1
if any does: "no output changes" is this script saying nothing.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIT = ROOT / "test" / "lit"
SCRATCH = Path(tempfile.mkdtemp(prefix="ir-snapshot-"))  # lit's %t files
_RUN = re.compile(r"^\s*(?://|#)\s*RUN:\s*(.*)$")


def run_lines() -> list[tuple[str, str]]:
    """(name, shell command) for each RUN line, continuation lines joined, FileCheck dropped."""
    found = []
    for path in sorted(LIT.rglob("*")):
        if path.suffix not in (".mlir", ".py") or "Output" in path.parts or path.name == "lit.cfg.py":
            continue
        lines, pending = [], ""
        for text in path.read_text().splitlines():
            m = _RUN.match(text)
            if not m:
                continue
            part = m.group(1)
            if part.endswith("\\"):
                pending += part[:-1] + " "
                continue
            lines.append(pending + part)
            pending = ""
        for i, line in enumerate(lines):
            command = line.split("|", 1)[0].replace("%PYTHON", sys.executable).replace("%s", str(path))
            command = command.replace("%t", str(SCRATCH / path.stem))
            found.append((f"{path.relative_to(LIT)}.{i}".replace("/", "__"), command))
    return found


def run_one(command: str) -> str:
    env = dict(os.environ, MLIRFUSE_VERIFY_ANALYSES="1", MLIRFUSE_CHECK_BOUNDS="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(command, shell=True, capture_output=True, text=True, env=env, cwd=LIT)
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def model_irs() -> dict[str, str]:
    sys.path.insert(0, str(ROOT / "bench"))
    import torch

    import mlirfuse
    from compile_time import gpt2_stack, lstm

    out = {}
    torch.manual_seed(0)
    model, inputs = lstm(100)
    out["model__lstm100"] = mlirfuse.compile(model, inputs).mlir
    torch.manual_seed(0)
    gpt, inputs = gpt2_stack(4)
    out["model__gpt2_stack4"] = mlirfuse.compile(gpt, inputs).mlir
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path, help="a folder an earlier run wrote")
    parser.add_argument("--no-models", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    lines = run_lines()
    # A file's lines run in order (a later one may read the %t an earlier one wrote), files in parallel.
    by_file: dict[str, list[tuple[str, str]]] = {}
    for name, command in lines:
        by_file.setdefault(name.rsplit(".", 1)[0], []).append((name, command))

    def run_file(group):
        return [(name, run_one(command)) for name, command in group]

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for results in pool.map(run_file, by_file.values()):
            for name, text in results:
                (args.out / name).write_text(text)
    if not args.no_models:
        for name, text in model_irs().items():
            (args.out / name).write_text(text)
    print(f"{len(lines)} RUN lines{'' if args.no_models else ' and 2 models'} written to {args.out}")
    if args.compare is None:
        return 0
    names = sorted({p.name for p in args.out.iterdir()} | {p.name for p in args.compare.iterdir()})
    # --mlir-timing's report holds measured seconds: never byte-identical, so not compared.
    names = [n for n in names if not n.startswith("Tools__timing")]
    differ = [n for n in names if not ((args.out / n).exists() and (args.compare / n).exists()
                                       and filecmp.cmp(args.out / n, args.compare / n, shallow=False))]
    for n in differ:
        print(f"differs: {n}")
    print(f"{len(names) - len(differ)} of {len(names)} identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
