"""Training steps on a GPU: `torch.compile(backend=mlirfuse)` against eager and Inductor, in one run.

    python bench/gpu_training.py                 # needs a CUDA device; prints one line per model
    python bench/gpu_training.py --device cpu    # small sizes, the Triton interpreter: checks the script itself

Per model (f32, SGD, MSE against a fixed target): the largest relative error
(||a - b|| / ||b||) of the loss and of every parameter gradient over three
steps against eager, the same for the buffers after them (batch-norm running
statistics, stored in place by mlirfuse's kernels), the first step's seconds
(Dynamo, AOTAutograd, compile, run) and the median milliseconds of 20 later
steps (CUDA events around zero_grad + forward + backward + step: host time
included, no CUDA graphs). Not run in CI (no GPU there); the numbers go into
bench/RESULTS.md by hand.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import copy  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import torch  # noqa: E402
from launches import ResNetBlock  # noqa: E402

from mlirfuse import models  # noqa: E402
from mlirfuse.backend import backend  # noqa: E402

# name -> (full-size (model, input shape), small (model, input shape)); built after torch.manual_seed(0).
MODELS = {
    "ResNet basic block": (lambda: (ResNetBlock(64, 64), (32, 64, 56, 56)),
                            lambda: (ResNetBlock(8, 8), (2, 8, 6, 6))),
    "ResNet basic block, stride 2": (lambda: (ResNetBlock(64, 128, 2), (32, 64, 56, 56)),
                                      lambda: (ResNetBlock(8, 16, 2), (2, 8, 6, 6))),
    "GPT-2 block": (lambda: (models.TinyBlock(d_model=768, n_heads=12, seq=512), (8, 512, 768)),
                                   lambda: (models.TinyBlock(d_model=32, n_heads=2, seq=8), (2, 8, 32))),
}


def step(fn, optimizer, x, target):
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(fn(x), target)
    loss.backward()
    optimizer.step()
    return loss.detach()


def step_ms(fn, model, x, target, steps: int = 20) -> float:
    """Median milliseconds of a training step after three warm-up steps (NaN off a GPU)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(3):
        step(fn, optimizer, x, target)
    if x.device.type != "cuda":
        return float("nan")
    times = []
    for _ in range(steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step(fn, optimizer, x, target)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-30)).item()


def measure(name: str, make, device: str) -> str:
    torch.manual_seed(0)
    model, shape = make()
    model = model.to(device).train()
    x = torch.randn(shape, device=device)
    target = torch.randn_like(model(x).detach())  # the probe's batch-norm update is every copy's starting point
    eager, ours, inductor = model, copy.deepcopy(model), copy.deepcopy(model)
    compiled = torch.compile(ours, backend=backend)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (eager, ours)]
    worst, first = 0.0, None
    started = time.perf_counter()
    for i in range(3):
        eager_loss = step(eager, optimizers[0], x, target)
        our_loss = step(compiled, optimizers[1], x, target)
        first = first if i else time.perf_counter() - started
        worst = max([worst, relative(our_loss, eager_loss)]
                    + [relative(q.grad, p.grad) for p, q in zip(eager.parameters(), ours.parameters())])
    buffers = max((relative(c.float(), b.float()) for b, c in zip(eager.buffers(), ours.buffers())), default=0.0)
    ms = [step_ms(fn, m, x, target) for fn, m in ((compiled, ours), (torch.compile(inductor), inductor), (eager, eager))]
    return (f"{name} {list(shape)} | max rel err loss/grads {worst:.1e} | buffers {buffers:.1e} | first step "
            f"{first:.1f} s | step ms: mlirfuse {ms[0]:.3f}, inductor {ms[1]:.3f}, eager {ms[2]:.3f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench/gpu_training.py needs a CUDA device (or --device cpu)", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False  # eager f32 as PyTorch ships it
    torch.backends.cudnn.allow_tf32 = False
    for name, (full, small) in MODELS.items():
        try:
            print(measure(name, full if args.device == "cuda" else small, args.device), flush=True)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            print(f"{name} | fails: {type(e).__name__}: {e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
