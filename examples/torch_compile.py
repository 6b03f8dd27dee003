"""Train a small MLP with `torch.compile(model, backend="mlirfuse")` next to an eager copy.

    python examples/torch_compile.py [--steps N]

The backend is found by name through the `torch_dynamo_backends` entry point
(no `import mlirfuse` needed to compile). Forward and backward graphs are
both fused; after each SGD step the loss and every parameter are compared
with the eager copy, and the backend's per-role stats are printed at the end.
"""

from __future__ import annotations

import argparse
import copy
import sys

import torch
from torch import nn
from torch.nn import functional as F


class MLP(nn.Module):
    def __init__(self, d: int = 16, hidden: int = 32):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, hidden), nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    eager = MLP()
    fused = copy.deepcopy(eager)
    compiled = torch.compile(fused, backend="mlirfuse", dynamic=False)
    opt_e, opt_f = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (eager, fused))
    x, y = torch.randn(4, 8, 16), torch.randn(4, 8, 16)
    ok = True
    for step in range(args.steps):
        losses = []
        for model, opt in ((eager, opt_e), (compiled, opt_f)):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        same = all(torch.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(eager.parameters(), fused.parameters()))
        ok &= same and abs(losses[0] - losses[1]) <= 1e-5 * max(1.0, abs(losses[0]))
        print(f"step {step}: loss eager {losses[0]:.6f}, mlirfuse {losses[1]:.6f}, parameters {'equal' if same else 'DIFFER'}")

    from mlirfuse.backend import backend

    for role, stats in backend.stats.items():
        print(f"{role}: {stats['graphs']} graph(s), {stats.get('launches', 0)} launches, "
              f"{stats.get('unfused_ops', 0) - stats.get('unfused_views', 0)} ATen calls per call")
    print("ok" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
