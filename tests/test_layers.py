"""The house's arrows, read from the AST of mlirfuse/: imports point down ARCHITECTURE.md's layers, no private name crosses modules, one view-chain walker."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mlirfuse"
VIEWS = PACKAGE / "ops" / "views.py"  # walk_views: the one loop up a chain of views
VIEW_WORDS = ("VIEW_OPS", "RESHAPES", "view_args")


def layers(text: str) -> list[list[str]]:
    """The paths of each row of ARCHITECTURE.md's layer table (first column), bottom layer first."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `mlirfuse/")]
    return [re.findall(r"`(mlirfuse/[^`]*)`", row.split("|")[1]) for row in rows]


def layer_of(path: str, table: list[list[str]]) -> int | None:
    """The row holding `path` (relative to the repository): a file named in it, or under a folder named in it."""
    for i, row in enumerate(table):
        if any(path == p or (p.endswith("/") and path.startswith(p)) for p in row):
            return i
    return None


def module_path(name: str, package: Path = PACKAGE) -> Path | None:
    """The file of module `name` (`mlirfuse.a.b`): a.b.py or a/b/__init__.py under `package`'s parent."""
    base = package.parent.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def imports(path: Path, package: Path = PACKAGE) -> list[tuple[int, Path, str | None]]:
    """(line, file imported, name taken or None) for each import of the package's own modules in `path`, function-local ones too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, module_path(a.name, package), None) for a in node.names if a.name.split(".")[0] == package.name]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == package.name:
            for a in node.names:
                sub = module_path(f"{node.module}.{a.name}", package)  # `from mlirfuse import models`: a module
                found.append((node.lineno, sub or module_path(node.module, package), None if sub else a.name))
    return [(line, target, name) for line, target, name in found if target is not None]


def violations(package: Path, table: list[list[str]]) -> list[str]:
    """Each import up the layers, of an unplaced file, or of another module's `_private` name, as `file:line: why`."""
    out = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).as_posix()
        here = layer_of(rel, table)
        if here is None:
            out.append(f"{rel}: in no row of the layer table")
            continue
        for line, target, name in imports(path, package):
            there = layer_of(target.relative_to(package.parent).as_posix(), table)
            where = f"{rel}:{line}"
            if there is not None and there > here:
                out.append(f"{where}: imports {target.relative_to(package.parent)} from a higher layer ({there} > {here})")
            if name and name.startswith("_") and not name.startswith("__") and target != path:
                out.append(f"{where}: imports the private name {name} of {target.relative_to(package.parent)}")
    return out


TABLE = layers((ROOT / "ARCHITECTURE.md").read_text())


def test_the_layer_table_orders_the_package():
    assert len(TABLE) >= 8 and TABLE[0][0] == "mlirfuse/ir.py", TABLE


def test_imports_point_down_and_keep_private_names_home():
    """No import from a lower layer to a higher one, none of another module's underscore name (function-local ones too)."""
    assert violations(PACKAGE, TABLE) == []


def test_layer_check_finds_planted_violations(tmp_path):
    """An upward import, a private name, an unplaced file: each is reported (a check that could not fail is no check)."""
    package = tmp_path / "mlirfuse"
    (package / "low").mkdir(parents=True)
    (package / "high").mkdir()
    (package / "__init__.py").write_text("")
    (package / "low" / "__init__.py").write_text("")
    (package / "high" / "__init__.py").write_text("")
    (package / "high" / "top.py").write_text("def _hidden():\n    pass\n")
    (package / "low" / "base.py").write_text("def f():\n    from mlirfuse.high.top import _hidden\n")
    (package / "stray.py").write_text("")
    table = [["mlirfuse/low/"], ["mlirfuse/high/", "mlirfuse/__init__.py"]]
    assert violations(package, table) == [
        "mlirfuse/low/base.py:2: imports mlirfuse/high/top.py from a higher layer (1 > 0)",
        "mlirfuse/low/base.py:2: imports the private name _hidden of mlirfuse/high/top.py",
        "mlirfuse/stray.py: in no row of the layer table",
    ]


def _steps_up(loop: ast.While) -> bool:
    """Does `loop` step to an operand's producer (`v = <op>.operands[0]`, or the op defining it)?"""
    return any(
        isinstance(node, ast.Assign) and ".operands[0]" in ast.unparse(node.value) for node in ast.walk(loop)
    )


def upward_loops(path: Path, words=VIEW_WORDS) -> list[str]:
    """`path:line` of each `while` loop that steps up through operands and names one of `words`."""
    text = path.read_text()
    return [
        f"{path}:{node.lineno}"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.While)
        and _steps_up(node)
        and any(w in (ast.get_source_segment(text, node) or "") for w in words)
    ]


def test_one_view_chain_walker():
    """Walking up a chain of views is written once, `ops/views.py`'s `walk_views`; the others call it with their predicate."""
    walks = [w for path in sorted(PACKAGE.rglob("*.py")) if path != VIEWS for w in upward_loops(path)]
    assert walks == [], f"view chains walked outside mlirfuse/ops/views.py (call walk_views): {walks}"
    assert len(upward_loops(VIEWS, ("through",))) == 1, "walk_views no longer reads as the one upward walk"


def test_view_walk_check_finds_a_planted_walker(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def root(v):\n    while v.owner.name in VIEW_OPS:\n        v = v.owner.operands[0]\n    return v\n")
    assert upward_loops(planted) == [f"{planted}:2"]
