"""The scripts under examples/ run as a user runs them (examples/embed_compiler.py: test/lit/Examples/)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

pytest.importorskip("transformers")


def load_example(name: str):
    """The example script as a module (in this process: torch and transformers are imported once per suite)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_transformers_report_example(capsys):
    assert load_example("transformers_report").main(["--arch", "gpt2", "--layers", "1"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("GPT2Model: 1 layer")
    assert "mlirfuse fusion report" in out and "not fused with, and why" in out
    assert int(re.search(r"launches per call  : (\d+)", out).group(1)) > 0
    assert "(ok)" in out and "MISMATCH" not in out
    assert "[mlirfuse" not in err  # not a terminal: no progress line


def test_torch_compile_example(capsys):
    assert load_example("torch_compile").main(["--steps", "2"]) == 0
    out, _ = capsys.readouterr()
    assert out.count("parameters equal") == 2 and out.rstrip().endswith("ok"), out
    launches = {role: int(n) for role, n in re.findall(r"^(forward|backward): \d+ graph\(s\), (\d+) launches", out, re.M)}
    assert launches.get("forward", 0) > 0 and launches.get("backward", 0) > 0, out
