"""Draw fused IR: the dataflow graph with each fusion group as a cluster and its explain reasons.

    from mlirfuse.viz import graph_of, graph_of_compiled, render
    graph = graph_of_compiled(mlirfuse.compile(model, inputs, explain=True), "my model")
    Path("graph.html").write_text(render(graph, "html"))   # or "dot", "svg" (Graphviz's dot)

`mlirfuse viz MODEL_OR_MLIR -o graph.html` on the command line. Extraction
(graph.py) knows nothing of drawing; draw.py turns a graph into DOT, SVG or
one self-contained HTML page.
"""

from mlirfuse.viz.draw import FORMATS, VizError, render, to_dot, to_html, to_svg  # noqa: F401
from mlirfuse.viz.graph import Cluster, FusionGraph, Node, graph_of  # noqa: F401
from mlirfuse.viz.source import graph_of_compiled, graph_of_mlir, load  # noqa: F401
