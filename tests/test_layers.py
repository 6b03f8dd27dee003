"""The house's arrows, read from the AST of mlirfuse/: one view-chain walker."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mlirfuse"
VIEWS = PACKAGE / "ops" / "views.py"  # walk_views: the one loop up a chain of views
VIEW_WORDS = ("VIEW_OPS", "RESHAPES", "view_args")


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
