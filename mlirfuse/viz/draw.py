"""Render a `FusionGraph` as Graphviz DOT, as SVG (Graphviz's `dot`), or as one self-contained HTML page.

The page inlines Graphviz compiled to WebAssembly (@viz-js/viz, installed
from npm by `make setup` next to this file, see package.json), which lays
out and draws the DOT text in the browser: nothing is fetched at view time.
`page.js` only wires hover and click on the drawn clusters to the details
panel; the layout is Graphviz's.
"""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from pathlib import Path

from mlirfuse.dialect import GroupKind
from mlirfuse.errors import MlirfuseError
from mlirfuse.viz.graph import ATEN, COLLECTIVE, CONSTANT, EXTERN, INPUT, OP, OUTPUT, VIEW, Cluster, FusionGraph

HERE = Path(__file__).resolve().parent
VIZ_JS = HERE / "node_modules" / "@viz-js" / "viz" / "dist" / "viz-global.js"

# Graphviz (in the browser too) sizes boxes with its own metrics for this family; browsers draw it as Arial or Liberation Sans.
FONT = "Helvetica"
# Group kind -> (fill, border).
KIND_COLOURS = {
    GroupKind.POINTWISE: ("#dbeafe", "#2563eb"),
    GroupKind.REDUCTION: ("#dcfce7", "#16a34a"),
    GroupKind.PERSISTENT_REDUCTION: ("#fef3c7", "#d97706"),
    GroupKind.CONCAT: ("#f3e8ff", "#9333ea"),
    GroupKind.SCAN: ("#ccfbf1", "#0d9488"),
}
OTHER_KIND = ("#f1f5f9", "#475569")
# The border of the launch during which the planned peak of live intermediates falls.
PEAK_COLOUR = "#dc2626"
# Node kind -> DOT attributes.
NODE_STYLES = {
    OP: {"shape": "box", "style": "rounded,filled", "fillcolor": "white", "color": "#64748b"},
    ATEN: {"shape": "box", "style": "filled,bold", "fillcolor": "#fee2e2", "color": "#b91c1c", "penwidth": "2"},
    EXTERN: {"shape": "box3d", "style": "filled,bold", "fillcolor": "#ffedd5", "color": "#c2410c", "penwidth": "2"},
    VIEW: {"shape": "ellipse", "style": "dashed", "color": "#94a3b8", "fontcolor": "#475569"},
    INPUT: {"shape": "box", "style": "rounded,filled", "fillcolor": "#f8fafc", "color": "#cbd5e1", "fontcolor": "#334155", "fontsize": "9"},
    OUTPUT: {"shape": "box", "style": "rounded,filled,bold", "fillcolor": "#e2e8f0", "color": "#334155"},
    CONSTANT: {"shape": "box", "style": "rounded,dotted", "color": "#94a3b8"},
    COLLECTIVE: {"shape": "hexagon", "style": "filled,bold", "fillcolor": "#ede9fe", "color": "#6d28d9", "penwidth": "2"},
}
# What the legend says of each node kind.
LEGEND = {
    ATEN: "unfused ATen op",
    EXTERN: "extern call (ATen, strided operands)",
    VIEW: "view (aliases its input)",
    INPUT: "function argument",
    COLLECTIVE: "collective: issue or wait (torch.distributed)",
}


class VizError(MlirfuseError):
    """The graph could not be drawn in the format asked for."""


def quote(text: str) -> str:
    """A DOT double-quoted string; newlines become DOT's centred line breaks."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(attrs: dict[str, str], sep: str = ", ") -> str:
    """`k="v", ...` for a node's [...] list; sep="; " for a subgraph's statements."""
    return sep.join(f"{k}={quote(v)}" for k, v in attrs.items())


def cluster_label(cluster: Cluster) -> str:
    """Kernel name, kind and op count, and a compiled launch's bytes and FLOPs: what each cluster says of itself."""
    n = len(cluster.ops)
    lines = [cluster.name, f"{cluster.kind} · {n} op{'s' if n != 1 else ''}"]
    lines += [text for text in (cluster.cost, cluster.peak) if text]
    return "\n".join(lines)


def cluster_tooltip(cluster: Cluster) -> str:
    if not cluster.reasons:
        return f"{cluster.name}: no neighbour left outside was recorded (compile with explain)"
    return f"{cluster.name}: not fused with, and why\n" + "\n".join(cluster.reasons)


def to_dot(graph: FusionGraph) -> str:
    """The graph in Graphviz DOT: one `cluster_<id>` subgraph per fusion group, with `id` and `class` for the page."""
    lines = [
        "digraph fusion {",
        f"  graph [{_attrs({'fontname': FONT, 'rankdir': 'TB', 'nodesep': '0.25', 'ranksep': '0.3', 'newrank': 'true', 'tooltip': graph.title})}];",
        f"  node [{_attrs({'fontname': FONT, 'fontsize': '10', 'height': '0.3', 'margin': '0.08,0.03'})}];",
        f"  edge [{_attrs({'color': '#64748b', 'arrowsize': '0.6'})}];",
    ]
    by_cluster: dict[str, list] = {}
    for node in graph.nodes:
        by_cluster.setdefault(node.cluster, []).append(node)

    def node_line(node, indent: str) -> str:
        attrs = {"id": node.id, "class": f"node-{node.kind}", "label": node.label, "tooltip": node.title, **NODE_STYLES[node.kind]}
        return f"{indent}{node.id} [{_attrs(attrs)}];"

    several = len(graph.functions) > 1
    for function in graph.functions:
        indent = "  "
        if several:  # each function in a cluster of its own; its groups nest inside
            lines.append(f"  subgraph {quote('cluster_func_' + function)} {{")
            lines.append(f"    {_attrs({'label': '@' + function, 'class': 'function', 'style': 'dashed', 'color': '#94a3b8'}, '; ')};")
            indent = "    "
        for node in by_cluster.get(None, []):
            if node.function == function:
                lines.append(node_line(node, indent))
        for cluster in graph.clusters:
            if cluster.function != function:
                continue
            fill, border = KIND_COLOURS.get(cluster.kind, OTHER_KIND)
            attrs = {
                "id": cluster.id,
                "class": f"fusion-group kind-{cluster.kind}",
                "label": cluster_label(cluster),
                "tooltip": cluster_tooltip(cluster),
                "style": "filled,rounded",
                "fillcolor": fill,
                "color": border,
                "penwidth": "1.5",
                "fontsize": "10",
            }
            if cluster.peak:
                attrs.update({"class": attrs["class"] + " peak", "color": PEAK_COLOUR, "penwidth": "3"})
            lines.append(f"{indent}subgraph cluster_{cluster.id} {{")
            lines.append(f"{indent}  {_attrs(attrs, '; ')};")
            lines.extend(node_line(node, indent + "  ") for node in by_cluster.get(cluster.id, []))
            lines.append(f"{indent}}}")
        if several:
            lines.append("  }")
    lines.extend(f"  {a} -> {b};" for a, b in graph.edges)
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_svg(graph: FusionGraph) -> str:
    """The graph drawn by Graphviz's `dot` (must be on PATH)."""
    dot = shutil.which("dot")
    if dot is None:
        raise VizError(
            "--format svg needs Graphviz's 'dot' program on PATH (Debian: apt-get install graphviz); "
            "--format html draws the graph without it, --format dot writes the DOT text"
        )
    result = subprocess.run([dot, "-Tsvg"], input=to_dot(graph), capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise VizError(f"Graphviz 'dot' failed: {result.stderr.strip()}")
    return result.stdout


def page_data(graph: FusionGraph) -> dict:
    """What page.js reads: the DOT text and, per cluster and node id, what the details panel shows."""
    return {
        "title": graph.title,
        "dot": to_dot(graph),
        "groups": {
            c.id: {"name": c.name, "kind": c.kind, "ops": c.ops, "reasons": c.reasons, "nodes": c.nodes, "function": c.function,
                   "cost": c.cost, "peak": c.peak}
            for c in graph.clusters
        },
        "nodes": {n.id: {"kind": n.kind, "title": n.title, "cluster": n.cluster} for n in graph.nodes},
    }


def _script(text: str) -> str:
    """Text that is safe inside a <script> element."""
    return text.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def _legend() -> str:
    items = [
        f'<li><span class="swatch" style="background:{fill};border-color:{border}"></span>{html.escape(kind)} group</li>'
        for kind, (fill, border) in KIND_COLOURS.items()
    ]
    for kind, text in LEGEND.items():
        style = NODE_STYLES[kind]
        items.append(
            f'<li><span class="swatch node" style="background:{style.get("fillcolor", "white")};'
            f'border-color:{style["color"]}"></span>{html.escape(text)}</li>'
        )
    items.append(f'<li><span class="swatch" style="border-color:{PEAK_COLOUR};border-width:3px"></span>'
                 "launch at the peak of live memory</li>")
    return '<ul class="legend">' + "".join(items) + "</ul>"


def to_html(graph: FusionGraph) -> str:
    """One self-contained page: the graph drawn in the browser, hover or click a group for its kernel and explain reasons."""
    if not VIZ_JS.is_file():
        raise VizError(
            f"the page inlines Graphviz for the browser (@viz-js/viz from npm), which is not installed at {VIZ_JS}: "
            f"run 'make setup' or 'npm ci --prefix {HERE}' in a source checkout; an installed wheel carries it unless it "
            f"was built with MLIRFUSE_WHEEL_WITHOUT_VIZ=1 (setup.py)"
        )
    s = graph.stats()
    summary = (
        f"{s['groups']} fusion groups · {s['kernels']} distinct kernels · "
        f"{s['unfused_ops']} unfused ATen calls · {s['unfused_views']} unfused views"
    )
    summary = " · ".join([summary, *graph.notes])
    data = json.dumps(page_data(graph)).replace("<", "\\u003c")
    title = html.escape(graph.title)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>mlirfuse fusion graph: {title}</title>
<style>
{(HERE / "page.css").read_text()}
</style>
</head>
<body>
<header>
<h1>mlirfuse fusion graph: <code>{title}</code></h1>
<p class="summary">{html.escape(summary)}</p>
{_legend()}
</header>
<main>
<div id="graph"><p class="loading">Drawing the graph with Graphviz (WebAssembly)…</p></div>
<aside id="details"><p class="hint">Hover over a fusion group (or click it to keep it here) to see its kernel, its ops and why each neighbour was not fused.</p></aside>
</main>
<script id="mlirfuse-data" type="application/json">{data}</script>
<script>
{_script(VIZ_JS.read_text())}
</script>
<script>
{_script((HERE / "page.js").read_text())}
</script>
</body>
</html>
"""


FORMATS = {"html": to_html, "dot": to_dot, "svg": to_svg}


def render(graph: FusionGraph, fmt: str) -> str:
    if fmt not in FORMATS:
        raise VizError(f"unknown format '{fmt}' (formats: {', '.join(FORMATS)})")
    return FORMATS[fmt](graph)
