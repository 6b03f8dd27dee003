"""Import order and Triton's environment never change what mlirfuse computes.

Each case runs in a fresh process: `triton` (or what imports it) first, then
mlirfuse, with `TRITON_INTERPRET` unset, 0 or 1; CPU tensors must run through
the interpreter and the kernels must still compile for a GPU afterwards, in
that same process.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys
for name in sys.argv[1:]:
    __import__(name)

import json, tempfile
import torch
import triton.language as tl
import mlirfuse
from mlirfuse.runtime.aot import signature
from mlirfuse.runtime.aot_worker import compile_file
from mlirfuse.runtime.kernels import write_source


class M(torch.nn.Module):
    def forward(self, x, y):
        return torch.softmax(torch.relu(x * y + 1), -1), (x - y).amax(1), torch.sigmoid(x) * 2

x, y = torch.randn(8, 32), torch.randn(8, 32)
language = {ns: dict(vars(ns)) for ns in (tl, tl.core, tl.standard, tl.math)}
m = M()
cm = mlirfuse.compile(m, (x, y))
for got, want in zip(cm(x, y), m(x, y)):
    torch.testing.assert_close(got, want)
source = "".join(k.source for k in cm.kernels.values())
assert "tl.sum" in source and "tl.sigmoid" in source, source

# The interpreter's patches are gone: triton.language is as it was.
for ns, before in language.items():
    changed = [n for n, v in before.items() if vars(ns).get(n) is not v]
    assert not changed, (ns.__name__, changed)

# triton.compile works in this process after interpreted launches.
for k in cm.kernels.values():
    out = tempfile.mktemp(suffix=".cubin")
    compile_file(str(write_source(k)), k.name, json.dumps(signature(k)), "90", out)
    assert open(out, "rb").read(4) == b"\\x7fELF"
print("ok")
"""

CASES = [(["triton"], None), (["torch._inductor"], "0"), (["triton"], "1")]
if importlib.util.find_spec("transformers") is not None:
    CASES.append((["transformers", "transformers.models.gpt2.modeling_gpt2"], None))


@pytest.mark.parametrize("first, interpret", CASES, ids=lambda v: "+".join(v) if isinstance(v, list) else f"TRITON_INTERPRET={v}")
def test_import_order_and_triton_env_do_not_matter(first, interpret):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    if interpret is not None:
        env["TRITON_INTERPRET"] = interpret
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    # Warnings are errors: Triton's FP-fusion default warning included.
    proc = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", SCRIPT, *first],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600,
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-4000:]
