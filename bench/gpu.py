"""mlirfuse vs TorchInductor vs eager on a CUDA GPU, real launches, in one run.

    python bench/gpu.py --out DIR            # needs a CUDA device; writes DIR/gpu.md and DIR/gpu.log
    python bench/gpu.py --zoo --out DIR      # also the zoo's models checked against eager on the GPU
    python bench/gpu.py --models gpt2 --no-timing

Nothing here runs in CI (no GPU there). The section it writes goes into
bench/RESULTS.md by hand (`python -c "import report; report.replace(open(F).read())"`
from bench/), since the GPU machine is not the machine holding the checkout.

Per model and dtype:
- error: ||out - ref|| / ||ref|| over every output element, `ref` the same
  model run eagerly in float64 on the GPU; eager's own error is the yardstick
  (f32 GEMMs in mlirfuse's Triton kernels use tf32, eager's cuBLAS does not).
- ms/call: `triton.testing.do_bench` median of whole calls (host overhead
  included: mlirfuse's program is a Python loop, Inductor's a Python wrapper).
- kernel ms: the sum of GPU activity (kernels, copies, memsets) per call from
  torch.profiler, over 5 calls; kernels: GPU kernels per call (real launches,
  counted by the profiler, not by either compiler).
- compile s: compile plus first call, from cold in-process caches.
Inductor runs `torch.compile(model)` in its default mode (no CUDA graphs).
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import copy  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import mlirfuse  # noqa: E402
from reductions import MODELS as BENCH_MODELS  # noqa: E402
from reductions import AddLayerNorm, GPT2Block, MLPBlock, SoftmaxMatmul  # noqa: E402
from report import header, markdown_table  # noqa: E402

COLUMNS = (
    "model", "dtype",
    "eager ms", "eager kernels",
    "mlirfuse ms", "mlirfuse kernel ms", "mlirfuse kernels", "mlirfuse compile s", "mlirfuse err",
    "inductor ms", "inductor kernel ms", "inductor kernels", "inductor compile s", "inductor err",
    "eager err",
)


def _leaves(out) -> list[torch.Tensor]:
    from torch.utils import _pytree as pytree

    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


def rel_error(got, ref) -> float:
    pairs = [(g, r) for g, r in zip(_leaves(got), _leaves(ref)) if r.is_floating_point() and r.numel()]
    num = sum(float((g.double() - r.double()).pow(2).sum()) for g, r in pairs)
    den = sum(float(r.double().pow(2).sum()) for _, r in pairs)
    return math.sqrt(num / den) if den else math.sqrt(num)


def _cast(x, dtype):
    return x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x


def _to(x, device):
    return x.to(device) if isinstance(x, torch.Tensor) else x


def bench_ms(fn) -> float:
    from triton.testing import do_bench

    return do_bench(fn, warmup=50, rep=300, return_mode="median")


def gpu_activity(fn, calls: int = 5) -> tuple[float, float]:
    """(GPU kernels per call, GPU busy ms per call) read from torch.profiler."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    device = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    kernels = [e for e in device if not e.name.lower().startswith(("memcpy", "memset"))]
    busy_us = sum(e.time_range.elapsed_us() for e in device)
    return len(kernels) / calls, busy_us / calls / 1000


def _transformer(kind: str, layers: int, hidden: int, heads: int, kv_heads: int, ffn: int, batch: int, seq: int):
    import transformers

    if kind == "gpt2":
        config = transformers.GPT2Config(n_layer=layers, n_head=heads, n_embd=hidden, n_positions=seq,
                                         vocab_size=32000, use_cache=False, attn_implementation="sdpa")
        model = transformers.GPT2Model(config)
    else:
        config = transformers.LlamaConfig(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                                          num_key_value_heads=kv_heads, intermediate_size=ffn,
                                          max_position_embeddings=seq, vocab_size=32000, use_cache=False,
                                          attn_implementation="sdpa")
        model = transformers.LlamaModel(config)
    ids = torch.randint(2, 32000, (batch, seq))
    return model.eval(), (ids,), {}


def models() -> dict:
    """name -> () -> (model, args, kwargs) on the CPU, built after torch.manual_seed(0)."""
    found = {f"{name} (bench size)": (lambda build=build: (*build(), {})) for name, build in BENCH_MODELS.items()}
    found.update({
        "softmax(x @ w) [4096,1024]x[1024,4096]": lambda: (SoftmaxMatmul(1024, 4096), (torch.randn(4096, 1024),), {}),
        "layernorm(x + residual) [16384,1024]": lambda: (
            AddLayerNorm(1024), (torch.randn(16384, 1024), torch.randn(16384, 1024)), {}),
        "MLP block d=1024 h=4096 [8,512,1024]": lambda: (MLPBlock(1024, 4096), (torch.randn(8, 512, 1024),), {}),
        "GPT-2 block d=768 12 heads [8,512,768]": lambda: (
            GPT2Block(768, 12, 512), (torch.randn(8, 512, 768),), {}),
        "GPT2Model d=768 12 heads 4 layers sdpa [8,512]": lambda: _transformer("gpt2", 4, 768, 12, 12, 3072, 8, 512),
        "LlamaModel d=1024 16 heads 4 kv 2 layers sdpa [4,512]": lambda: _transformer(
            "llama", 2, 1024, 16, 4, 2816, 4, 512),
    })
    return found


# --variant: mlirfuse compiled another way (a row of its own; eager and Inductor are not re-timed).
VARIANTS = {
    "default": {},
    "prologue=false": {"options": {"prologue": False}},  # no pointwise producer recomputed in a GEMM's tiles
    "matmul=aten": {"matmul": "aten"},  # GEMMs left to ATen (cuBLAS), as Inductor's default mode does
}


def measure(name: str, make, dtype, timing: bool, log, variant: str = "default") -> list[str]:
    torch.manual_seed(0)
    model, args, kwargs = make()
    model = model.to("cuda", dtype).eval()
    args = tuple(_cast(_to(a, "cuda"), dtype) for a in args)
    kwargs = {k: _cast(_to(v, "cuda"), dtype) for k, v in kwargs.items()}
    with torch.no_grad():
        expected = model(*args, **kwargs)
        ref_model = copy.deepcopy(model).double()
        reference = ref_model(*(_cast(a, torch.float64) for a in args),
                              **{k: _cast(v, torch.float64) for k, v in kwargs.items()})
        del ref_model
    cells = {"model": name, "dtype": str(dtype).removeprefix("torch."), "eager err": f"{rel_error(expected, reference):.1e}"}

    def run_eager():
        with torch.no_grad():
            return model(*args, **kwargs)

    if timing and variant == "default":
        cells["eager ms"] = f"{bench_ms(run_eager):.3f}"
        cells["eager kernels"] = f"{gpu_activity(run_eager)[0]:.0f}"

    def side(prefix: str, build):
        try:
            torch.cuda.synchronize()
            start = time.perf_counter()
            fn = build()
            with torch.no_grad():
                got = fn()
            torch.cuda.synchronize()
            cells[f"{prefix} compile s"] = f"{time.perf_counter() - start:.1f}"
            cells[f"{prefix} err"] = f"{rel_error(got, reference):.1e}"
            if timing:
                def call():
                    with torch.no_grad():
                        return fn()
                cells[f"{prefix} ms"] = f"{bench_ms(call):.3f}"
                kernels, busy = gpu_activity(call)
                cells[f"{prefix} kernels"] = f"{kernels:.0f}"
                cells[f"{prefix} kernel ms"] = f"{busy:.3f}"
        except Exception as e:  # noqa: BLE001 - a model one compiler cannot take is a row, not the end of the run
            cells[f"{prefix} err"] = f"fails: {type(e).__name__}"
            print(f"--- {name} {dtype} {prefix}:\n{traceback.format_exc()}", file=log, flush=True)

    def ours():
        cm = mlirfuse.compile(model, args, kwargs, **VARIANTS[variant])
        return lambda: cm(*args, **kwargs)

    def inductor():
        torch._dynamo.reset()
        compiled = torch.compile(model)
        return lambda: compiled(*args, **kwargs)

    side("mlirfuse", ours)
    if variant != "default":
        cells["model"] = f"{name} [{variant}]"
        return [cells.get(c, "") for c in COLUMNS]
    side("inductor", inductor)
    return [cells.get(c, "") for c in COLUMNS]


def zoo(log) -> list[str]:
    """The zoo's models (tests/test_zoo.py's CASES) compiled and run on the GPU, checked against eager at f32 tolerances."""
    import test_zoo

    lines = []
    for attn in ("sdpa", "eager"):
        for name in (name for name, a in test_zoo.CASES if a == attn):
            torch.manual_seed(0)
            try:
                model = test_zoo.build(name, attn).cuda()
                args, kwargs = test_zoo.example(name)
                args = tuple(_to(a, "cuda") for a in args)
                kwargs = {k: _to(v, "cuda") for k, v in kwargs.items()}
                with torch.no_grad():
                    expected = model(*args, **kwargs)
                cm = mlirfuse.compile(model, args, kwargs)
                got = cm(*args, **kwargs)
                torch.cuda.synchronize()
                a, e = _leaves(got)[0], _leaves(expected)[0]
                ok = torch.allclose(a, e, rtol=1e-3, atol=1e-3)
                diff = (a.double() - e.double()).abs().max().item()
                lines.append(f"{name} ({attn}): {'ok' if ok else 'MISMATCH'} max abs diff {diff:.1e}, "
                             f"{cm.stats['launches']} launches")
            except Exception as e:  # noqa: BLE001
                lines.append(f"{name} ({attn}): fails: {type(e).__name__}: {str(e)[:200]}")
                print(f"--- zoo {name} {attn}:\n{traceback.format_exc()}", file=log, flush=True)
            print(lines[-1], file=sys.stderr, flush=True)
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for gpu.md and gpu.log")
    parser.add_argument("--models", default="", help="comma-separated name prefixes")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--zoo", action="store_true", help="also check the zoo's models against eager on the GPU")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--rows-only", action="store_true", help="write only the table, to DIR/gpu-<variant>.md")
    parser.add_argument("--variant", default="default", choices=list(VARIANTS), help="how mlirfuse compiles (see VARIANTS)")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench/gpu.py needs a CUDA device", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False  # eager f32 as PyTorch ships it
    args.out.mkdir(parents=True, exist_ok=True)
    log = open(args.out / "gpu.log", "w")
    chosen = models()
    if args.models:
        chosen = {k: v for k, v in chosen.items() if any(k.startswith(w) for w in args.models.split(","))}
    rows = []
    for name, make in chosen.items():
        for dtype in args.dtypes.split(","):
            if "bench size" in name and dtype != "float32":
                continue
            try:
                rows.append(measure(name, make, getattr(torch, dtype), not args.no_timing, log, args.variant))
            except Exception as e:  # noqa: BLE001
                rows.append([name, dtype, f"fails: {type(e).__name__}"] + [""] * (len(COLUMNS) - 3))
                print(f"--- {name} {dtype}:\n{traceback.format_exc()}", file=log, flush=True)
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
            torch.cuda.empty_cache()
    device = torch.cuda.get_device_name()
    if args.rows_only:
        (args.out / f"gpu-{args.variant.replace('=', '-')}.md").write_text(markdown_table(COLUMNS, rows, 2) + "\n")
        return 0
    report = (f"{header('gpu.py')}\n\nDevice: {device}, CUDA {torch.version.cuda}.\n\n"
              f"{markdown_table(COLUMNS, rows, 2)}\n")
    if args.zoo:
        report += "\nZoo on the GPU (f32, `rtol=atol=1e-3` on the main output):\n\n" + "\n".join(
            f"- {line}" for line in zoo(log)) + "\n"
    (args.out / "gpu.md").write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
