"""Cold compile time of a transformer as it deepens, each distinct layer compiled once or every layer compiled.

    python bench/compile_layers.py              # print the table, make it this script's section of bench/RESULTS.md
    python bench/compile_layers.py --no-write   # print only

`transformers.GPT2Model` (d=256, 4 heads, random weights, `use_cache=False`)
on token ids [2, 64], at 2, 12 and 32 layers. Each timing is one
`mlirfuse.compile` in a fresh process with an empty kernel cache (export,
import, the pipeline and the lowering included), in CPU seconds
(`time.process_time`), the best of `--repeats` processes; with
`dedup_layers=True` (the default: frontend/layers.py) and `False`. The
issue's bar: 32 layers within 2x the 2-layer time, results matching eager.

Beside it, TorchInductor's cold compile of the same model in the same run:
`torch.compile(model)` and its first call, in a fresh process with empty
Inductor caches (FX graph and autograd caches off, a new cache directory),
compile threads 1 so that its C++ compiler runs are waited-for children.
CPU seconds for both are the process's own plus its waited-for children's
(`resource.getrusage`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from report import header, markdown_table, publish  # noqa: E402

LAYERS = (2, 12, 32)
REPEATS = 2
COLUMNS = ("layers", "dedup on: CPU s", "dedup off: CPU s", "on / off", "on / on at the first depth", "layer classes",
           "max abs diff vs eager", "inductor: CPU s", "inductor / inductor at the first depth", "inductor max abs diff")

MODEL = """
import json, resource, sys, torch, transformers
transformers.logging.set_verbosity_error()


def cpu():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


layers = int(sys.argv[1])
config = transformers.GPT2Config(n_layer=layers, n_head=4, n_embd=256, n_positions=128, vocab_size=1000, use_cache=False)
torch.manual_seed(0)
model = transformers.GPT2Model(config).eval()
ids = torch.randint(0, 1000, (2, 64))
"""

# Run in a fresh process: compile once, print the CPU seconds, the layer classes and the error against eager.
CHILD = MODEL + """
import mlirfuse
dedup = sys.argv[2] == "on"
start = cpu()
cm = mlirfuse.compile(model, (ids,), dedup_layers=dedup)
seconds = cpu() - start
with torch.no_grad():
    diff = (cm(ids).last_hidden_state - model(ids).last_hidden_state).abs().max().item()
print(json.dumps({"seconds": seconds, "classes": cm.stats.get("layer_classes", 0), "diff": diff}))
"""

# The same model through torch.compile (Inductor's CPU code generation): compile and first call.
INDUCTOR = MODEL + """
start = cpu()
compiled = torch.compile(model)
with torch.no_grad():
    out = compiled(ids).last_hidden_state
seconds = cpu() - start
with torch.no_grad():
    diff = (out - model(ids).last_hidden_state).abs().max().item()
print(json.dumps({"seconds": seconds, "diff": diff}))
"""


def run(layers: int, dedup: bool | None, repeats: int) -> dict:
    """The best of `repeats` fresh processes compiling GPT2Model with `layers` layers (dedup None: Inductor)."""
    runs = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            if dedup is None:
                env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TORCHINDUCTOR_FX_GRAPH_CACHE="0",
                           TORCHINDUCTOR_AUTOGRAD_CACHE="0", TORCHINDUCTOR_COMPILE_THREADS="1")
                env.pop("TRITON_INTERPRET", None)
                command = [sys.executable, "-c", INDUCTOR, str(layers)]
            else:
                env = dict(os.environ, MLIRFUSE_CACHE_DIR=cache, TRITON_INTERPRET="1")
                command = [sys.executable, "-c", CHILD, str(layers), "on" if dedup else "off"]
            out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    return min(runs, key=lambda r: r["seconds"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="do not replace this script's section of RESULTS.md")
    parser.add_argument("--layers", type=int, nargs="+", default=list(LAYERS), help="depths (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="processes per timing, best kept (default: %(default)s)")
    args = parser.parse_args(argv)
    results = {}
    for layers in args.layers:
        results[layers] = {dedup: run(layers, dedup, args.repeats) for dedup in (True, False, None)}
        print(f"{layers} layers: {results[layers][True]['seconds']:.2f}s on, {results[layers][False]['seconds']:.2f}s off, "
              f"inductor {results[layers][None]['seconds']:.2f}s", file=sys.stderr)
    base, inductor_base = (results[args.layers[0]][key]["seconds"] for key in (True, None))
    rows = []
    for layers, r in results.items():
        on, off, inductor = r[True], r[False], r[None]
        rows.append([str(layers), f"{on['seconds']:.2f}", f"{off['seconds']:.2f}", f"{on['seconds'] / off['seconds']:.2f}",
                     f"{on['seconds'] / base:.2f}", str(on["classes"]), f"{max(on['diff'], off['diff']):.1e}",
                     f"{inductor['seconds']:.2f}", f"{inductor['seconds'] / inductor_base:.2f}", f"{inductor['diff']:.1e}"])
    report = f"{header('compile_layers.py')}\n\n{markdown_table(COLUMNS, rows, 1)}\n"
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
