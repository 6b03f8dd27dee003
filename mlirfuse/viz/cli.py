"""`mlirfuse viz` and the demo's graph page (the subcommand is declared in mlirfuse/tools/main.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from mlirfuse.errors import MlirfuseError
from mlirfuse.viz.draw import FORMATS, VizError, render, to_html
from mlirfuse.viz.source import InvalidInput, graph_of_compiled, load


def viz(target: str, output: Path | None, fmt: str | None) -> int:
    """Draw `target` (a .mlir file or a bundled model) into `output`; errors go to stderr with exit 1."""
    if fmt is None:
        fmt = output.suffix[1:] if output is not None and output.suffix[1:] in FORMATS else "html"
    output = output or Path(f"graph.{fmt}")
    try:
        text = render(load(target), fmt)
        output.write_text(text)
    except MlirfuseError as e:
        print(e if isinstance(e, InvalidInput) else f"mlirfuse viz: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"mlirfuse viz: error: cannot write '{output}': {e.strerror}", file=sys.stderr)
        return 1
    print(f"wrote {output}")
    return 0


def write_demo_page(cm, path: Path) -> None:
    """The demo's fusion graph page; a missing browser asset is reported, not fatal."""
    try:
        path.write_text(to_html(graph_of_compiled(cm, "TinyBlock")))
        print(f"wrote {path}: the fusion graph (open it in a browser; hover a group for why its neighbours were not fused)")
    except VizError as e:
        print(f"no {path}: {e}")
