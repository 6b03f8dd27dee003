"""Telling the user what happened: progress on a terminal only, fusion decisions through `logging`."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import torch

import mlirfuse
from mlirfuse.dialect import make_context
from mlirfuse.ir import ir
from mlirfuse.passes.pipeline import build_pass_manager
from mlirfuse.progress import Progress
from helpers import Lambda

REPO = Path(__file__).resolve().parents[1]

CHAIN = textwrap.dedent(
    """\
    func.func @forward(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
      %0 = torch.aten.exp %arg0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32> loc("model.py":3:8)
      %1 = torch.aten.neg %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32> loc("model.py":4:8)
      %2 = torch.aten.tanh %1 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32> loc("model.py":5:8)
      return %2 : !torch.vtensor<[4,8],f32>
    }
    """
)


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal(monkeypatch):
    monkeypatch.delenv("MLIRFUSE_PROGRESS", raising=False)
    shown, quiet = Terminal(), io.StringIO()
    for stream in (shown, quiet):
        progress = Progress(stream)
        progress.phase("importing")
        progress.step("pass", 4, 12, "fusion-fuse-vertical")
        progress.done()
    assert quiet.getvalue() == ""
    out = shown.getvalue()
    assert "importing" in out and "pass 5/12 fusion-fuse-vertical" in out
    assert out.endswith("\r\x1b[K")  # the line is cleared at the end
    monkeypatch.setenv("MLIRFUSE_PROGRESS", "0")
    off = Terminal()
    Progress(off).phase("importing")
    assert off.getvalue() == ""


def test_compile_shows_each_pass_and_kernel_on_a_terminal(monkeypatch):
    monkeypatch.delenv("MLIRFUSE_PROGRESS", raising=False)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    model = Lambda(lambda x, w: torch.softmax(torch.exp(x) @ w, dim=-1) * 2)
    cm = mlirfuse.compile(model, (torch.randn(4, 8), torch.randn(8, 8)))
    out = terminal.getvalue()
    assert "exporting and importing the model" in out
    passes = out.count("] pass ")
    assert passes == 18 and "pass 17/18 fusion-outline" in out and "pass 18/18 fusion-schedule-collectives" in out, out
    assert f"lowering kernel {len(cm.kernels)}/{len(cm.kernels)}" in out, out
    assert out.endswith("\r\x1b[K")


def test_compile_is_quiet_when_stderr_is_not_a_terminal(capfd, monkeypatch):
    monkeypatch.delenv("MLIRFUSE_PROGRESS", raising=False)
    mlirfuse.compile(Lambda(lambda x: torch.exp(x) + 1), (torch.randn(4, 8),))
    assert capfd.readouterr().err == ""


def run_chain(pipeline: str) -> None:
    ctx = make_context()
    with ctx:
        module = ir.Module.parse(CHAIN)
        build_pass_manager(pipeline, ctx).run(module.operation)


def test_info_log_names_each_decision_and_its_reason(caplog):
    caplog.set_level(logging.INFO, logger="mlirfuse")
    run_chain("fusion-fuse-vertical{max-group-size=2}")
    messages = [r.getMessage() for r in caplog.records if r.name == "mlirfuse.fusion"]
    assert "fusion-fuse-vertical: fuse group(exp) at model.py:3 into group(neg) at model.py:4" in messages, messages
    refused = "fusion-fuse-vertical: not fusing group(exp, neg) at model.py:4 into group(tanh) at model.py:5: group size limit (3 > 2)"
    assert messages.count(refused) == 1, messages  # once, though asked each sweep
    assert not [r for r in caplog.records if r.levelno < logging.INFO]


def test_debug_log_adds_wraps_and_pass_times(caplog):
    caplog.set_level(logging.DEBUG, logger="mlirfuse")
    run_chain("fusion-fuse-vertical")
    messages = [r.getMessage() for r in caplog.records]
    assert "fusion-fuse-vertical: wrap exp at model.py:3 in a pointwise group" in messages, messages
    assert any(m.startswith("fusion-fuse-vertical: ") and m.endswith(" s") for m in messages), messages


def test_nothing_is_logged_by_default(caplog):
    caplog.set_level(logging.WARNING, logger="mlirfuse")
    run_chain("fusion-fuse-vertical{max-group-size=2}")
    assert not caplog.records


def test_mlirfuse_log_environment_variable():
    """MLIRFUSE_LOG=info in a fresh process: the decisions reach stderr (mlirfuse-opt here); a bad level is named."""

    def opt(level: str) -> subprocess.CompletedProcess:
        env = dict(os.environ, MLIRFUSE_LOG=level)
        return subprocess.run(
            [sys.executable, "-m", "mlirfuse.tools.opt", "-", "--fusion-fuse-vertical=max-group-size=2"],
            input=CHAIN, capture_output=True, text=True, env=env, cwd=REPO, timeout=120,
        )

    proc = opt("info")
    assert proc.returncode == 0, proc.stderr
    assert "[mlirfuse.fusion] INFO: fusion-fuse-vertical: not fusing group(exp, neg) at model.py:4" in proc.stderr
    proc = opt("loud")
    assert proc.returncode == 0 and "MLIRFUSE_LOG='loud' is not one of debug, info, warning, error" in proc.stderr
