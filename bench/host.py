"""Host time per launch: the interpreted program (`Program.run`) against the generated straight-line one, in one run.

    python bench/host.py                 # CPU: writes its section of bench/RESULTS.md
    python bench/host.py --out DIR       # on a CUDA device: real launches; writes DIR/host.md (RESULTS.md untouched)
    python bench/host.py --no-write

The same compiled model runs both ways (`cm.program.straight_line` switched
between calls), interleaved A/B: each round times a batch of calls of one, then
of the other, and the table keeps the median round. "steps" are the launches
and ATen calls one call makes (a deduplicated layer's once per call); host us
per step is a call's host time over them.

- CUDA (real launches): host us/call is the time the Python call takes to
  return, launches queued, synchronized outside the timed region (a tiny
  GPT2Model, whose GPU work stays below its host time so the queue never
  fills); wall ms/call is call plus synchronize, also for the GPU bench's
  GPT2Model d=768 [8,512] in bf16 (bench/gpu.py).
- CPU (no GPU): kernels run in Triton's interpreter, whose per-program work
  swamps host overhead. So the kernels are stubbed out (`fn[grid](...)` does
  nothing), and so is the interpreter's mode switch per launch (`triton_mode`,
  which a CUDA launch skips and which costs more than all the rest): what is
  timed is everything mlirfuse does per call around the kernels (step
  dispatch or generated lines, views, strides, output allocations, sizes,
  grid, options, binding parameters) and the ATen calls, in CPU seconds
  (`time.process_time`, one torch thread) on a shared machine. Triton's own
  launch cost (`JITFunction.run`, about a quarter of the host time per launch
  on an H100) is not in it. The last row runs the real interpreted kernels, to
  show by how much they swamp it.

max abs diff: between the two ways' outputs on the real kernels (0: the same
bits; a kernel whose sums are not deterministic on a GPU could differ).

CUDA graph (CUDA only): the same model compiled with `mode="reduce-overhead"`
(runtime/graphs.py), timed in the same interleaved rounds: a call copies the
inputs into the graph's buffers, replays it and copies the results out; its
max abs diff is against the generated program's output.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
os.environ.setdefault("MLIRFUSE_CHECK_BOUNDS", "0")  # launches as users run them, not the checked test mode

import argparse  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402
from unittest import mock  # noqa: E402

import torch  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # the checkout this script is in, whatever mlirfuse is installed

import mlirfuse  # noqa: E402
from mlirfuse.runtime import kernels  # noqa: E402
from report import header, markdown_table, publish  # noqa: E402

COLUMNS = ("model", "device", "steps (launches + ATen)", "run() us/call", "generated us/call",
           "run() us/step", "generated us/step", "speedup", "run() wall ms", "generated wall ms",
           "max abs diff", "CUDA graph us/call", "CUDA graph wall ms", "CUDA graph max abs diff")


def gpt2(layers: int, hidden: int, heads: int, batch: int, seq: int, device: str, dtype: torch.dtype,
         dedup: bool = True):
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=layers, n_head=heads, n_embd=hidden, n_positions=seq, vocab_size=1000,
                                     use_cache=False, attn_implementation="sdpa")
    model = transformers.GPT2Model(config).eval().to(device=device, dtype=dtype)
    ids = torch.randint(2, 1000, (batch, seq), device=device)
    return model, (ids,), {"dedup_layers": dedup}


def tiny_stack(device: str, dtype: torch.dtype, depth: int = 4):
    from mlirfuse.models import TinyBlock

    torch.manual_seed(0)
    model = torch.nn.Sequential(*(TinyBlock(d_model=32, n_heads=2, seq=8) for _ in range(depth)))
    return model.eval().to(device=device, dtype=dtype), (torch.randn(2, 8, 32, device=device, dtype=dtype),), {}


def steps_per_call(cm) -> tuple[int, int]:
    steps = list(cm.program.flat_steps())
    return sum(s.kind == "launch" for s in steps), sum(s.kind == "aten" for s in steps)


class _NoKernel:
    """A kernel function whose launches do nothing (CPU: the interpreter's work left out)."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: None


def stub_kernels(cm) -> None:
    for launcher in cm.program._launchers.values():
        launcher._fn, launcher._interpret = _NoKernel(), True
        launcher.direct._prepared.clear()  # prepared again, with the stub


@contextlib.contextmanager
def no_mode_switch():
    """Within: interpreted launches skip the interpreter's mode switch (`triton_mode`, `host_arguments_in_place`),
    which a CUDA launch does not pay and which, per launch, costs more than all the rest on the CPU."""
    with mock.patch.object(kernels, "triton_mode", lambda interpret: contextlib.nullcontext()), \
            mock.patch.object(kernels, "host_arguments_in_place", contextlib.nullcontext):
        yield


def measure(variants: dict, args, cuda: bool, rounds: int, calls: int) -> dict[str, tuple[float, float]]:
    """name -> (median host us per call, median wall ms per call) of each variant, rounds interleaved.

    `variants`: name -> (compiled model, straight_line)."""
    clock = time.perf_counter if cuda else time.process_time
    host: dict[str, list[float]] = {name: [] for name in variants}
    wall: dict[str, list[float]] = {name: [] for name in variants}
    for cm, mode in variants.values():  # warm: kernels loaded, launches prepared, graphs captured
        cm.program.straight_line = mode
        for _ in range(3):
            cm(*args)
    if cuda:
        torch.cuda.synchronize()
    names = list(variants)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            cm, mode = variants[name]
            cm.program.straight_line = mode
            spent = 0.0
            start_wall = time.perf_counter()
            for _ in range(calls):
                start = clock()
                out = cm(*args)
                spent += clock() - start
                if cuda:
                    torch.cuda.synchronize()
                del out
            wall[name].append((time.perf_counter() - start_wall) / calls * 1e3)
            host[name].append(spent / calls * 1e6)
    for cm, _ in variants.values():
        cm.program.straight_line = True
    return {name: (statistics.median(host[name]), statistics.median(wall[name])) for name in names}


def row(name: str, device: str, result, diff: float, launches: int, aten: int, wall: bool,
        graph_diff: float | None = None) -> list[str]:
    steps = launches + aten
    (run_us, run_ms), (gen_us, gen_ms) = result["run"], result["generated"]
    graph = []
    if "graph" in result:
        graph_us, graph_ms = result["graph"]
        graph = [f"{graph_us:.0f}", f"{graph_ms:.3f}", f"{graph_diff:.1e}"]
    return [name, device, f"{steps} ({launches} + {aten})", f"{run_us:.0f}", f"{gen_us:.0f}",
            f"{run_us / steps:.1f}", f"{gen_us / steps:.1f}", f"{run_us / gen_us:.2f}x",
            f"{run_ms:.3f}" if wall else "", f"{gen_ms:.3f}" if wall else "", f"{diff:.1e}", *(graph or ["", "", ""])]


def _hidden(out) -> torch.Tensor:
    return (out.last_hidden_state if hasattr(out, "last_hidden_state") else out).float()


def run_case(name: str, make, stubbed: bool, wall: bool, cuda: bool, rounds: int, calls: int) -> list[str]:
    model, inputs, options = make()
    cm = mlirfuse.compile(model, inputs, **options)
    results = []
    for mode in (False, True):  # the real kernels both ways, before anything is timed
        cm.program.straight_line = mode
        results.append(_hidden(cm(*inputs)))
    diff = float((results[0] - results[1]).abs().max())  # 0 where every kernel is deterministic
    variants = {"run": (cm, False), "generated": (cm, True)}
    graph_diff = None
    if cuda:  # the same model with its calls replayed from a CUDA graph (warm-up, capture, replays)
        graphed = mlirfuse.compile(model, inputs, mode="reduce-overhead", **options)
        for _ in range(3):
            replayed = _hidden(graphed(*inputs))
        if graphed.cuda_graphs["not_graphed"]:
            raise RuntimeError(f"not graphed: {graphed.cuda_graphs['not_graphed']}")
        graph_diff = float((replayed - results[1]).abs().max())
        variants["graph"] = (graphed, True)
    if stubbed:
        stub_kernels(cm)
    if not (stubbed or cuda):  # interpreted kernels: a few calls say enough
        rounds, calls = 3, max(2, calls // 10)
    with no_mode_switch() if stubbed else contextlib.nullcontext():
        result = measure(variants, inputs, cuda, rounds, calls)
    return row(name, "cuda" if cuda else "cpu", result, diff, *steps_per_call(cm), wall, graph_diff)


def cases(cuda: bool) -> list[tuple[str, object, bool, bool]]:
    """(name, factory, stubbed kernels, wall column) per row."""
    if cuda:
        return [
            ("GPT2Model d=256 4 heads 4 layers [2,64] bf16", lambda: gpt2(4, 256, 4, 2, 64, "cuda", torch.bfloat16), False, True),
            ("GPT2Model d=256 4 heads 4 layers [2,64] bf16, layers inlined",
             lambda: gpt2(4, 256, 4, 2, 64, "cuda", torch.bfloat16, dedup=False), False, True),
            ("GPT2Model d=768 12 heads 4 layers [8,512] bf16", lambda: gpt2(4, 768, 12, 8, 512, "cuda", torch.bfloat16), False, True),
        ]
    return [
        ("GPT2Model d=32 4 heads 4 layers [2,8], kernels stubbed", lambda: gpt2(4, 32, 4, 2, 8, "cpu", torch.float32), True, False),
        ("GPT2Model d=32 4 heads 4 layers [2,8], layers inlined, kernels stubbed",
         lambda: gpt2(4, 32, 4, 2, 8, "cpu", torch.float32, dedup=False), True, False),
        ("4 TinyBlocks d=32 [2,8,32], kernels stubbed", lambda: tiny_stack("cpu", torch.float32), True, False),
        ("GPT2Model d=32 4 heads 4 layers [2,8], interpreted kernels", lambda: gpt2(4, 32, 4, 2, 8, "cpu", torch.float32), False, False),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for host.md (RESULTS.md is then left alone)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20, help="calls per round")
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available()
    if not cuda:
        torch.set_num_threads(1)
    rows = []
    for name, make, stubbed, wall in cases(cuda):
        try:
            rows.append(run_case(name, make, stubbed, wall, cuda, args.rounds, args.calls))
        except Exception as e:  # noqa: BLE001  (the other rows still run; the table says which failed)
            traceback.print_exc()
            rows.append([name, "cuda" if cuda else "cpu", f"fails: {type(e).__name__}: {e}"[:200]]
                        + [""] * (len(COLUMNS) - 3))
        print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
        if cuda:
            torch.cuda.empty_cache()
    device = torch.cuda.get_device_name() if cuda else "CPU (Triton interpreter)"
    what = ("host us/call: the call's return, launches queued; wall: call + synchronize; CUDA graph: the same model "
            "compiled with mode=\"reduce-overhead\" (inputs copied in, one replay, results copied out)" if cuda else
            "us/call: CPU seconds (`time.process_time`, 1 torch thread) per call, kernels stubbed except in the last row")
    report = (f"{header('host.py')}\n\nDevice: {device}. {what}; medians of {args.rounds} interleaved rounds "
              f"(run() and the generated program alternate). See the script's docstring for what is measured.\n\n"
              f"{markdown_table(COLUMNS, rows, 2)}\n")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "host.md").write_text(report)
        print(report)
    else:
        publish(report, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
