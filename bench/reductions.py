"""Kernel counts of mlirfuse and Inductor (CPU) on models built around reductions.

    python bench/reductions.py              # print the table, append it to bench/RESULTS.md
    python bench/reductions.py --no-write   # print only

For each model: mlirfuse's stats (ATen ops imported, Triton launches, ATen
ops left unfused), Inductor's generated kernels and extern calls, and the
largest absolute difference between mlirfuse's output and eager PyTorch.
mlirfuse's kernels run in the Triton interpreter on CPU; Inductor on CPU
generates C++ and is not affected by TRITON_INTERPRET.

How device calls are counted, on both sides: bench/inductor.py. Views left
as ATen ops are "of which views"; "launches+unfused non-views" leaves them out.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from device_calls import measure_both  # noqa: E402
from report import RESULTS, header, markdown_table, publish  # noqa: E402


class SoftmaxMatmul(nn.Module):
    def __init__(self, k: int = 128, n: int = 256):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, n) / math.sqrt(k))

    def forward(self, x):
        return torch.softmax(x @ self.w, dim=-1)


class AddLayerNorm(nn.Module):
    def __init__(self, d: int = 256):
        super().__init__()
        self.ln = nn.LayerNorm(d)

    def forward(self, x, residual):
        return self.ln(x + residual)


class MLPBlock(nn.Module):
    def __init__(self, d: int = 256, hidden: int = 1024):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class GPT2Block(nn.Module):
    """Pre-LN GPT-2 block; attention spelled out in torch ops, as nanoGPT does."""

    def __init__(self, d: int = 256, n_heads: int = 4, max_seq: int = 128):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.fc_proj = nn.Linear(4 * d, d)
        causal = torch.tril(torch.ones(max_seq, max_seq)).view(1, 1, max_seq, max_seq)
        self.register_buffer("causal", causal, persistent=False)

    def attention(self, x):
        b, t, d = x.shape
        h = self.n_heads
        q, k, v = self.qkv(x).split(d, dim=2)
        q = q.view(b, t, h, d // h).transpose(1, 2)
        k = k.view(b, t, h, d // h).transpose(1, 2)
        v = v.view(b, t, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h))
        att = att.masked_fill(self.causal[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        return self.proj(y)

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


# name -> () -> (model, inputs); built after torch.manual_seed(0).
MODELS = {
    "softmax(x @ w) [64,128]x[128,256]": lambda: (SoftmaxMatmul(), (torch.randn(64, 128),)),
    "layernorm(x + residual) [64,256]": lambda: (AddLayerNorm(), (torch.randn(64, 256), torch.randn(64, 256))),
    "MLP block d=256 h=1024 [2,128,256]": lambda: (MLPBlock(), (torch.randn(2, 128, 256),)),
    "GPT-2 block d=256 4 heads [2,128,256]": lambda: (GPT2Block(), (torch.randn(2, 128, 256),)),
}

COLUMNS = (
    "model",
    "mlirfuse aten_ops",
    "mlirfuse launches",
    "mlirfuse unfused_ops",
    "of which views",
    "operand views",
    "mlirfuse launches+unfused",
    "mlirfuse launches+unfused non-views",
    "inductor kernels",
    "inductor extern calls",
    "inductor total",
    "max abs err vs eager",
)


def row(name: str, m: dict, i: dict) -> list[str]:
    return [
        name,
        str(m["aten_ops"]),
        str(m["launches"]),
        str(m["unfused_ops"]),
        str(m["unfused_views"]),
        str(m["operand_views"]),
        str(m["launches"] + m["unfused_ops"]),
        str(m["launches"] + m["unfused_ops"] - m["unfused_views"]),
        str(i["kernels"]),
        str(i["externs"]),
        str(i["kernels"] + i["externs"]),
        f"{m['err']:.2e}",
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help=f"do not append to {RESULTS.name}")
    args = parser.parse_args(argv)

    rows = []
    for name, build in MODELS.items():
        torch.manual_seed(0)
        model, inputs = build()
        model.eval()
        rows.append(row(name, *measure_both(name, model, inputs)))

    report = f"{header('reductions.py')}\n\n{markdown_table(COLUMNS, rows, 1)}\n"
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
