"""Tensor-parallel and FSDP2 graphs: launches, collectives and exposed communication, mlirfuse vs Inductor, one run (issue 23).

    python bench/parallel.py              # print the table, put it in bench/RESULTS.md
    python bench/parallel.py --no-write

Each model runs one training step (forward, `out.pow(2).sum()`'s backward) in
2 real `gloo` CPU processes (torch.multiprocessing spawn), compiled three
ways in the same processes: mlirfuse's backend, mlirfuse's backend without
its last stage `fusion-schedule-collectives` (the graph's own order: every
collective waited right after its issue), and TorchInductor.

Columns, summed over the step's graphs (rank 0): launches (kernels; for
Inductor `torch._inductor.metrics.generated_kernel_count`, C++ kernels on
this CPU) and unfused ATen calls; collectives and the bytes they reduce;
the launches that run while a collective is in flight; and the exposed
communication, an estimate: each collective's time on a stated link (a ring
all_reduce moves 2(n-1)/n of its bytes per GPU, at 450 GB/s, an H100 SXM's
NVLink one way) less the roofline time (sm_90, the cost model's) of the
launches and ATen calls between its issue and its wait, never below 0.
Inductor's graphs hold the same collectives in the order AOTAutograd gives
(it does not reorder them by default, `reorder_for_compute_comm_overlap`),
so its exposed communication is the unscheduled column's.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
from torch import nn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import header, markdown_table, publish  # noqa: E402

LINK_BYTES_PER_S = 450e9  # NVLink 4 on an H100 SXM, one direction (datasheet: 900 GB/s both ways)
WORLD = 2


class MLP(nn.Module):
    def __init__(self, d: int = 16, hidden: int = 32):
        super().__init__()
        self.up, self.down = nn.Linear(d, hidden), nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)) * 2.0) + 1.0


class Block(nn.Module):
    """A GPT-2-style block whose attention reshapes by head size (-1 heads), as tensor parallelism needs."""

    def __init__(self, d: int = 32, heads: int = 4):
        super().__init__()
        self.head = d // heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.proj = (nn.Linear(d, d) for _ in range(4))
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, _ = x.shape
        h = self.ln1(x)
        q, k, v = (f(h).view(b, t, -1, self.head).transpose(1, 2) for f in (self.q, self.k, self.v))
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, -1))
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))


# name -> (model class, input shape, tensor-parallel plan: module -> "colwise" | "rowwise"; None: FSDP2)
PLANS = {
    "mlp": (MLP, (4, 16), {"up": "colwise", "down": "rowwise"}),
    "block": (Block, (2, 8, 32), {"q": "colwise", "k": "colwise", "v": "colwise", "proj": "rowwise",
                                  "fc": "colwise", "out": "rowwise"}),
    "fsdp2_block": (Block, (2, 8, 32), None),  # fully_shard: its all-gathers and reduce-scatters stay outside the graphs
}
NAMES = {"mlp": "TP MLP d=16 h=32 [4,16]", "block": "TP GPT-2-style block d=32 4 heads [2,8,32]",
         "fsdp2_block": "FSDP2 GPT-2-style block d=32 [2,8,32]"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sharded(name: str, world: int):
    """(eager model, the same weights sharded as PLANS says, an input) in a process of the group."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    cls, shape, plan = PLANS[name]
    torch.manual_seed(0)
    eager, model = cls(), cls()
    model.load_state_dict(eager.state_dict())
    if plan is None:
        from torch.distributed.fsdp import fully_shard

        fully_shard(model)
    else:
        styles = {"colwise": ColwiseParallel, "rowwise": RowwiseParallel}
        parallelize_module(model, init_device_mesh("cpu", (world,)), {k: styles[v]() for k, v in plan.items()})
    return eager, model, torch.randn(*shape)


def exposed(program_cost, world: int) -> tuple[int, int, float]:
    """(collectives, bytes they reduce, seconds of their communication no step overlaps) of one graph."""
    from mlirfuse.analysis.cost import TARGETS
    from mlirfuse.ops.collectives import ISSUES, WAIT

    pending, count, total, hidden = [], 0, 0, 0.0
    for name, _, cost in program_cost.steps:
        if name in ISSUES:
            seconds = cost.bytes_written * 2 * (world - 1) / world / LINK_BYTES_PER_S
            pending.append([seconds, 0.0])
            count, total = count + 1, total + cost.bytes_written
        elif name == WAIT and pending:
            seconds, overlapped = pending.pop(0)
            hidden += max(seconds - overlapped, 0.0)
        else:
            for p in pending:
                p[1] += cost.seconds(TARGETS["sm_90"])
    return count, total, hidden


def _mlirfuse_row(backend, world: int) -> dict:
    from mlirfuse.ops.collectives import overlap

    row = {"launches": 0, "aten": 0, "collectives": 0, "bytes": 0, "overlapped": 0, "exposed_us": 0.0, "eager": 0}
    for g in backend.graphs:
        if g.graph is None:
            row["eager"] += 1
            continue
        steps = g.graph.program.steps
        row["launches"] += g.graph.stats["launches"]
        row["aten"] += g.graph.stats["unfused_ops"] - g.graph.stats["unfused_views"]
        row["overlapped"] += overlap([(s.kind, s.name) for s in steps])[1]
        if g.graph.cost is not None:
            count, moved, seconds = exposed(g.graph.cost, world)
            row["collectives"] += count
            row["bytes"] += moved
            row["exposed_us"] += seconds * 1e6
    return row


def worker(rank: int, world: int, port: int, name: str, out_dir: str) -> None:
    """One rank: the step compiled three ways, rank 0's counts written to out_dir/<name>.json."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), TRITON_INTERPRET="1")
    import torch.distributed as dist
    from torch._inductor import metrics

    from mlirfuse.backend import Backend
    from mlirfuse.passes import default_pipeline

    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        rows = {}
        unscheduled = [p for p in default_pipeline() if p != "fusion-schedule-collectives"]
        for label, backend in (("mlirfuse", Backend()), ("unscheduled", Backend(pipeline=unscheduled)), ("inductor", None)):
            torch._dynamo.reset()
            _, model, x = sharded(name, world)
            x.requires_grad_()
            if backend is None:
                metrics.reset()
                torch.compile(model, backend="inductor")(x).pow(2).sum().backward()
                rows[label] = {"launches": metrics.generated_kernel_count}
                continue
            torch.compile(model, backend=backend)(x).pow(2).sum().backward()
            rows[label] = _mlirfuse_row(backend, world)
        if rank == 0:
            Path(out_dir, f"{name}.json").write_text(json.dumps(rows))
    finally:
        dist.destroy_process_group()


COLUMNS = ["model (train step, 2 ranks)", "mlirfuse launches", "ATen calls", "collectives", "KiB reduced",
           "launches in flight", "exposed us", "unscheduled: in flight", "unscheduled: exposed us", "Inductor kernels",
           "graphs eager"]


def main(argv=None) -> int:
    import torch.multiprocessing as mp

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="do not put the table in bench/RESULTS.md")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as out:
        for name in PLANS:
            mp.spawn(worker, args=(WORLD, free_port(), name, out), nprocs=WORLD)
            r = json.loads(Path(out, f"{name}.json").read_text())
            ours, plain = r["mlirfuse"], r["unscheduled"]
            rows.append([NAMES[name], str(ours["launches"]), str(ours["aten"]), str(ours["collectives"]),
                         f"{ours['bytes'] / 1024:.1f}", str(ours["overlapped"]), f"{ours['exposed_us']:.4f}",
                         str(plain["overlapped"]), f"{plain['exposed_us']:.4f}", str(r["inductor"]["launches"]),
                         str(ours["eager"])])
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    report = (f"{header('parallel.py')}\n\nOne training step per model on 2 gloo CPU processes (rank 0; forward and "
              f"backward graphs summed). Exposed communication: each collective's bytes x 2(n-1)/n over "
              f"{LINK_BYTES_PER_S / 1e9:.0f} GB/s less the sm_90 roofline time of what runs between its issue and its "
              f"wait; 'unscheduled' is the same compile without fusion-schedule-collectives (the graph's order, which "
              f"Inductor keeps by default). Inductor kernels: C++ kernels generated on this CPU.\n\n"
              f"{markdown_table(COLUMNS, rows, 1)}\n")
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
