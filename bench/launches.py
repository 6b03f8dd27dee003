"""Device calls per forward: mlirfuse vs TorchInductor on transformer, RNN and ResNet blocks (issue 10).

    python bench/launches.py              # print the table, append it to bench/RESULTS.md
    python bench/launches.py --no-write   # print only

For each model, in the same run: mlirfuse's Triton launches and ATen calls
(views excluded), Inductor's generated kernels, their launches and its
extern calls, each side's total device calls per forward (launches + ATen
or extern calls), and each side's largest absolute
difference from eager PyTorch. The last column says whether mlirfuse's
total is strictly below Inductor's (issue 10's bar). How calls are counted:
bench/device_calls.py. mlirfuse's kernels run in the Triton interpreter on
CPU; Inductor on CPU generates C++.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import inspect  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import mlirfuse.compiler  # noqa: E402
from compile_time import UnrolledLSTM  # noqa: E402
from device_calls import COLUMNS, measure_both, row  # noqa: E402
from reductions import GPT2Block, MLPBlock  # noqa: E402
from report import RESULTS, header, markdown_table, publish  # noqa: E402


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class LlamaBlock(nn.Module):
    """Llama-style decoder block: RMSNorm, rotary embeddings, grouped-query causal attention, SwiGLU MLP."""

    def __init__(self, d: int = 128, n_heads: int = 4, n_kv_heads: int = 2, hidden: int = 344, max_seq: int = 64):
        super().__init__()
        self.h, self.kvh, self.hd = n_heads, n_kv_heads, d // n_heads
        self.norm1, self.norm2 = nn.RMSNorm(d, eps=1e-6), nn.RMSNorm(d, eps=1e-6)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, n_kv_heads * self.hd, bias=False)
        self.v = nn.Linear(d, n_kv_heads * self.hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(max_seq).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def attention(self, x):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.k(x).view(b, t, self.kvh, self.hd).transpose(1, 2)
        v = self.v(x).view(b, t, self.kvh, self.hd).transpose(1, 2)
        cos, sin = self.cos[:t], self.sin[:t]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.o(y.transpose(1, 2).reshape(b, t, -1))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class BertLayer(nn.Module):
    """BERT-style post-LN encoder layer: attention with an additive padding mask, GELU feed-forward."""

    def __init__(self, d: int = 128, n_heads: int = 4, hidden: int = 512):
        super().__init__()
        self.h, self.hd = n_heads, d // n_heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-12), nn.LayerNorm(d, eps=1e-12)
        self.fc1, self.fc2 = nn.Linear(d, hidden), nn.Linear(hidden, d)

    def forward(self, x, mask):  # mask: [b, t], 1 = token, 0 = padding
        b, t, d = x.shape

        def heads(y):
            return y.view(b, t, self.h, self.hd).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        bias = (1.0 - mask[:, None, None, :]) * torch.finfo(x.dtype).min
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.hd) + bias
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = self.ln1(x + self.o(y))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class ResNetBlock(nn.Module):
    """torchvision's ResNet BasicBlock in inference: conv3x3-BN-ReLU-conv3x3-BN + identity (or a strided 1x1
    conv + BN where the shape changes), ReLU; BN statistics and affine parameters drawn, not the identity."""

    def __init__(self, cin: int = 32, cout: int = 32, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        with torch.no_grad():
            for bn in [m for m in self.modules() if isinstance(m, nn.BatchNorm2d)]:
                bn.running_mean.normal_(0, 0.2)
                bn.running_var.uniform_(0.5, 2.0)
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.normal_(0, 0.2)

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + identity)


def _bert_inputs():
    mask = torch.ones(2, 32)
    mask[1, 24:] = 0
    return (torch.randn(2, 32, 128), mask)


# name -> () -> (model, inputs); built after torch.manual_seed(0).
def _moe_layer():
    """A Mixtral-style sparse MoE layer (transformers' MixtralSparseMoeBlock: router, top-2 of 4 experts, SwiGLU
    experts as its default grouped_mm), weights drawn N(0, 0.05) (the block alone leaves them uninitialized)."""
    import transformers
    from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock

    config = transformers.MixtralConfig(hidden_size=64, intermediate_size=128, num_local_experts=4, num_experts_per_tok=2,
                                        experts_implementation="grouped_mm")
    block = MixtralSparseMoeBlock(config).eval()
    for p in block.parameters():
        nn.init.normal_(p, std=0.05)
    return block, (torch.randn(2, 16, 64),)


MODELS = {
    "MLP block d=256 h=1024 [2,128,256]": lambda: (MLPBlock(), (torch.randn(2, 128, 256),)),
    "GPT-2 block d=256 4 heads [2,128,256]": lambda: (GPT2Block(), (torch.randn(2, 128, 256),)),
    "LSTM 8 steps h=128 [8,1,128]": lambda: (UnrolledLSTM(8), (torch.randn(8, 1, 128),)),
    "Llama block d=128 4q/2kv heads [2,32,128]": lambda: (LlamaBlock(), (torch.randn(2, 32, 128),)),
    "BERT layer d=128 4 heads, padding mask [2,32,128]": lambda: (BertLayer(), _bert_inputs()),
    "ResNet basic block 32 ch [4,32,16,16]": lambda: (ResNetBlock(), (torch.randn(4, 32, 16, 16),)),
    "ResNet block 32->64 stride 2 [4,32,16,16]": lambda: (ResNetBlock(32, 64, 2), (torch.randn(4, 32, 16, 16),)),
    "MoE layer (Mixtral-style) d=64 4 experts top-2 [2,16,64]": _moe_layer,
}

def matmul_mode() -> dict:
    """`matmul=` for mlirfuse.compile where this checkout has it (Triton GEMM templates), else nothing."""
    return {"matmul": "triton"} if "matmul" in inspect.signature(mlirfuse.compiler.compile).parameters else {}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help=f"do not append to {RESULTS.name}")
    parser.add_argument("-k", default="", help="only models whose name contains this")
    args = parser.parse_args(argv)

    options = matmul_mode()
    rows = []
    for name, build in MODELS.items():
        if args.k not in name:
            continue
        torch.manual_seed(0)
        model, inputs = build()
        model.eval()
        rows.append(row(name, *measure_both(name, model, inputs, **options)))

    mode = f"matmul={options['matmul']}" if options else "matmuls as ATen calls (no `matmul=` option in this checkout)"
    report = f"{header('launches.py')}\n\nmlirfuse: {mode}\n\n{markdown_table(COLUMNS, rows, 1)}\n"
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
