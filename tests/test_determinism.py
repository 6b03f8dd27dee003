"""The same model gives byte-identical IR, kernel names and Triton sources in two processes.

Each process compiles the models below from scratch (own kernel cache) and
prints what it produced; the processes get different hash seeds, so an
output that depends on set/dict-of-str iteration order, `id()`s or
addresses shows up as a difference.
"""

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import json, sys
import torch
import torch.nn.functional as F
import mlirfuse
from mlirfuse.models import TinyBlock


class Mixed(torch.nn.Module):
    # reductions, norms, split/cat, casts and an unfused op next to each other
    def forward(self, x, y, w):
        a, b = torch.split(x * 2 + y, [3, 5], dim=-1)
        c = torch.cat([torch.sigmoid(a), b - 1], dim=-1)
        n = F.layer_norm(c, (8,)) + torch.softmax(x, dim=0)
        m = (n @ w).relu()
        return m.sum(-1, keepdim=True), torch.atan2(x, y).to(torch.float16), F.group_norm(x.view(2, 4, 8), 2)


torch.manual_seed(0)
models = {
    "tiny_block": (TinyBlock(d_model=32, n_heads=2, seq=8).eval(), (torch.randn(1, 8, 32),)),
    "mixed": (Mixed().eval(), (torch.randn(8, 8), torch.randn(8), torch.randn(8, 4))),
}
out = {}
for name, (model, inputs) in models.items():
    cm = mlirfuse.compile(model, inputs)
    out[name] = {
        "mlir": cm.mlir,
        "kernel_names": list(cm.kernels),
        "sources": {k: v.source for k, v in cm.kernels.items()},
    }
json.dump(out, sys.stdout)
"""


def compile_in_subprocess(tmp_path, hash_seed: str) -> dict:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        PYTHONHASHSEED=hash_seed,
        MLIRFUSE_CACHE_DIR=str(tmp_path / f"cache-{hash_seed}"),
        TRITON_INTERPRET="1",
        TRITON_DEFAULT_FP_FUSION="1",
    )
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def _diff(a: str, b: str) -> str:
    return "\n".join(list(difflib.unified_diff(a.splitlines(), b.splitlines(), "process 1", "process 2", lineterm=""))[:60])


def test_two_processes_compile_identically(tmp_path):
    first = compile_in_subprocess(tmp_path, "1")
    second = compile_in_subprocess(tmp_path, "2")
    assert first.keys() == second.keys()
    for model in first:
        a, b = first[model], second[model]
        assert a["kernel_names"], f"{model}: no kernels, nothing was compared"
        assert a["kernel_names"] == b["kernel_names"], model
        assert a["mlir"] == b["mlir"], f"{model}: final IR differs\n{_diff(a['mlir'], b['mlir'])}"
        for name in a["kernel_names"]:
            assert a["sources"][name] == b["sources"][name], (
                f"{model}: Triton source of {name} differs\n{_diff(a['sources'][name], b['sources'][name])}"
            )
