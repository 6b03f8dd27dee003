"""GEMM tile configurations and f32 dot precisions timed on a CUDA GPU: the evidence behind matmul.CONFIG_TABLE.

    python bench/gemm_configs.py --out DIR     # needs a CUDA device; writes DIR/gemm_configs.md

For each model and candidate (BLOCK_M, BLOCK_N, BLOCK_K, num_warps,
num_stages), the model is compiled afresh with that entry in
`mlirfuse.lowering.matmul.CONFIG_TABLE` for this GPU's target and run; the
table gives the GPU busy time per call (torch.profiler: kernels only, so
host overhead does not blur it), the relative error against the float64
model, and Inductor's busy time in the same run. For f32 it also tries
`tl.dot`'s input precisions: "tf32x3" (what mlirfuse emits compiled: three
tf32 products, f32-accurate), "ieee" (the FMA units, no tensor cores) and
"tf32" (one product, 10-bit mantissas: not eager's f32).
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu import _cast, gpu_activity, rel_error  # noqa: E402

import mlirfuse  # noqa: E402
from mlirfuse.lowering import matmul  # noqa: E402
from reductions import GPT2Block, MLPBlock  # noqa: E402
from report import header, markdown_table  # noqa: E402

CANDIDATES = {
    "f16": [(128, 128, 64, 8, 3), (128, 128, 32, 8, 3), (128, 128, 64, 4, 4), (128, 256, 64, 8, 3),
            (64, 128, 64, 4, 4), (128, 64, 64, 4, 4), (256, 128, 64, 8, 3), (64, 64, 64, 4, 4)],
    "f32": [(128, 64, 32, 8, 3), (64, 128, 32, 8, 3), (128, 128, 32, 8, 3), (64, 64, 32, 8, 3)],
}
PRECISIONS = ("tf32x3", "ieee", "tf32")

MODELS = {
    "MLP block d=1024 h=4096 [8,512,1024]": lambda: (MLPBlock(1024, 4096), (torch.randn(8, 512, 1024),)),
    "GPT-2 block d=768 12 heads [8,512,768]": lambda: (GPT2Block(768, 12, 512), (torch.randn(8, 512, 768),)),
}


def with_precision(precision: str):
    """matmul._dot emitting `precision` for compiled f32 operands instead of "tf32x3"."""
    original = matmul._dot

    def dot(acc, a, b, dtype, what):
        lines = original(acc, a, b, dtype, what)  # the compiled branch is the last line
        return lines[:-1] + [lines[-1].replace('input_precision="tf32x3"', f'input_precision="{precision}"')] \
            if dtype == "float32" else lines

    return original, dot


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--dtypes", default="bfloat16,float32")
    args = parser.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    major, _ = torch.cuda.get_device_capability()
    target = "sm_90" if major >= 9 else "sm_80"
    rows = []
    for name, make in MODELS.items():
        for dtype_name in args.dtypes.split(","):
            dtype = getattr(torch, dtype_name)
            cls = "f32" if dtype == torch.float32 else "f16"
            torch.manual_seed(0)
            model, inputs = make()
            model = model.to("cuda", dtype).eval()
            inputs = tuple(_cast(x.cuda(), dtype) for x in inputs)
            with torch.no_grad():
                reference = model.double()(*(x.double() for x in inputs))
                model = model.to(dtype)
                torch._dynamo.reset()
                compiled = torch.compile(model)
                compiled(*inputs)
                inductor_ms = gpu_activity(lambda: compiled(*inputs))[1]
            saved = dict(matmul.CONFIG_TABLE)
            for precision in PRECISIONS if cls == "f32" else ("-",):
                original, dot = with_precision(precision)
                matmul._dot = dot
                for config in CANDIDATES[cls]:
                    matmul.CONFIG_TABLE[(target, cls)] = config
                    try:
                        cm = mlirfuse.compile(model, inputs)
                        with torch.no_grad():
                            err = rel_error(cm(*inputs), reference)
                            ms = gpu_activity(lambda: cm(*inputs))[1]
                        cells = [f"{ms:.3f}", f"{err:.1e}"]
                    except Exception as e:  # noqa: BLE001
                        traceback.print_exc()
                        cells = [f"fails: {type(e).__name__}", ""]
                    rows.append([name, dtype_name, precision, "x".join(map(str, config[:3])) + f" w{config[3]} s{config[4]}",
                                 *cells, f"{inductor_ms:.3f}"])
                    print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
                matmul._dot = original
            matmul.CONFIG_TABLE.clear()
            matmul.CONFIG_TABLE.update(saved)
    columns = ("model", "dtype", "f32 precision", "config", "mlirfuse kernel ms", "mlirfuse err", "inductor kernel ms")
    report = f"{header('gemm_configs.py')}\n\nDevice: {torch.cuda.get_device_name()} ({target}).\n\n" \
             f"{markdown_table(columns, rows, 4)}\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gemm_configs.md").write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
