"""mlirfuse vs TorchInductor (CPU) on the model zoo and the bench models, in one run (issue 13, item 6).

    python bench/models.py                    # zoo (sdpa) + bench models, table to bench/RESULTS.md
    python bench/models.py --attn eager       # the zoo with eager attention
    python bench/models.py --models gpt2,bert --no-write

Models: the `transformers` architectures of tests/test_zoo.py (tiny
configs, random weights, a padding mask) and the models of
bench/reductions.py. Per model and compiler: kernel launches and
extern/fallback calls per forward, distinct kernels, compile seconds and
the largest absolute difference from eager.

- mlirfuse: `cm.stats` (launches; unfused ATen ops that are not views, i.e.
  extern calls, each once per forward; distinct `fusion.kernel`s).
  Kernels run in Triton's interpreter on CPU.
- Inductor: its output code (CPU: C++ kernels). Distinct kernels are the
  `async_compile` definitions; launches are the calls of those kernels in
  `call()`; extern calls are `extern_kernels.*` / `aten.*` calls there
  (bench/reductions.py's counting). Views are `reinterpret_tensor`, free on
  both sides, and not counted.
- Compile seconds: `mlirfuse.compile` plus the first call (Triton kernels
  load on first launch) vs `torch.compile` plus its first call (Inductor
  compiles on first call), each from a cold in-process cache.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import mlirfuse  # noqa: E402
from device_calls import count_inductor, count_inductor_launches  # noqa: E402
from reductions import MODELS as BENCH_MODELS  # noqa: E402
from report import header, markdown_table, publish  # noqa: E402

COLUMNS = (
    "model",
    "mlirfuse launches",
    "mlirfuse extern calls",
    "mlirfuse kernels",
    "mlirfuse compile s",
    "mlirfuse max err",
    "inductor launches",
    "inductor extern calls",
    "inductor kernels",
    "inductor compile s",
    "inductor max err",
)

def _tensors(out) -> list[torch.Tensor]:
    from torch.utils import _pytree as pytree

    if hasattr(out, "to_tuple"):  # transformers' ModelOutput
        out = out.to_tuple()
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


def max_error(got, expected) -> float:
    pairs = list(zip(_tensors(got), _tensors(expected)))
    return max((a.double() - e.double()).abs().max().item() for a, e in pairs if a.numel()) if pairs else 0.0


def measure_mlirfuse(model, args: tuple, kwargs: dict, expected) -> dict:
    start = time.perf_counter()
    cm = mlirfuse.compile(model, args, kwargs)
    got = cm(*args, **kwargs)
    seconds = time.perf_counter() - start
    s = cm.stats
    return {
        "launches": s["launches"], "externs": s["unfused_ops"] - s["unfused_views"], "kernels": s["kernels"],
        "seconds": seconds, "err": max_error(got, expected),
    }


def measure_inductor(model, args: tuple, kwargs: dict, expected) -> dict:
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    start = time.perf_counter()
    with torch.no_grad(), torch._inductor.config.patch(fx_graph_cache=False):
        compiled = torch.compile(model, backend="inductor")
        got, codes = run_and_get_code(compiled, *args, **kwargs)
    seconds = time.perf_counter() - start
    counts = [count_inductor(code) for code in codes]
    return {
        "launches": sum(count_inductor_launches(c) for c in codes), "externs": sum(e for _, e in counts),
        "kernels": sum(k for k, _ in counts), "seconds": seconds, "err": max_error(got, expected),
    }


def zoo_models(attn: str) -> dict:
    """name -> () -> (model, args, kwargs), from tests/test_zoo.py."""
    import test_zoo

    return {
        f"{name} ({attn})": (lambda name=name: (test_zoo.build(name, attn), *test_zoo.example(name)))
        for name in test_zoo.ARCHITECTURES
    }


def bench_models() -> dict:
    def wrap(build):
        def make():
            model, inputs = build()
            return model.eval(), inputs, {}

        return make

    return {name: wrap(build) for name, build in BENCH_MODELS.items()}


def _cell(m: dict | str, key: str, fmt: str = "{}") -> str:
    return m if isinstance(m, str) else fmt.format(m[key])


def row(name: str, m: dict | str, i: dict | str) -> list[str]:
    return [name] + [
        _cell(x, k, f) for x in (m, i)
        for k, f in (("launches", "{}"), ("externs", "{}"), ("kernels", "{}"), ("seconds", "{:.1f}"), ("err", "{:.1e}"))
    ]


def _attempt(measure, *args):
    try:
        return measure(*args)
    except Exception as e:  # noqa: BLE001 - a model one compiler cannot take is a row, not the end of the run
        return f"fails: {type(e).__name__}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attn", default="sdpa", choices=("sdpa", "eager"), help="attention of the zoo models")
    parser.add_argument("--models", default="", help="comma-separated names (zoo names or bench model names)")
    parser.add_argument("--no-write", action="store_true", help="do not append to bench/RESULTS.md")
    args = parser.parse_args(argv)

    models = {**zoo_models(args.attn), **bench_models()}
    if args.models:
        wanted = args.models.split(",")
        models = {k: v for k, v in models.items() if any(k == w or k.startswith(w + " ") for w in wanted)}
    rows = []
    for name, make in models.items():
        torch.manual_seed(0)
        model, margs, mkwargs = make()
        with torch.no_grad():
            expected = model(*margs, **mkwargs)
        m = _attempt(measure_mlirfuse, model, margs, mkwargs, expected)
        i = _attempt(measure_inductor, model, margs, mkwargs, expected)
        rows.append(row(name, m, i))
        print(" | ".join(rows[-1]), file=sys.stderr, flush=True)

    totals = ["total"] + [
        str(sum(int(r[c]) for r in rows if r[c].isdigit())) if COLUMNS[c].split()[-1] in ("launches", "calls", "kernels") else ""
        for c in range(1, len(COLUMNS))
    ]
    report = f"{header('models.py')}\n\n{markdown_table(COLUMNS, rows + [totals], 1)}\n"
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
