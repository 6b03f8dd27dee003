"""A few training steps through `torch.compile(backend="mlirfuse")` and through Inductor (CPU), in one run.

    python bench/training.py              # print the table, append it to bench/RESULTS.md
    python bench/training.py --no-write   # print only
    python bench/training.py --steps 5

For the GPT-2-style block and the MLP of `mlirfuse/models.py`: launches per
forward and per backward (mlirfuse: Triton launches + ATen ops left unfused,
views apart; Inductor: generated kernels + extern calls, counted in its
output code as bench/reductions.py does), the time of the first step (Dynamo, AOTAutograd,
compilation and one run) and of the later ones, mlirfuse's pipeline time
alone, and the largest difference from eager of the loss and of any
parameter gradient over all steps. mlirfuse's kernels run in the Triton
interpreter on CPU (slow per step); Inductor on CPU runs C++ it compiled.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import copy  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

from mlirfuse import models  # noqa: E402
from mlirfuse.backend import backend  # noqa: E402
from device_calls import count_inductor  # noqa: E402
from report import RESULTS, header, markdown_table, publish  # noqa: E402

# name -> () -> (model, input shape); built after torch.manual_seed(0).
MODELS = {
    "GPT-2 block d=64 4 heads [2,16,64]": lambda: (models.TinyBlock(d_model=64, n_heads=4, seq=16), (2, 16, 64)),
    "MLP LN+GELU d=32 h=64 [2,16,32]": lambda: (models.MLP(d_model=32, hidden=64), (2, 16, 32)),
}

COLUMNS = (
    "model",
    "compiler",
    "launches fwd",
    "launches bwd",
    "distinct kernels fwd/bwd",
    "first step s",
    "later steps s",
    "pipeline s",
    "max err vs eager",
)


def train(model, fn, batches) -> tuple[list[float], list[torch.Tensor], list[float]]:
    """SGD steps; (losses, gradients flattened per step, seconds per step)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses, grads, seconds = [], [], []
    for x, target in batches:
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(fn(x), target)
        loss.backward()
        optimizer.step()
        seconds.append(time.perf_counter() - start)
        losses.append(loss.item())
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    return losses, grads, seconds


def error(reference, result) -> float:
    losses = max(abs(a - b) for a, b in zip(reference[0], result[0]))
    grads = max((a - b).abs().max().item() for a, b in zip(reference[1], result[1]))
    return max(losses, grads)


def _launches(stats: dict) -> str:
    """Triton launches + ATen ops that are not views (views launch nothing, as Inductor's reinterpret_tensor)."""
    views = stats.get("unfused_views", 0)
    return f"{stats.get('launches', 0)} + {stats.get('unfused_ops', 0) - views} ATen (+{views} views)"


def run_mlirfuse(model, batches, reference) -> list[str]:
    torch._dynamo.reset()
    backend.clear()
    # The registered object itself: the same as backend="mlirfuse" once the package (entry point) is installed.
    result = train(model, torch.compile(model, backend=backend), batches)
    s = backend.stats
    fwd, bwd = s.get("forward", {}), s.get("backward", {})
    seconds = result[2]
    return [
        "mlirfuse",
        _launches(fwd),
        _launches(bwd),
        f"{fwd.get('kernels', 0)} / {bwd.get('kernels', 0)}",
        f"{seconds[0]:.1f}",
        f"{sum(seconds[1:]) / max(1, len(seconds) - 1):.2f}",
        f"{fwd.get('compile_seconds', 0) + bwd.get('compile_seconds', 0):.1f}",
        f"{error(reference, result):.1e}",
    ]


def run_inductor(model, batches, reference) -> list[str]:
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    compiled = torch.compile(model, backend="inductor")
    with torch._inductor.config.patch(fx_graph_cache=False):
        # The first step compiles: the forward's code first, then the backward's.
        result, codes = run_and_get_code(train, model, compiled, batches[:1])
        rest = train(model, compiled, batches[1:])
    result = tuple(a + b for a, b in zip(result, rest))
    counts = [count_inductor(code) for code in codes]
    fwd, bwd = (counts + [(0, 0), (0, 0)])[:2]
    seconds = result[2]
    return [
        "inductor",
        f"{fwd[0]} + {fwd[1]} extern",
        f"{bwd[0]} + {bwd[1]} extern" + ("" if len(codes) == 2 else f" ({len(codes)} code modules)"),
        f"{fwd[0]} / {bwd[0]}",
        f"{seconds[0]:.1f}",
        f"{sum(seconds[1:]) / max(1, len(seconds) - 1):.2f}",
        "",
        f"{error(reference, result):.1e}",
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help=f"do not append to {RESULTS.name}")
    parser.add_argument("--steps", type=int, default=3, help="training steps per model and compiler")
    args = parser.parse_args(argv)

    rows = []
    for name, build in MODELS.items():
        torch.manual_seed(0)
        model, shape = build()
        batches = [(torch.randn(shape), torch.randn(shape)) for _ in range(args.steps)]
        eager = copy.deepcopy(model)
        reference = train(eager, eager, batches)
        for run in (run_mlirfuse, run_inductor):
            start = time.perf_counter()
            ours = copy.deepcopy(model)
            rows.append([name, *run(ours, batches, reference)])
            print(f"{name}: {rows[-1][1]} {time.perf_counter() - start:.1f}s", file=sys.stderr)

    report = f"{header('training.py')}\n\n{markdown_table(COLUMNS, rows, 5)}\n"
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
