"""The ahead-of-time worker pool (runtime/aot.py): one compile per distinct kernel and target, the most expensive
waiting kernel first, kernels handed over as they are lowered, workers that import Triton only."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import mlirfuse
from mlirfuse.runtime.aot import AotCompiles, compile_key, expected_cost, pool_stats, signature, start_workers
from mlirfuse.runtime.aot_worker import ANSWER, READY
from mlirfuse.runtime.kernels import write_source
from helpers import Lambda

ROOT = Path(__file__).resolve().parents[1]


def _kernel(fn, *inputs):
    (kernel,) = mlirfuse.compile(Lambda(fn), inputs).kernels.values()
    return kernel


def test_kernels_equal_but_for_their_name_compile_once():
    kernel = _kernel(lambda a: torch.sigmoid(a) * 2, torch.randn(4, 16))
    twin = kernel.renamed("twin_of_the_kernel")
    aot = AotCompiles()
    first, second = aot.results([(kernel, 90), (twin, 90)])
    assert aot.started == 1
    assert (first.name, first.entry, second.name, second.entry) == (kernel.name, kernel.name, twin.name, kernel.name)
    assert second.cubin == first.cubin and kernel.name.encode() in first.cubin  # the function is the first's
    assert second.seconds == 0 and first.seconds > 0
    # Another target, or another kernel, is another compile.
    (other,) = aot.results([(twin, 80)])
    assert aot.started == 2 and other.entry == twin.name and other.arch == 80
    tanh = _kernel(lambda a: torch.tanh(a) * 2, torch.randn(4, 16))
    assert compile_key(tanh, 90) != compile_key(kernel, 90) == compile_key(twin, 90) != compile_key(twin, 80)


def test_the_most_expensive_waiting_kernel_compiles_first():
    x = torch.randn(8, 32)
    pointwise = _kernel(lambda a: torch.relu(a) + 1, x)
    reduction = _kernel(lambda a: torch.softmax(a, -1), x)
    gemm = _kernel(lambda a, b: (a @ b).relu(), x, torch.randn(32, 16))
    assert gemm.kind == "matmul" and reduction.kind == "persistent-reduction"
    assert expected_cost(gemm) > expected_cost(reduction) > expected_cost(pointwise)
    # One at a time, all submitted before the first is taken: taken (and so waiting) in the order of their cost.
    compiled = AotCompiles(jobs=1).results([(pointwise, 90), (reduction, 90), (gemm, 90)])
    waited = {c.name: c.waited for c in compiled}
    assert waited[gemm.name] < waited[reduction.name] < waited[pointwise.name]
    for c in compiled:  # the worker's seconds per stage, each stage of Triton's there
        assert {"ast", "ttir", "ttgir", "llir", "ptx", "cubin"} <= dict(c.stages).keys(), c.stages


def test_compile_hands_each_kernel_to_the_pool_for_its_dry_run_launch(tmp_path, monkeypatch):
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32)).eval()
    x = torch.randn(4, 16)
    cm = mlirfuse.compile(model, (x,), aot_targets=("sm_90",))
    specialized, stopped = cm._current.aot_specialized[90]
    assert stopped is None and specialized.keys() == cm.kernels.keys()
    keys = {compile_key(k, 90, specialized[name]) for name, k in cm.kernels.items()}
    assert cm.aot is not None and cm.aot.started == len(keys) >= 2
    assert mlirfuse.compile(model, (x,)).aot is None
    started = cm.aot.started
    manifest = mlirfuse.save(cm, tmp_path / "pkg", targets=("sm_90",))
    assert cm.aot.started == started  # save collected them: nothing compiled twice
    assert all(k["targets"]["sm_90"]["function"] == name for name, k in manifest["kernels"].items())
    assert all(k["targets"]["sm_90"]["launch"]["signature"] == specialized[name]["signature"]
               for name, k in manifest["kernels"].items())
    with torch.no_grad():
        torch.testing.assert_close(mlirfuse.load(tmp_path / "pkg", weights=model)(x), model(x))
    # Another target at save: compiled then, the one started at compile still collected.
    manifest = mlirfuse.save(cm, tmp_path / "both", targets=("sm_80", "sm_90"))
    assert cm.aot.started == 2 * started and all(len(k["targets"]) == 2 for k in manifest["kernels"].values())

    def refuse(*args, **kwargs):
        raise AssertionError("exported before the targets were checked")

    monkeypatch.setattr(torch.export, "export", refuse)
    with pytest.raises(ValueError, match=r"a target is sm_<arch> \(sm_80, sm_90\), got 'hopper'"):
        mlirfuse.compile(model, (x,), aot_targets=("hopper",))


def test_a_worker_imports_triton_only_and_warms_up_before_its_first_request(tmp_path):
    kernel = _kernel(lambda a: torch.exp(a) - 1, torch.randn(4, 16))
    request = [str(write_source(kernel)), kernel.name, json.dumps(signature(kernel)), "90", str(tmp_path / "k.cubin"), ""]
    # TRITON_INTERPRET=1 as in the caller: the worker still imports no interpreter (numpy), nor torch.
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "mlirfuse.runtime.aot_worker", "--serve", "90"],
                          input=json.dumps(request) + "\n", capture_output=True, text=True, env=env, timeout=300)
    lines = proc.stdout.splitlines()
    ready = json.loads(next(line for line in lines if line.startswith(READY))[len(READY):])
    answer = json.loads(next(line for line in lines if line.startswith(ANSWER))[len(ANSWER):])
    assert proc.returncode == 0 and answer["error"] is None, proc.stderr[-3000:]
    assert ready["warmup"] > 0 and answer["cpu"] > ready["cpu"] > 0
    assert (tmp_path / "k.cubin").read_bytes()[:4] == b"\x7fELF"
    imported = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "triton" in imported and not {"torch", "numpy", "triton.runtime.interpreter"} & imported
    # The pool's workers start ahead of their first request, and say when they were warm and what they spent.
    start_workers((80, 90), count=2)
    assert len(pool_stats()) >= 2
    AotCompiles().results([(kernel, 80)])
    stats = [w for w in pool_stats() if w["warmup"] is not None]
    assert stats and all(w["ready_after"] >= w["warmup"] > 0 and w["cpu"] > 0 for w in stats)


def test_a_worker_runs_the_callers_mlirfuse_whatever_the_working_directory_holds(tmp_path):
    # `python -m mlirfuse.runtime.aot_worker` looks in the working directory first: a folder holding another
    # mlirfuse (another checkout, as when comparing two) would compile with that one's worker.
    decoy = tmp_path / "mlirfuse"
    (decoy / "runtime").mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise ImportError('the decoy mlirfuse was imported')\n")
    kernel = _kernel(lambda a: torch.exp(a) * 3, torch.randn(4, 16))
    (tmp_path / "kernel.pkl").write_bytes(pickle.dumps(kernel))
    script = (
        f"import pickle, sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from mlirfuse.runtime.aot import compile_kernels\n"
        "(compiled,) = compile_kernels([pickle.loads(open('kernel.pkl', 'rb').read())], arch=90)\n"
        "print(compiled.cubin[:4])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == repr(b"\x7fELF"), proc.stderr[-3000:]
