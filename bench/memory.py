"""Peak memory of live intermediates per call: mlirfuse (planned and measured) against eager and Inductor, one run.

    python bench/memory.py                       # the table, also written to bench/RESULTS.md
    python bench/memory.py --no-write --layers 2 12
    python bench/memory.py --no-inductor         # skip Inductor's C++ compiles (minutes)

Models: a `transformers` GPT2Model (d = 256, 4 heads, random weights built
from a config, no hub) at 2, 12 and 32 layers on 4 x 128 tokens, and
bench/reductions.py's MODELS, inference (planned / measured: how close the
liveness plan's figure is);
one training step of 4 GPT-2-style blocks (mlirfuse/models.py) through
`torch.compile`, the whole step's peak and the backward's.

Measured: the CPU allocator's events during one call (torch.profiler with
profile_memory=True: every allocation and free, in order; bench/allocator.py),
summed into a timeline whose maximum is the peak. Parameters and inputs are allocated
before the profiled call, so the figure is intermediates and outputs only,
the same way for all three. mlirfuse's planned figure is `cm.stats
["planned_peak_bytes"]` (runtime/liveness.py: the bytes of launch and ATen
results live at once, computed at compile time). mlirfuse's kernels run in
the Triton interpreter here, which allocates no torch memory of its own
beyond the outputs; Inductor runs the C++ it compiled. A second (warm) call
is measured for each, so one-time allocations (caches, compiled code) are
left out.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
from allocator import allocation_peaks, backward_range  # noqa: E402

import mlirfuse  # noqa: E402
from report import RESULTS, header, markdown_table, publish  # noqa: E402

COLUMNS = ("model", "eager MB", "mlirfuse planned MB", "mlirfuse measured MB", "Inductor MB", "mlirfuse / eager",
           "planned / measured")


def peak_bytes(fn) -> int:
    """The largest sum of CPU bytes allocated and not yet freed during `fn()` (its result kept)."""
    return allocation_peaks(fn).peak


def gpt2(layers: int):
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    config = GPT2Config(n_embd=256, n_head=4, n_layer=layers, n_positions=128, vocab_size=1000,
                        attn_implementation="eager", use_cache=False)
    model = GPT2Model(config).eval()
    ids = torch.randint(0, 1000, (4, 128))
    return model, (ids,)


def measure(name: str, model, inputs: tuple, inductor: bool) -> list[str]:
    mb = 1 / 2**20
    with torch.no_grad():
        eager = peak_bytes(lambda: model(*inputs))
    cm = mlirfuse.compile(model, inputs)
    cm(*inputs)
    measured = peak_bytes(lambda: cm(*inputs))
    planned = cm.stats.get("planned_peak_bytes")
    row = [name, f"{eager * mb:.1f}", "dynamic" if planned is None else f"{planned * mb:.1f}", f"{measured * mb:.1f}"]
    if inductor:
        torch._dynamo.reset()
        compiled = torch.compile(model)
        with torch.no_grad():
            compiled(*inputs)
            row.append(f"{peak_bytes(lambda: compiled(*inputs)) * mb:.1f}")
    else:
        row.append("-")
    row.append(f"{measured / eager:.2f}")
    row.append("-" if planned is None else f"{planned / measured:.2f}")
    print(" | ".join(row), file=sys.stderr)
    return row


TRAIN_COLUMNS = ("model", "eager MB step / backward", "mlirfuse MB step / backward", "Inductor MB step / backward",
                 "mlirfuse / eager backward", "max grad err vs eager")


def train_row(layers: int, inductor: bool) -> list[str]:
    """Peak bytes allocated during one training step (the gradients included): the whole step, and the backward.

    Both count from the step's start: the backward's figure includes what the forward saved for it.
    A backward-only figure would count an activation AOTAutograd's partitioner recomputes in the
    backward against mlirfuse and not the one eager saved instead.
    """
    from mlirfuse.models import TinyBlock

    torch.manual_seed(0)
    model = torch.nn.Sequential(*[TinyBlock(d_model=128, n_heads=4, seq=64) for _ in range(layers)])
    x = torch.randn(4, 64, 128)

    def peaks(fn) -> tuple[object, list[torch.Tensor]]:
        def step():
            loss = fn(x).pow(2).mean()
            with backward_range():
                loss.backward()

        for _ in range(2):  # the first step compiles forward and backward
            model.zero_grad(set_to_none=True)
            found = allocation_peaks(step)
        return found, [p.grad.clone() for p in model.parameters()]

    mb = 1 / 2**20

    def cell(found) -> str:
        return f"{found.peak * mb:.1f} / {found.after_mark * mb:.2f}"

    eager, expected = peaks(model)
    torch._dynamo.reset()
    ours, grads = peaks(torch.compile(model, backend="mlirfuse"))
    err = max((g - e).abs().max().item() for g, e in zip(grads, expected))
    row = [f"{layers} x GPT-2-style block d=128 [4,64,128], one step", cell(eager), cell(ours)]
    if inductor:
        torch._dynamo.reset()
        row.append(cell(peaks(torch.compile(model))[0]))
    else:
        row.append("-")
    row += [f"{ours.after_mark / eager.after_mark:.3f}", f"{err:.1e}"]
    print(" | ".join(row), file=sys.stderr)
    return row


PLOT = Path(__file__).resolve().parent / "memory.png"


def plot(depth_rows: list[tuple[int, list[str]]], path: Path = PLOT) -> bool:
    """Peak live intermediates against depth (the GPT2Model rows): eager, mlirfuse planned and measured, Inductor.

    False (no plot) without matplotlib (`pip install -e '.[bench]'`).
    """
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    layers = [n for n, _ in depth_rows]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for column, label, style in ((1, "eager", "s-"), (2, "mlirfuse (planned)", "o-"), (3, "mlirfuse (measured)", "x--"),
                                 (4, "Inductor", "^-")):
        values = [row[column] for _, row in depth_rows]
        if all(v.replace(".", "", 1).isdigit() for v in values):
            ax.plot(layers, [float(v) for v in values], style, label=label)
    ax.set_xlabel("GPT2Model layers (d=256, input [4,128])")
    ax.set_ylabel("peak live intermediates, MB")
    ax.set_title("Peak memory of one inference call against depth")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[2, 12, 32])
    parser.add_argument("--no-inductor", action="store_true")
    parser.add_argument("--no-training", action="store_true")
    parser.add_argument("--no-bench-models", action="store_true", help="skip bench/reductions.py's MODELS")
    parser.add_argument("--no-write", action="store_true", help=f"print only; do not append to {RESULTS}")
    args = parser.parse_args()
    rows = []
    for layers in args.layers:
        model, inputs = gpt2(layers)
        rows.append(measure(f"GPT2Model {layers} layers d=256 [4,128]", model, inputs, not args.no_inductor))
    plotted = not args.no_write and plot(list(zip(args.layers, rows)))
    if not args.no_bench_models:
        from reductions import MODELS

        for name, build in MODELS.items():
            torch.manual_seed(0)
            model, inputs = build()
            rows.append(measure(name, model.eval(), inputs, not args.no_inductor))
    train = [train_row(4, not args.no_inductor)] if not args.no_training else []
    report = "\n".join([
        header("memory.py"),
        "",
        "Peak bytes of intermediates and outputs alive during one inference call (CPU allocator events, "
        "torch.profiler), parameters and inputs excluded; mlirfuse planned = cm.stats['planned_peak_bytes'].",
        "",
        markdown_table(COLUMNS, rows),
        "",
        *([f"Peak against depth: `bench/{PLOT.name}`.", ""] if plotted else []),
        *(["Training (`torch.compile`, mlirfuse's backend vs eager and Inductor): peak bytes allocated above "
           "the level at the start of one training step (the second step; the gradients included; `.grad` is "
           "reset to None before it), over the whole step (forward, loss and backward) / during the backward "
           "alone (still counted from the step's start, so the activations saved for it count).",
           "", markdown_table(TRAIN_COLUMNS, train), ""] if train else []),
    ])
    publish(report, not args.no_write)


if __name__ == "__main__":
    main()
