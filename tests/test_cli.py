"""mlirfuse-opt as users run it: a subprocess, exit codes, located diagnostics, no tracebacks."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

CHAIN = textwrap.dedent(
    """\
    func.func @forward(%x: !torch.vtensor<[4,16],f32>, %y: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32> {
      %int1 = torch.constant.int 1
      %0 = torch.aten.mul.Tensor %x, %y : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
      %1 = torch.aten.add.Scalar %0, %int1, %int1 : !torch.vtensor<[4,16],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,16],f32>
      %2 = torch.aten.relu %1 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
      %3 = torch.aten.sigmoid %2 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
      return %3 : !torch.vtensor<[4,16],f32>
    }
    """
)

# The group yields f32 but declares an f16 result: line 2 holds the group.
BAD_YIELD = textwrap.dedent(
    """\
    func.func @bad(%x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f16> {
      %0 = "fusion.group"(%x) ({
      ^bb0(%a: !torch.vtensor<[4],f32>):
        %1 = torch.aten.relu %a : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
        "fusion.yield"(%1) : (!torch.vtensor<[4],f32>) -> ()
      }) {kind = "pointwise"} : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f16>
      return %0 : !torch.vtensor<[4],f16>
    }
    """
)


def opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mlirfuse.tools.opt", *args],
        input=stdin, capture_output=True, text=True, cwd=REPO, timeout=120,
    )


def assert_user_error(result: subprocess.CompletedProcess) -> None:
    """Exit 1 with a message, never a Python traceback."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert result.stderr.strip(), "no diagnostic printed"
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


@pytest.fixture
def write(tmp_path):
    def write(text: str, name: str = "input.mlir") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


def test_syntax_error_is_located(write):
    path = write("func.func @f(%x: !torch.vtensor<[4],f32>) {\n  %0 = torch.aten.relu %x :\n}\n")
    result = opt(str(path))
    assert_user_error(result)
    assert f"{path}:" in result.stderr
    first = result.stderr.splitlines()[0]
    location, _, message = first.partition(": error: ")
    assert message, first
    file, line, col = location.rsplit(":", 2)
    assert file == str(path) and line.isdigit() and col.isdigit(), first
    assert int(line) in (2, 3)


def test_unknown_pass(write):
    path = write(CHAIN)
    assert_user_error(result := opt(str(path), "--pass-pipeline=builtin.module(fusion-no-such-pass)"))
    assert "fusion-no-such-pass" in result.stderr


def test_unknown_pass_flag(write):
    path = write(CHAIN)
    assert_user_error(result := opt(str(path), "--fusion-no-such-pass"))
    assert "fusion-no-such-pass" in result.stderr


@pytest.mark.parametrize(
    "element, message",
    [
        ("fusion-outline{no-such-option=1}", "no option 'no-such-option'"),
        ("fusion-outline{novalue}", "key=value"),
        ("fusion-outline{x=1", "unbalanced"),
        ("mlirfuse-pipeline{x=1}", "takes no options"),
    ],
)
def test_bad_pass_option(write, element, message):
    path = write(CHAIN)
    assert_user_error(result := opt(str(path), f"--pass-pipeline=builtin.module({element})"))
    assert message in result.stderr


def test_missing_input_file(tmp_path):
    missing = tmp_path / "does-not-exist.mlir"
    assert_user_error(result := opt(str(missing)))
    assert str(missing) in result.stderr


def test_verifier_failure_is_located(write):
    path = write(BAD_YIELD)
    assert_user_error(result := opt(str(path)))
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert errors, result.stderr
    assert errors[0].startswith(f"{path}:2:"), errors[0]
    assert "fusion.group" in errors[0] and "f16" in result.stderr


def test_verifier_failure_under_a_pipeline(write):
    path = write(BAD_YIELD)
    assert_user_error(opt(str(path), "--pass-pipeline=builtin.module(mlirfuse-pipeline)"))


def test_happy_path_pipeline_with_upstream_cse(write):
    path = write(CHAIN)
    result = opt(str(path), "--pass-pipeline=builtin.module(mlirfuse-pipeline, cse)")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    out = result.stdout
    assert out.count('"fusion.kernel"') == 1 and out.count('"fusion.launch"') == 1, out
    forward = out.partition("func.func @forward")[2]
    assert "torch.aten." not in forward, forward
    for op in ("mul.Tensor", "add.Scalar", "relu", "sigmoid"):
        assert f"torch.aten.{op}" in out


def test_happy_path_from_stdin_with_pass_flags():
    result = opt("-", "--fusion-fuse-elementwise", "--fusion-canonicalize", stdin=CHAIN)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('"fusion.group"') == 1
    assert '"fusion.kernel"' not in result.stdout


def test_emit_triton(write):
    path = write(CHAIN)
    result = opt(str(path), "--mlirfuse-pipeline", "--emit-triton")
    assert result.returncode == 0, result.stderr
    assert "@triton.jit" in result.stdout and "tl.sigmoid" in result.stdout


def test_output_reparses(write, tmp_path):
    out = tmp_path / "out.mlir"
    assert opt(str(write(CHAIN)), "--mlirfuse-pipeline", "-o", str(out)).returncode == 0
    again = opt(str(out))
    assert again.returncode == 0, again.stderr


# --- the pass registry ---------------------------------------------------------------------------
# That every pass is documented, listed and has its lit file is checked once:
# test/lit/python/passes-documented.py.


def test_mlirfuse_demo_reports_writes_and_matches_eager(tmp_path):
    """The README's main job: report, IR and kernels on disk, numerics checked against eager."""
    result = subprocess.run(
        [sys.executable, "-m", "mlirfuse.tools.main", "demo", "--out", str(tmp_path), "--aot", "0"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "mlirfuse fusion report" in out and "launches per call" in out
    assert "not fused with, and why" in out
    # The attention's head-split views are the matmuls' operands, not unfused ops.
    assert re.search(r"operand views\s+: [1-9]", out), out
    unfused = next(line for line in out.splitlines() if line.strip().startswith("unfused:"))
    assert "view" not in unfused and "transpose" not in unfused, unfused
    assert "(ok)" in out and "MISMATCH" not in out
    assert (tmp_path / "forward.mlir").read_text().count('"fusion.launch"') >= 1
    assert list((tmp_path / "kernels").glob("fused_*.py"))
