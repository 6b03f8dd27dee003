"""Kernels shared modulo constants: distinct kernels with fusion-outline's lift-constants and hoist-views off and on (issue 20 item 3).

    python bench/constants.py              # bench models, table to bench/RESULTS.md
    python bench/constants.py --zoo        # and the 13 transformers architectures of tests/test_zoo.py
    python bench/constants.py --no-write   # print only

Per model: distinct kernels and launches per forward with constants compared
by value (`lift-constants=false`, `hoist-views=false`) and shared (the
defaults: float constants as scalar arguments, view indices as views taken
before the launch), the kernels saved, of them by float constants
(`cm.stats["constant_merges"]`), the views taken before launches
(`unfused_views`, by value and shared) and the largest difference between
the two compiles' outputs (0: the shared kernels compute the same bits).
Kernels run in Triton's interpreter on CPU.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
from launches import MODELS  # noqa: E402
from torch import nn  # noqa: E402

import mlirfuse  # noqa: E402
from compile_time import UnrolledLSTM  # noqa: E402
from report import header, markdown_table, publish  # noqa: E402


class ScaledLayer(nn.Module):
    """A pre-norm residual layer whose eps and branch scale are its own (DeepNet-style depth scaling)."""

    def __init__(self, d: int, eps: float, scale: float):
        super().__init__()
        self.norm, self.fc, self.scale = nn.LayerNorm(d, eps=eps), nn.Linear(d, d), scale

    def forward(self, x):
        return x + torch.relu(self.fc(self.norm(x))) * self.scale


class ScaledStack(nn.Module):
    """8 layers, branch scale 1/sqrt(2l) and eps cycling 1e-3 .. 1e-6: no two layers alike, so no layer dedup."""

    def __init__(self, layers: int = 8, d: int = 64):
        super().__init__()
        self.layers = nn.ModuleList(
            ScaledLayer(d, 10.0 ** -(3 + i % 4), 1 / math.sqrt(2 * (i + 1))) for i in range(layers)
        )

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def bench_models() -> dict:
    """name -> () -> (model, args, kwargs)."""
    models = {"8 layers, per-layer eps and scale d=64 [4,16,64]": lambda: (ScaledStack(), (torch.randn(4, 16, 64),), {})}
    models.update({name: (lambda build=build: (*build(), {})) for name, build in MODELS.items()})
    models["LSTM 64 steps h=128 [64,1,128]"] = lambda: (UnrolledLSTM(64), (torch.randn(64, 1, 128),), {})
    return models


def zoo_models() -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import test_zoo

    return {
        f"{name} (sdpa)": (lambda name=name: (test_zoo.build(name, "sdpa"), *test_zoo.example(name)))
        for name in test_zoo.ARCHITECTURES
    }


def _flat(out) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict) or hasattr(out, "values"):
        out = list(out.values())
    return [t for o in out for t in _flat(o)] if isinstance(out, (list, tuple)) else []


def measure(make) -> list[str]:
    torch.manual_seed(0)
    model, args, kwargs = make()
    model.eval()
    compiled = [mlirfuse.compile(model, args, kwargs, options={"lift-constants": share, "hoist-views": share})
                for share in (False, True)]
    off, on = (_flat(cm(*args, **kwargs)) for cm in compiled)
    diff = max(((a.double() - b.double()).abs().max().item() for a, b in zip(off, on) if a.numel()), default=0.0)
    return [
        str(compiled[0].stats["kernels"]), str(compiled[1].stats["kernels"]),
        str(compiled[0].stats["kernels"] - compiled[1].stats["kernels"]), str(compiled[1].stats["constant_merges"]),
        f"{compiled[0].stats['unfused_views']} / {compiled[1].stats['unfused_views']}",
        str(compiled[1].stats["launches"]), f"{diff:.1e}",
    ]


COLUMNS = ("model", "kernels, by value", "kernels, shared", "kernels saved", "of them by float constants",
           "views before launches, by value / shared", "launches", "max abs diff, shared vs by value")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", action="store_true", help="also the transformers architectures of tests/test_zoo.py")
    parser.add_argument("--no-write", action="store_true", help="do not write bench/RESULTS.md")
    args = parser.parse_args(argv)
    models = bench_models() | (zoo_models() if args.zoo else {})
    rows = []
    for name, make in models.items():
        rows.append([name, *measure(make)])
        print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    publish(f"{header('constants.py')}\n\n{markdown_table(COLUMNS, rows)}", not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
