"""Small bundled models: the demo's transformer-style block, and an MLP and a CNN for training (tests, bench/training.py)."""

from __future__ import annotations

import math

import torch
from torch import nn


class TinyBlock(nn.Module):
    """A pre-LayerNorm transformer block: causal self-attention and a GELU MLP.

    Written with plain torch ops so the importer sees matmuls, softmax,
    layer norms and the elementwise work around them.
    """

    def __init__(self, d_model: int = 64, n_heads: int = 4, seq: int = 16):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, 4 * d_model)
        self.fc2 = nn.Linear(4 * d_model, d_model)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.n_heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q = q.view(b, t, h, d // h).transpose(1, 2)
        k = k.view(b, t, h, d // h).transpose(1, 2)
        v = v.view(b, t, h, d // h).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h))
        scores = scores.masked_fill(~self.mask[:t, :t], float("-inf"))
        attn = scores.softmax(dim=-1) @ v
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
        y = self.fc2(nn.functional.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
        return x + y * torch.sigmoid(y)


def demo_inputs(seed: int = 0) -> tuple[torch.Tensor]:
    torch.manual_seed(seed)
    return (torch.randn(2, 16, 64),)


class MLP(nn.Module):
    """The MLP half of a transformer block: LayerNorm, Linear, GELU, Linear, residual."""

    def __init__(self, d_model: int = 32, hidden: int = 64):
        super().__init__()
        self.ln = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, hidden)
        self.fc2 = nn.Linear(hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln(x))))


class SmallCNN(nn.Module):
    """Two Conv-BatchNorm-ReLU stages, global average pooling and a linear head (train mode updates running stats)."""

    def __init__(self, channels: int = 4, classes: int = 3):
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(channels)
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.head(x.mean(dim=(2, 3)))
