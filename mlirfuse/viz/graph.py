"""The dataflow graph of fused IR, as plain data for the renderers.

`graph_of(module)` walks every `func.func` of a module after fusion (or
part way: `fusion.group`s not yet outlined are drawn the same way) and
returns nodes, edges and one `Cluster` per fusion group:

- a `fusion.launch` (or non-extern `fusion.group`) is a cluster whose nodes
  are the torch ops of its body (the kernel's, for a launch: each launch
  gets its own copy), wired to the outside through the block arguments and
  the `fusion.yield`;
- an extern group (`fusion.group {kind = "extern"}`) is one `extern` node:
  one ATen call reading strided operands;
- any other torch op outside groups is an `aten` node (a `view` node when
  it only aliases its input, a `collective` node for a functional
  collective's issue or wait); function arguments are `input` nodes, each
  `func.return` an `output` node.

Constants are left out; lists (`torch.prim.ListConstruct`) are transparent,
so a `cat`'s pieces connect to the `cat`. Nothing here knows about DOT or
HTML (see mlirfuse.viz.draw).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlirfuse.dialect import GroupKind, find_kernel, group_kind
from mlirfuse.ir import computes, ir, parse_tensor_type, torch_name
from mlirfuse.ops.collectives import ISSUES, WAIT
from mlirfuse.ops.views import VIEW_OPS

# Node kinds.
# An extern group is drawn as one node of the extern kind, named after the group kind.
OP, ATEN, VIEW, EXTERN, INPUT, OUTPUT, CONSTANT = "op", "aten", "view", GroupKind.EXTERN.value, "input", "output", "constant"
# A functional collective's issue or wait (tensor-parallel graphs): an ATen call, drawn apart.
COLLECTIVE = "collective"


@dataclass
class Node:
    id: str
    kind: str  # one of the node kinds above; OP nodes sit in a cluster
    label: str  # what the node shows: a short op name, or an argument's name and type
    title: str  # the long form: full op name and result types
    cluster: str | None = None  # the id of the fusion group the node belongs to
    function: str = ""


@dataclass
class Cluster:
    """One fusion group: a launch of a kernel, or a group not yet outlined."""

    id: str
    name: str  # the kernel symbol, or "group N" before fusion-outline
    kind: str  # pointwise, reduction, persistent-reduction, concat ...
    ops: list[str]  # the torch ops the body computes, in order
    reasons: list[str]  # fusion.explain: each neighbour left outside and why
    nodes: list[str] = field(default_factory=list)
    function: str = ""
    cost: str = ""  # a compiled model's launch: the bytes it moves and its FLOPs (analysis/cost.py), in words
    peak: str = ""  # the launch during which the planned peak of live intermediates falls: that peak, in words


@dataclass
class FusionGraph:
    title: str
    notes: list[str] = field(default_factory=list)  # a compiled model's totals: peak live memory, bytes per call
    functions: list[str] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)

    def stats(self) -> dict[str, int]:
        """Counts that match `cm.stats` for a compiled model: groups, kernels, unfused ATen calls and views."""
        return {
            "groups": len(self.clusters),
            "kernels": len({c.name for c in self.clusters}),
            "unfused_ops": sum(1 for n in self.nodes if n.kind in (ATEN, EXTERN, COLLECTIVE)),
            "unfused_views": sum(1 for n in self.nodes if n.kind == VIEW),
        }


def short_name(op_name: str) -> str:
    """`torch.aten.add.Tensor` -> `add.Tensor`, `torch._c10d_functional.all_reduce` -> `all_reduce`; other dialects keep their prefix."""
    return op_name.removeprefix("torch.aten.").removeprefix("torch._c10d_functional.").removeprefix("torch.")


def type_text(t: ir.Type) -> str:
    """`!torch.vtensor<[2,16],f32>` -> `2x16 f32`; other types as MLIR prints them."""
    parsed = parse_tensor_type(t)
    if parsed is None or parsed[1] is None:
        return str(t)
    _, shape, _ = parsed
    dims = "x".join("?" if d is None else str(d) for d in shape) or "scalar"
    spelling = str(t).rsplit(",", 1)[-1].rstrip(">")
    return f"{dims} {spelling}"


def _skipped(op) -> bool:
    return op.operation.name.startswith("torch.constant.")


def _strings(attr) -> list[str]:
    return [ir.StringAttr(a).value for a in ir.ArrayAttr(attr)]


class _Builder:
    def __init__(self, title: str):
        self.graph = FusionGraph(title)
        self._edges: dict[tuple[str, str], None] = {}

    def node(self, kind: str, label: str, title: str, function: str, cluster: Cluster | None = None) -> str:
        node = Node(f"n{len(self.graph.nodes)}", kind, label, title, cluster.id if cluster else None, function)
        self.graph.nodes.append(node)
        if cluster is not None:
            cluster.nodes.append(node.id)
        return node.id

    def connect(self, sources: list[str], target: str) -> None:
        for source in sources:
            self._edges[(source, target)] = None

    def op_node(self, op, kind: str, sources: dict, function: str, cluster: Cluster | None = None) -> str:
        """A node for `op`, wired from its operands' producers; its results map to it."""
        name = torch_name(op)
        types = ", ".join(type_text(r.type) for r in op.results)
        node = self.node(kind, short_name(name), f"{name} -> {types}" if types else name, function, cluster)
        for v in op.operands:
            self.connect(sources.get(v, []), node)
        for r in op.results:
            sources[r] = [node]
        return node

    def body(self, block: ir.Block, operands, results, sources: dict, function: str, cluster: Cluster | None) -> list[str]:
        """Nodes for a group's body; outer `sources` learn which inner nodes produce the group's results."""
        inner = {arg: sources.get(v, []) for arg, v in zip(block.arguments, operands)}
        ops = list(block.operations)
        nodes = []
        for op in ops[:-1]:
            if _skipped(op):
                continue
            if op.operation.name == "torch.prim.ListConstruct":
                inner[op.results[0]] = [s for v in op.operands for s in inner.get(v, [])]
                continue
            nodes.append(self.op_node(op, OP, inner, function, cluster))
        for r, v in zip(results, ops[-1].operands):
            sources[r] = inner.get(v, [])
        return nodes

    def cluster(self, op, name: str, kind: str, block: ir.Block, sources: dict, function: str) -> None:
        reasons = _strings(op.attributes["fusion.explain"]) if "fusion.explain" in op.attributes else []
        ops = [o.operation.name for o in block.operations if computes(o)]
        cluster = Cluster(f"group{len(self.graph.clusters)}", name, kind, ops, reasons, function=function)
        self.graph.clusters.append(cluster)
        self.body(block, op.operands, op.results, sources, function, cluster)

    def extern(self, group, sources: dict, function: str) -> None:
        """An extern group: one node for the ATen call, its operand views folded into it."""
        block = group.regions[0].blocks[0]
        ops = [o for o in list(block.operations)[:-1] if computes(o)]
        calls = [o.operation.name for o in ops if o.operation.name not in VIEW_OPS] or [o.operation.name for o in ops]
        views = len(ops) - len(calls)
        label = "extern " + ", ".join(short_name(c) for c in calls)
        title = " -> ".join(o.operation.name for o in ops) + f" ({views} operand views folded into the call)"
        node = self.node(EXTERN, label + (f"\n{views} operand views" if views else ""), title, function)
        for v in group.operands:
            self.connect(sources.get(v, []), node)
        for r in group.results:
            sources[r] = [node]

    def function(self, func, arg_names: list[str] | None) -> None:
        fname = ir.StringAttr(func.attributes["sym_name"]).value
        self.graph.functions.append(fname)
        block = func.regions[0].blocks[0]
        sources: dict = {}
        for i, arg in enumerate(block.arguments):
            name = arg_names[i] if arg_names and i < len(arg_names) else f"%arg{i}"
            sources[arg] = [self.node(INPUT, f"{name}\n{type_text(arg.type)}", f"argument {i} of @{fname}: {arg.type}", fname)]
        for op in block.operations:
            name = op.operation.name
            if _skipped(op):
                continue
            if name == "torch.prim.ListConstruct":
                sources[op.results[0]] = [s for v in op.operands for s in sources.get(v, [])]
            elif name == "func.return":
                node = self.node(OUTPUT, "return", f"results of @{fname}", fname)
                for v in op.operands:
                    self.connect(sources.get(v, []), node)
            elif name == "fusion.launch":
                kernel_name = ir.FlatSymbolRefAttr(op.attributes["kernel"]).value
                kernel = find_kernel(op.operation, kernel_name)
                kind = group_kind(kernel)
                self.cluster(op, kernel_name, kind, kernel.regions[0].blocks[0], sources, fname)
            elif name == "fusion.group":
                kind = group_kind(op)
                if kind == GroupKind.EXTERN:
                    self.extern(op, sources, fname)
                else:
                    self.cluster(op, f"group {len(self.graph.clusters)}", kind, op.regions[0].blocks[0], sources, fname)
            elif name == "torch.vtensor.literal":
                self.op_node(op, CONSTANT, sources, fname)
            elif torch_name(op) in ISSUES or torch_name(op) == WAIT:
                self.op_node(op, COLLECTIVE, sources, fname)
            else:
                self.op_node(op, VIEW if name in VIEW_OPS else ATEN, sources, fname)

    def finish(self) -> FusionGraph:
        self.graph.edges = list(self._edges)
        return self.graph


def graph_of(module: ir.Module, title: str = "module", arg_names: list[str] | None = None) -> FusionGraph:
    """The dataflow graph of every function with a body in `module`.

    `arg_names` names the first function's arguments (a compiled model's
    parameters and inputs); otherwise they are `%argN`.
    """
    builder = _Builder(title)
    funcs = [
        op for op in module.body.operations
        if op.operation.name == "func.func" and len(op.regions[0].blocks) > 0
    ]
    for i, func in enumerate(funcs):
        builder.function(func, arg_names if i == 0 else None)
    return builder.finish()
