"""A built wheel installs whole (issue 20 item 7): `mlirfuse viz` writes its HTML page from a fresh venv.

The wheel is built from a copy of this checkout's package (setup.py's build
step: the pinned Graphviz bundle must be in it, from the checkout or from
`npm ci`), installed with no dependencies into a new venv that sees this
venv's torch/torch-mlir/triton through a .pth line (so only the wheel's
mlirfuse is importable there), and its console script runs from another
directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = Path("mlirfuse/viz/node_modules/@viz-js/viz/dist/viz-global.js")


def _source_copy(dest: Path, with_bundle: bool) -> Path:
    """The files a wheel is built from: pyproject.toml, setup.py, README.md and the package, without node_modules."""
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "mlirfuse", dest / "mlirfuse", ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    if with_bundle:
        (dest / BUNDLE).parent.mkdir(parents=True)
        shutil.copy(ROOT / BUNDLE, dest / BUNDLE)
    return dest


def _build_wheel(source: Path, out: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(source)],
        capture_output=True, text=True, env=env, timeout=600,
    )


def test_wheel_carries_the_viewer_and_mlirfuse_viz_writes_html(tmp_path):
    has_bundle = (ROOT / BUNDLE).is_file()
    if not has_bundle and shutil.which("npm") is None:
        pytest.skip("neither the Graphviz bundle (make setup) nor npm to install it while building the wheel")
    (tmp_path / "src").mkdir()
    source = _source_copy(tmp_path / "src", with_bundle=has_bundle)
    built = _build_wheel(source, tmp_path / "wheels")
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((tmp_path / "wheels").glob("mlirfuse-*.whl"))

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                                str(wheel)], capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # The dependencies (torch, torch-mlir, triton) from this venv; not its mlirfuse (an editable install's finder
    # is a .pth of its own, which a path added this way does not run).
    Path(purelib, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([str(python), "-c", "import mlirfuse; print(mlirfuse.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(env_dir), where.stdout

    drawn = subprocess.run([str(env_dir / "bin" / "mlirfuse"), "viz", "TinyBlock", "-o", "graph.html"], cwd=work,
                           env=env, capture_output=True, text=True, timeout=600)
    assert drawn.returncode == 0, drawn.stdout + drawn.stderr
    page = (work / "graph.html").read_text()
    assert "fusion groups" in page  # the graph's summary
    bundle = (source / BUNDLE).read_text()  # the checkout's, or the one npm installed while building
    assert bundle[:2000] in page and bundle[-2000:] in page  # inlined whole


def test_a_wheel_without_the_viewer_is_refused(tmp_path):
    # No bundle and no npm on PATH: the build stops and says why, rather than a wheel whose `mlirfuse viz` fails.
    (tmp_path / "src").mkdir()
    source = _source_copy(tmp_path / "src", with_bundle=False)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = dict(os.environ, PATH=str(bin_dir))
    env.pop("MLIRFUSE_WHEEL_WITHOUT_VIZ", None)
    built = _build_wheel(source, tmp_path / "wheels", env)
    assert built.returncode != 0
    assert "MLIRFUSE_WHEEL_WITHOUT_VIZ" in built.stdout + built.stderr
    assert not list(tmp_path.glob("wheels/*.whl"))
