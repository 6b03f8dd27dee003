"""Compile time of the fusion pipeline as models grow: does it scale linearly in the op count?

    python bench/compile_time.py              # print the table, append it to bench/RESULTS.md, write the plot
    python bench/compile_time.py --no-write   # print only

Two families of models, each at five sizes:

- an unrolled LSTM cell (input 128, hidden 128, batch 1) written in torch
  ops, one step per time step: long chains of small elementwise groups
  between matmuls;
- stacks of pre-LN GPT-2 blocks (d=128, 4 heads, seq 32, batch 1): layer
  norms, softmax and GELU, i.e. reductions as well.

Each model is imported once (not timed). Each timing parses the imported
text afresh and runs one pass manager over it; only `pm.run` is timed.
"seconds" runs `mlirfuse-pipeline` (best of 3 runs); "seconds (recompute)"
runs (once) the same
passes with `{recompute-analyses=true}` on `fusion-fuse-vertical` and `fusion-fuse-horizontal`, which
recomputes its analyses after every rewrite instead of maintaining them
("n/a" if this checkout's pass has no such option). Speedup is
recompute / maintained. Recompute runs are skipped above
`RECOMPUTE_MAX_SIZE`; with the defaults the script runs ~15 minutes, most of it
the quadratic recompute mode at 400 LSTM steps (`--recompute-max-steps 100`
skips the 200- and 400-step recompute runs, for a loaded machine).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from torch import nn

from mlirfuse.compiler import count_aten_ops
from mlirfuse.dialect import make_context
from mlirfuse.errors import PipelineError
from mlirfuse.frontend.importer import import_module
from mlirfuse.ir import ir
from mlirfuse.passes import default_pipeline
from mlirfuse.passes.pipeline import build_pass_manager
from report import RESULTS, header, markdown_table, publish

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reductions import GPT2Block  # noqa: E402

HERE = Path(__file__).resolve().parent
PLOT = HERE / "compile_time.png"

PIPELINE = "builtin.module(mlirfuse-pipeline)"
# The default pipeline with the fuser recomputing its analyses (built from
# default_pipeline() so the two modes always run the same passes).
RECOMPUTE_PIPELINE = "builtin.module({})".format(
    ", ".join(
        name + "{recompute-analyses=true}" if name in ("fusion-fuse-vertical", "fusion-fuse-horizontal") else name
        for name in default_pipeline()
    )
)


class UnrolledLSTM(nn.Module):
    """One LSTM layer unrolled over `steps` time steps in plain torch ops."""

    def __init__(self, steps: int, input_size: int = 128, hidden: int = 128):
        super().__init__()
        self.steps, self.hidden = steps, hidden
        self.w_ih = nn.Parameter(torch.randn(4 * hidden, input_size) / input_size**0.5)
        self.w_hh = nn.Parameter(torch.randn(4 * hidden, hidden) / hidden**0.5)
        self.b = nn.Parameter(torch.zeros(4 * hidden))

    def forward(self, x):  # x: [steps, batch, input]
        h = x.new_zeros(x.shape[1], self.hidden)
        c = x.new_zeros(x.shape[1], self.hidden)
        for t in range(self.steps):
            gates = x[t] @ self.w_ih.T + h @ self.w_hh.T + self.b
            i, f, g, o = gates.chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
        return h


def lstm(steps: int):
    return UnrolledLSTM(steps), (torch.randn(steps, 1, 128),)


def gpt2_stack(layers: int):
    blocks = nn.Sequential(*[GPT2Block(d=128, n_heads=4, max_seq=32) for _ in range(layers)])
    return blocks, (torch.randn(1, 32, 128),)


# family -> (size label, builder, sizes); recompute runs only up to RECOMPUTE_MAX_SIZE[family].
FAMILIES = {
    "LSTM": ("steps", lstm, (25, 50, 100, 200, 400)),
    "GPT-2 stack": ("layers", gpt2_stack, (2, 4, 8, 16, 32)),
}
RECOMPUTE_MAX_SIZE = {"LSTM": 400, "GPT-2 stack": 32}  # recompute at 400 LSTM steps alone takes ~10 minutes
REPEATS = 3  # of the (fast) maintained-analyses run; the recompute run is timed once

COLUMNS = ("model", "size", "ops", "seconds", "seconds per 1000 ops", "seconds (recompute)", "speedup")


def time_pipeline(text: str, pipeline: str) -> tuple[float, str]:
    """Seconds `pipeline` takes on a fresh parse of `text` (parsing and pass-manager setup excluded), and its output."""
    ctx = make_context()
    with ctx:
        module = ir.Module.parse(text)
        pm = build_pass_manager(pipeline, ctx)
        start = time.perf_counter()
        pm.run(module.operation)
        return time.perf_counter() - start, str(module)


def measure(family: str, size: int, build, recompute_max: int) -> dict:
    torch.manual_seed(0)
    model, inputs = build(size)
    imported = import_module(model.eval(), inputs)
    text = str(imported.module)
    result = {"family": family, "size": size, "ops": count_aten_ops(imported.module)}
    runs = [time_pipeline(text, PIPELINE) for _ in range(REPEATS)]
    result["seconds"], fused = min(t for t, _ in runs), runs[0][1]
    if size > recompute_max:
        result["recompute"] = "skipped"
    else:
        try:
            result["recompute"], recomputed = time_pipeline(text, RECOMPUTE_PIPELINE)
        except PipelineError:  # the option does not exist in this checkout
            result["recompute"] = "n/a"
        else:
            if recomputed != fused:  # maintained and recomputed analyses must fuse alike
                print(f"warning: {family} {size}: the two modes give different IR", file=sys.stderr)
    return result


def row(r: dict, size_label: str) -> list[str]:
    recompute = r["recompute"]
    timed = isinstance(recompute, float)
    return [
        r["family"],
        f"{r['size']} {size_label}",
        str(r["ops"]),
        f"{r['seconds']:.3f}",
        f"{1000 * r['seconds'] / r['ops']:.3f}",
        f"{recompute:.3f}" if timed else recompute,
        f"{recompute / r['seconds']:.1f}x" if timed else recompute,
    ]


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for family, marker in zip(FAMILIES, "os"):
        rs = [r for r in results if r["family"] == family]
        ax.plot([r["ops"] for r in rs], [r["seconds"] for r in rs], marker=marker, label=f"{family}: mlirfuse-pipeline")
        timed = [r for r in rs if isinstance(r["recompute"], float)]
        if timed:
            ax.plot(
                [r["ops"] for r in timed], [r["recompute"] for r in timed], marker=marker, linestyle="--",
                label=f"{family}: recompute-analyses",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("torch ops in the imported module")
    ax.set_ylabel("pipeline seconds")
    ax.set_title("mlirfuse fusion pipeline compile time")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help=f"do not append to {RESULTS.name} nor write {PLOT.name}")
    parser.add_argument(
        "--recompute-max-steps", type=int, default=RECOMPUTE_MAX_SIZE["LSTM"],
        help="time the recompute mode only up to this many LSTM steps (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    recompute_max = {**RECOMPUTE_MAX_SIZE, "LSTM": args.recompute_max_steps}

    results, rows = [], []
    for family, (size_label, build, sizes) in FAMILIES.items():
        for size in sizes:
            r = measure(family, size, build, recompute_max[family])
            print(f"{family} {size} {size_label}: {r['ops']} ops, {r['seconds']:.2f}s", file=sys.stderr)
            results.append(r)
            rows.append(row(r, size_label))

    by_size = {r["size"]: r for r in results if r["family"] == "LSTM"}
    scaling = f"LSTM time(400 steps) / time(200 steps): {by_size[400]['seconds'] / by_size[200]['seconds']:.2f} (ops ratio {by_size[400]['ops'] / by_size[200]['ops']:.2f})"

    report = f"{header('compile_time.py')}\n\n{markdown_table(COLUMNS, rows, 2)}\n\n{scaling}\n"
    publish(report, write=not args.no_write)
    if not args.no_write:
        plot(results, PLOT)
        print(f"plot: {PLOT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
