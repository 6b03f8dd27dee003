"""Compiled packages (issue 20 item 5): what writing one costs, and what loading it saves a second process.

    python bench/package.py              # print the table, make it bench/package.py's section of bench/RESULTS.md
    python bench/package.py --no-write   # print only
    python bench/package.py --layers 12 --targets sm_90

For a GPT2Model (d=256, 4 heads, input [2,64], random weights from a config,
offline) in fresh processes, one run: (1) `mlirfuse.compile` plus
`mlirfuse.save` with every kernel compiled ahead of time for the targets
(cold: an empty compile cache, Triton's own cache empty), as `mlirfuse
compile` does: `aot_targets=` starts the worker pool before the export and
hands each kernel to it once the program is built (specialized for the launch a dry run records), so "compile s" holds the pool's
start-up and "AOT s" is what is left of the compiles once the program is
built (then the breakdown: seconds per Triton stage summed over the
compiles, in the workers, the workers' warm-up and CPU seconds); (2) a second
process calling `mlirfuse.load` on that package (the first load imports
what the runtime needs: torch-mlir's bindings, Triton; "load again" is a
second load in that process), then the first call
(kernels run in the Triton interpreter on this CPU machine); (3) Inductor's
cold compile (`torch.compile`, first call, its caches in an empty folder:
CPU C++ here) as the yardstick. Seconds are wall seconds of each phase
(this process's Python imports excluded); CPU seconds where said.

Where the AOT seconds went (12 layers, sm_90; issue 20's 5x line). On main
b5cee48 at load 2.3 (one run, traced): compile 1.17 s, then `save` 2.74 s,
of which
- pool start-up, paid in `save`: the workers started there; each spent its
  first 0.6 s warming up: Python and Triton's import 0.2 s, then inside its
  first compile Triton's own cache key (`triton_key()`, a sha256 of
  libtriton and Triton's sources, 0.3 s CPU, computed even with
  `always_compile`), the interpreter and numpy (imported by `triton_mode`
  only to find nothing to swap, 0.14 s) and the code generator's import;
  the worker imported no torch;
- 13 compiles for 12 distinct kernels: `ln_f`'s layer norm is the blocks'
  but for an identity view (two `fusion.kernel`s, one source but the name),
  0.17 s + 0.37 s; no other kernel or GEMM config compiled twice (one
  config per GEMM, no autotuning);
- the compiles themselves, one after the other in one process: AST to TTIR
  0.17 s (+0.35 s once, the first compile's warm-up above), TTIR 0.04,
  TTGIR 0.52, LLVM IR 1.65, PTX 0.37, cubin (ptxas) 0.90: 3.82 s, of which
  the four GEMMs and the attention kernel 2.61 s (68%);
- the caller's side: a request's pipe and files ~1 ms, cuobjdump for the
  resources 0.03 s in all; queueing: in lowering order, the two workers
  ending 0.06 s apart (the GELU GEMM, the longest, started at 1.7 s of 2.7).
What changed (runtime/aot.py): the pool starts with the compile
(`aot_targets=`) and warms up (Triton's imports, its cache key, the
backend's key per target) while the model exports; the worker imports no
interpreter; each kernel goes to the pool once the program is built; the most
expensive waiting kernel first; one compile per (source but the name,
signature, constants, options, target). What is left is the compiles
themselves (LLVM and ptxas at Triton's levels, the warps and stages a
launch uses), two at a time on this machine's 2 cores; under load every
second of it is CPU that other processes share. The breakdown below each
table is this run's.
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

COLUMNS = ("layers", "targets", "kernels", "compile s", "AOT s", "compile + AOT s", "load s", "load again s", "first call s (interpreter)",
           "max abs diff vs eager", "inductor cold compile s", "inductor / (compile + AOT)")


def _model(layers: int):
    import torch
    import transformers

    config = transformers.GPT2Config(n_layer=layers, n_head=4, n_embd=256, n_positions=64, vocab_size=1000,
                                     use_cache=False, attn_implementation="sdpa")
    torch.manual_seed(0)
    return transformers.GPT2Model(config).eval(), torch.randint(0, 1000, (2, 64))


def worker(what: str, layers: int, package: str, targets: str) -> None:
    import torch

    import mlirfuse
    from mlirfuse.runtime.aot import pool_stats

    model, ids = _model(layers)
    result = {}
    if what == "save":
        aot_targets = [t for t in targets.split(",") if t]
        start, cpu = time.perf_counter(), time.process_time()
        cm = mlirfuse.compile(model, (ids,), aot_targets=aot_targets)
        result["compile"] = time.perf_counter() - start
        start = time.perf_counter()
        manifest = mlirfuse.save(cm, package, aot_targets)
        result["aot"] = time.perf_counter() - start
        result["cpu"] = time.process_time() - cpu
        result["kernels"] = len(manifest["kernels"])
        result["pool"] = pool_stats()
        result["compiles"] = [
            [name, target, entry["function"], entry["compile_seconds"], entry["compile_stages"]]
            for name, kernel in manifest["kernels"].items() for target, entry in kernel["targets"].items()
        ]
    elif what == "load":
        start = time.perf_counter()
        run = mlirfuse.load(package, weights=model)
        result["load"] = time.perf_counter() - start
        start = time.perf_counter()
        mlirfuse.load(package, weights=model)
        result["load_again"] = time.perf_counter() - start
        start = time.perf_counter()
        got = run(ids).last_hidden_state
        result["first_call"] = time.perf_counter() - start
        with torch.no_grad():
            result["diff"] = (got - model(ids).last_hidden_state).abs().max().item()
    else:
        start = time.perf_counter()
        compiled = torch.compile(model)
        with torch.no_grad():
            compiled(ids)
        result["inductor"] = time.perf_counter() - start
    print(json.dumps(result))


def _run(what: str, layers: int, package: Path, targets: str, env: dict) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", what, "--layers", str(layers), "--package",
                           str(package), "--targets", targets], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


STAGES = ("load", "ast", "ttir", "ttgir", "llir", "ptx", "cubin")


def _breakdown(layers: int, saved: dict) -> str:
    """Where the ahead-of-time compiles went: per Triton stage, per kernel, the pool's start-up, shared compiles."""
    compiles = [c for c in saved["compiles"] if c[0] == c[2]]  # a kernel whose cubin is its own
    shared = [f"{name} ({target}) = {function}" for name, target, function, _, _ in saved["compiles"] if name != function]
    stages = {stage: sum(c[4].get(stage, 0.0) for c in compiles) for stage in STAGES}
    slowest = sorted(compiles, key=lambda c: -c[3])[:4]
    pool = saved["pool"]
    ready = ", ".join(f"{w['ready_after']:.2f}" for w in pool if w["ready_after"] is not None)
    return (
        f"{layers} layers, AOT breakdown: {len(compiles)} compiles for {len(saved['compiles'])} kernel-targets"
        + (f" ({len(shared)} sharing an equal kernel's: {'; '.join(shared)})" if shared else "")
        + "; wall seconds per stage summed over the compiles, in the workers: "
        + ", ".join(f"{stage} {seconds:.2f}" for stage, seconds in stages.items())
        + f" (total {sum(stages.values()):.2f}; slowest: "
        + ", ".join(f"{c[0]} {c[3]:.2f}" for c in slowest)
        + f"). Pool: {len(pool)} workers, warm {ready} s after their start (their own warm-up: Triton's imports "
        + "and cache key, " + ", ".join(f"{w['warmup']:.2f}" for w in pool if w["warmup"] is not None)
        + f" s), CPU seconds in the workers and their ptxas {sum(w['cpu'] for w in pool):.2f}, "
        + f"in the compiling process {saved['cpu']:.2f}."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[12])
    parser.add_argument("--targets", default="sm_90")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--worker", default=None)
    parser.add_argument("--package", default="")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.layers[0], args.package, args.targets)
        return 0
    from report import header, markdown_table, publish

    rows, notes = [], []
    for layers in args.layers:
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, MLIRFUSE_CACHE_DIR=f"{tmp}/cache", TRITON_CACHE_DIR=f"{tmp}/triton",
                       TORCHINDUCTOR_CACHE_DIR=f"{tmp}/inductor", TRITON_INTERPRET="1")
            env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
            saved = _run("save", layers, Path(tmp) / "pkg", args.targets, env)
            loaded = _run("load", layers, Path(tmp) / "pkg", args.targets, env)
            inductor = None if args.no_inductor else _run("inductor", layers, Path(tmp) / "pkg", args.targets, env)
        total = saved["compile"] + saved["aot"]
        rows.append([
            str(layers), args.targets or "none", str(saved["kernels"]), f"{saved['compile']:.2f}", f"{saved['aot']:.2f}",
            f"{total:.2f}", f"{loaded['load']:.3f}", f"{loaded['load_again']:.3f}", f"{loaded['first_call']:.2f}", f"{loaded['diff']:.1e}",
            "" if inductor is None else f"{inductor['inductor']:.2f}",
            "" if inductor is None else f"{inductor['inductor'] / total:.2f}",
        ])
        print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
        notes.append(_breakdown(layers, saved))
        print(notes[-1], file=sys.stderr, flush=True)
    report = f"{header('package.py')}\n\n{markdown_table(COLUMNS, rows)}\n\n" + "\n\n".join(notes) + "\n"
    publish(report, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
