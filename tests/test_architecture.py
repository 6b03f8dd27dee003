"""ARCHITECTURE.md stays true: every file or folder it names exists.

A bare file name (`emitter.py`) is taken in the folder its line names first
(the layer table's rows: `mlirfuse/lowering/` ... `emitter.py`).
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_PATH = re.compile(r"`([\w./-]+\.(?:py|md|mlir)|[\w-]+/(?:[\w-]+/)*)`")


def named_paths(text: str) -> set[str]:
    found = set()
    for line in text.splitlines():
        paths = [m.group(1) for m in _PATH.finditer(line) if not m.group(1).startswith("../")]
        folder = next((p for p in paths if p.endswith("/")), "")
        found |= {p if "/" in p else folder + p for p in paths}
    return found


def exists(path: str) -> bool:
    """A path from the repository root, or within the package (`ops/family.py`)."""
    return (ROOT / path).exists() or (ROOT / "mlirfuse" / path).exists()


def test_every_path_in_architecture_md_exists():
    paths = named_paths((ROOT / "ARCHITECTURE.md").read_text())
    assert len(paths) > 30, sorted(paths)
    missing = sorted(p for p in paths if not exists(p))
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"


def test_the_check_sees_a_missing_path():
    assert named_paths("| `mlirfuse/ops/` | `nope.py`, `passes/` |") == {"mlirfuse/ops/", "mlirfuse/ops/nope.py", "passes/"}
    assert not exists("mlirfuse/ops/nope.py") and exists("passes/")
