"""The module-level imports inside mlirfuse/ form no cycle, and no function imports an mlirfuse module.

A function-local import that breaks a cycle hides a layering mistake
(STYLE.md); the import graph is read from the source with `ast`, so the test
needs nothing imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mlirfuse"

# Lazy imports kept on purpose (start-up time), none of them breaking a cycle.
KNOWN_LOCAL_IMPORTS = {
    # cli: the CLIs import the heavy stages when a command needs them (fast --help)
    ("mlirfuse.tools.opt", "mlirfuse.passes.pipeline"),
    ("mlirfuse.tools.opt", "mlirfuse.lowering.triton"),
    ("mlirfuse.tools.main", "mlirfuse"),
    ("mlirfuse.tools.main", "mlirfuse.models"),
    ("mlirfuse.tools.main", "mlirfuse.runtime.aot"),
    ("mlirfuse.tools.main", "mlirfuse.viz.cli"),
    ("mlirfuse.tools.main", "mlirfuse.ir"),
    ("mlirfuse.tools.main", "mlirfuse.analysis.cost"),
    ("mlirfuse.tools.main", "mlirfuse.runtime.liveness"),
    ("mlirfuse.tools.main", "mlirfuse.ops.collectives"),
    ("mlirfuse.tools.main", "mlirfuse.runtime.cache"),
    ("mlirfuse.tools.main", "mlirfuse.package"),
    # `import mlirfuse` stays light: compile() imports the compiler when called, save()/load() the packages
    ("mlirfuse", "mlirfuse.compiler"),
    ("mlirfuse", "mlirfuse.package"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node, module: str, is_package: bool) -> list[str]:
    """The mlirfuse modules an import statement names (`from a import b` may name module a.b)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "mlirfuse"]
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    if base.split(".")[0] != "mlirfuse":
        return []
    return [base] + [f"{base}.{a.name}" for a in node.names]


def _graph():
    """(module -> modules imported at module level, [(module, module imported inside a function)])."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges, local = {m: set() for m in modules}, []
    for module, path in modules.items():
        tree = ast.parse(path.read_text())
        is_package = path.name == "__init__.py"
        top = set()
        for node in tree.body:  # module level, including `if TYPE_CHECKING:` / try blocks
            for inner in ast.walk(node):
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    break
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    top.update(n for n in _imported(inner, module, is_package) if n in modules)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)):
                        local += [(module, n) for n in _imported(inner, module, is_package) if n in modules]
        # Importing a.b.c runs a/__init__ and a/b/__init__ first.
        for name in list(top):
            parts = name.split(".")
            top.update(".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in modules)
        edges[module] = top - {module}
    return edges, local


def _cycle(edges) -> list[str] | None:
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == "open":
                return stack[stack.index(n) :] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = "done"
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_no_module_level_import_cycle():
    edges, _ = _graph()
    # A package's __init__ running first is not a cycle through it.
    edges = {m: {n for n in ns if not m.startswith(n + ".")} for m, ns in edges.items()}
    cycle = _cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_function_local_import_of_mlirfuse_modules():
    _, local = _graph()
    unexpected = sorted({edge for edge in local if edge not in KNOWN_LOCAL_IMPORTS})
    assert not unexpected, "function-local imports: " + ", ".join(f"{a} imports {b}" for a, b in unexpected)


def test_the_check_would_see_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
