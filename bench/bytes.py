"""Bytes moved per call: mlirfuse vs TorchInductor vs the lower bound, forward and one training step, in one run (issue 22).

    python bench/bytes.py              # print the table, put it in bench/RESULTS.md
    python bench/bytes.py --no-write

mlirfuse: the cost model (mlirfuse/analysis/cost.py, `cm.stats["bytes"]`):
every launch reading each input once (through views, what they cover) and
writing each result once, every unfused ATen call the same. Inductor: its
own bytes-accessed metric (`torch._inductor.metrics.num_bytes_accessed`,
computed by `GraphLowering.count_bytes()` when the `inductor_metrics` log is
on): the same model over its scheduler nodes, extern calls included. Here
Inductor generates C++ for the CPU, whose fusion decisions are not its GPU
ones (mlirfuse's kernels are the ones a GPU would run). The lower bound
(`cm.stats["bytes_lower_bound"]`): each argument read once and each result
written once, for the whole graph; a training step's is the sum of its
forward's and backward's (the saved activations are the backward's
arguments).

Training rows: `torch.compile(model, backend=...)`, forward, `out.sum()`'s
backward, the model in train mode (batch norm updates its running stats);
mlirfuse's numbers from the backend's stats (forward + backward). Device
calls: mlirfuse's launches + non-view ATen calls, Inductor's kernel launches
+ extern calls counted in its output code (bench/device_calls.py).
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from launches import MODELS as BLOCKS  # noqa: E402

import mlirfuse  # noqa: E402
from device_calls import count_inductor, count_inductor_launches  # noqa: E402
from reductions import MODELS as REDUCTIONS  # noqa: E402
from report import header, markdown_table, publish  # noqa: E402

COLUMNS = (
    "model", "mode", "mlirfuse device calls", "inductor device calls", "mlirfuse KiB", "inductor KiB",
    "lower bound KiB", "mlirfuse / bound", "inductor / bound", "mlirfuse <= inductor (calls and bytes)",
)
# Models with a training-step row too (the forward-only ones: reductions.py's single ops, the MoE layer).
TRAINED = ("MLP block", "GPT-2 block", "LSTM", "Llama block", "BERT layer", "ResNet")


def inductor_bytes(model, inputs, train: bool) -> tuple[int, int]:
    """Inductor's bytes accessed over the graphs it compiles for one call (forward, or forward + backward), and
    its device calls (kernel launches + extern calls in its output code, bench/device_calls.py)."""
    from torch._inductor import metrics
    from torch._inductor.utils import run_and_get_code

    def call():
        if train:
            compiled(*inputs).sum().backward()
        else:
            with torch.no_grad():
                compiled(*inputs)

    torch._dynamo.reset()
    metrics.reset()
    torch._logging.set_logs(inductor_metrics=True)
    try:
        with torch._inductor.config.patch(fx_graph_cache=False):
            compiled = torch.compile(model)
            _, codes = run_and_get_code(call)
    finally:
        torch._logging.set_logs()
    calls = sum(count_inductor_launches(code) + count_inductor(code)[1] for code in codes)
    return metrics.num_bytes_accessed, calls


def mlirfuse_bytes(model, inputs, train: bool) -> dict:
    """mlirfuse's bytes, lower bound and device calls (launches + non-view ATen calls) for one call."""
    if not train:
        cm = mlirfuse.compile(model, inputs)
        s = cm.stats
        return {"bytes": s["bytes"], "bound": s["bytes_lower_bound"],
                "calls": s["launches"] + s["unfused_ops"] - s["unfused_views"]}
    from mlirfuse.backend import backend

    torch._dynamo.reset()
    backend.clear()
    torch.compile(model, backend=backend)(*inputs).sum().backward()
    roles = backend.stats
    assert all(r["eager_graphs"] == 0 for r in roles.values()), roles
    return {
        key: sum(r[stat] for r in roles.values())
        for key, stat in (("bytes", "bytes"), ("bound", "bytes_lower_bound"), ("launches", "launches"),
                          ("unfused", "unfused_ops"), ("views", "unfused_views"))
    } | {"calls": sum(r["launches"] + r["unfused_ops"] - r["unfused_views"] for r in roles.values())}


def row(name: str, make, train: bool) -> list[str]:
    torch.manual_seed(0)
    model, inputs = make()
    model = model.train() if train else model.eval()
    ours = mlirfuse_bytes(model, inputs, train)
    theirs, calls = inductor_bytes(model, inputs, train)
    kib = 1024
    below = ours["bytes"] <= theirs and ours["calls"] <= calls
    return [
        name, "train step" if train else "forward", str(ours["calls"]), str(calls), f"{ours['bytes'] / kib:.0f}",
        f"{theirs / kib:.0f}", f"{ours['bound'] / kib:.0f}", f"{ours['bytes'] / ours['bound']:.2f}",
        f"{theirs / ours['bound']:.2f}", "yes" if below else "no",
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="do not put the table in bench/RESULTS.md")
    parser.add_argument("-k", default="", help="only models whose name contains this")
    args = parser.parse_args(argv)
    models = {**REDUCTIONS, **{k: v for k, v in BLOCKS.items() if k not in REDUCTIONS}}
    rows = []
    for name, make in models.items():
        if args.k not in name:
            continue
        for train in (False, True) if name.startswith(TRAINED) else (False,):
            try:
                rows.append(row(name, make, train))
            except Exception as e:  # noqa: BLE001 - a model one side cannot take is a row, not the end of the run
                rows.append([name, "train step" if train else "forward", f"fails: {type(e).__name__}: {e}"[:120]]
                            + [""] * (len(COLUMNS) - 3))
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    report = (f"{header('bytes.py')}\n\nKiB per call. mlirfuse: its cost model; Inductor: its own bytes-accessed "
              f"metric (CPU code generation); the lower bound: each argument read once, each result written once. "
              f"Device calls: mlirfuse's launches + non-view ATen calls, Inductor's kernel launches + extern calls "
              f"(forward + backward for a train step); the last column: mlirfuse at or below Inductor in both."
              f"\n\n{markdown_table(COLUMNS, rows, 2)}\n")
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
