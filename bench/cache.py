"""What the persistent compile cache saves a second process: GPT2Model compiled twice on one cache directory.

    python bench/cache.py              # print the table, make it bench/cache.py's section of bench/RESULTS.md
    python bench/cache.py --no-write   # print only
    python bench/cache.py --layers 2   # another depth

Each row is a fresh process compiling the same GPT2Model (d=256, 4 heads, input
[2,64], random weights from a config, offline): the first on an empty cache
directory, the second on what the first left, the third with the cache off
(MLIRFUSE_NO_CACHE=1) as the control. Phases are CPU seconds of that process
(`time.process_time`), wrapped around mlirfuse's own functions: export
(torch.export's trace and decompositions), FX import (torch-mlir), key (the
program key: printing the imported IR, hashing), pipeline (the passes; on a
hit, parsing the stored IR instead), program (building the runnable Program,
which lowers each kernel or loads it from the cache). "compile" is all of
`mlirfuse.compile`; no call is run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

PHASES = ("export", "FX import", "key", "pipeline / IR parse", "program")


def worker(layers: int) -> None:
    """One compile in this process; prints its phases and cm.stats as JSON."""
    start = time.process_time()
    import torch
    import transformers

    import mlirfuse
    from mlirfuse import compiler
    from mlirfuse.frontend import importer
    from mlirfuse.runtime import cache, program

    imports = time.process_time() - start
    spent = dict.fromkeys(PHASES, 0.0)

    def timed(phase, fn):
        def run(*args, **kwargs):
            began = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[phase] += time.process_time() - began

        return run

    importer.trace = timed("export", importer.trace)
    importer.functional = timed("export", importer.functional)
    importer._import_graph = timed("FX import", importer._import_graph)
    cache.ProgramCache.__init__ = timed("key", cache.ProgramCache.__init__)
    cache.ProgramCache.lookup = timed("pipeline / IR parse", cache.ProgramCache.lookup)
    compiler.run_pipeline = timed("pipeline / IR parse", compiler.run_pipeline)
    program.Program.__init__ = timed("program", program.Program.__init__)

    config = transformers.GPT2Config(n_layer=layers, n_embd=256, n_head=4, n_positions=64, vocab_size=1000, use_cache=False)
    torch.manual_seed(0)
    model = transformers.GPT2Model(config).eval()
    ids = torch.randint(0, 1000, (2, 64))
    began, wall = time.process_time(), time.perf_counter()
    cm = mlirfuse.compile(model, (ids,))
    compiled, wall = time.process_time() - began, time.perf_counter() - wall
    print(json.dumps({"imports": imports, **spent, "compile": compiled, "wall": wall, "stats": cm.stats}))


def run(layers: int, directory: str, **env) -> dict:
    environment = {k: v for k, v in os.environ.items() if k != "MLIRFUSE_NO_CACHE"} | env
    environment["MLIRFUSE_CACHE_DIR"] = directory
    environment["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), environment.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", "--layers", str(layers)], capture_output=True, text=True, env=environment
    )
    if proc.returncode != 0:
        sys.exit(proc.stderr[-4000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.layers)
        return
    from report import header, markdown_table, publish

    with tempfile.TemporaryDirectory(prefix="mlirfuse-bench-cache-") as directory:
        runs = [
            ("first process, empty cache", run(args.layers, directory)),
            ("second process, same cache", run(args.layers, directory)),
            ("cache off (MLIRFUSE_NO_CACHE=1)", run(args.layers, directory, MLIRFUSE_NO_CACHE="1")),
        ]
    columns = ["GPT2Model %d layers d=256 [2,64]" % args.layers, *PHASES, "compile", "wall", "passes", "kernels lowered",
               "program hits", "kernel hits"]
    rows = []
    for name, r in runs:
        s = r["stats"]
        rows.append([name, *(f"{r[p]:.3f}" for p in PHASES), f"{r['compile']:.3f}", f"{r['wall']:.3f}",
                     str(s["passes_run"]), str(s["kernels_compiled"]), str(s["program_cache_hits"]), str(s["kernel_cache_hits"])])
    first, second = runs[0][1], runs[1][1]
    saved = first["pipeline / IR parse"] + first["program"] - second["pipeline / IR parse"] - second["program"]
    share = first["export"] / first["compile"]
    report = "\n\n".join([
        header("cache.py"),
        "CPU seconds per phase of `mlirfuse.compile` in a fresh process (the Python imports, about "
        f"{runs[0][1]['imports']:.1f} s, not counted); wall: the compile's elapsed seconds. Kernels lowered "
        "and hits: `cm.stats` (`kernels_compiled`, `program_cache_hits`, `kernel_cache_hits`).",
        markdown_table(columns, rows),
        f"A hit saves the pipeline and the lowering ({saved:.3f} s here); the export ({share:.0%} of the first "
        "compile) is still paid by every process: a key taken before torch.export's decompositions is what is left.",
    ])
    publish(report, write=not args.no_write)


if __name__ == "__main__":
    main()
