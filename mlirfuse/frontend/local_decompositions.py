"""`run_decompositions({})` on one node per distinct composite call, not on the whole graph.

torch.export's training IR keeps CompositeImplicitAutograd ops whole
(`chunk`, `numpy_T`, `contiguous`, `reshape` ...), and
`run_decompositions({})` makes the program functional and decomposes those
it does not preserve by re-tracing every node of the graph: on an unrolled
LSTM of 100 steps (1,700 ops) about as long as the export itself, though
only a handful of distinct calls change. When the traced graph mutates
nothing (no mutated buffer or input, no in-place or `out=` op, no
higher-order op) and has static shapes, functionalization has nothing to
do, and `run_decompositions` leaves every other op as it is. So each
distinct composite call (op, argument shapes, strides, dtypes, devices and
constant arguments) is put once into a small program of its own, which
`run_decompositions({})` decomposes by torch's own rules, and what it made
of a call replaces every node making that call. Anything else returns
False and the caller runs `run_decompositions` on the whole program.
"""

from __future__ import annotations

import operator
import warnings

import torch
from torch.export import ExportedProgram
from torch.utils import _pytree as pytree


def decompose_locally(program: ExportedProgram) -> bool:
    """Decompose `program`'s composite nodes in place as `run_decompositions({})` would, one small program per
    distinct call; True if done, False (the program untouched) where the whole program must be re-traced."""
    signature = program.graph_signature
    if signature.buffers_to_mutate or signature.user_inputs_to_mutate or signature.parameters_to_mutate:
        return False
    graph = program.graph_module.graph
    calls: dict = {}  # call key -> [nodes]
    for node in graph.nodes:
        if not _static(node.meta.get("val")):
            return False
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        target = node.target
        if not isinstance(target, torch._ops.OpOverload) or target._schema.is_mutable:
            return False  # a higher-order op, a symbolic int op, an in-place or out= op: functionalization's work
        if not torch._C._dispatch_has_kernel_for_dispatch_key(target.name(), "CompositeImplicitAutograd"):
            continue
        if isinstance(node.meta.get("val"), (list, tuple)) and any(
            u.op != "call_function" or u.target is not operator.getitem for u in node.users
        ):
            return False  # a list of tensors read whole
        key = _call_key(node)
        if key is None:
            return False
        calls.setdefault(key, []).append(node)
    if not calls:
        return True
    decomposed = _decompose_calls([nodes[0] for nodes in calls.values()])
    if decomposed is None:
        return False
    returned = set(next(n for n in reversed(graph.nodes) if n.op == "output").all_input_nodes)
    if any(small is not None and _returns_input(small) and returned.intersection(nodes)
           for nodes, small in zip(calls.values(), decomposed)):
        return False  # a program result that is an input: the signature would name an input as a result
    replaced: dict = {}  # a node inlined already (or a getitem of one) -> what stands for it now
    with program.graph_module._set_replace_hook(signature.get_replace_hook()):  # results keep their names' specs
        for nodes, small in zip(calls.values(), decomposed):
            if small is None:
                continue  # kept whole
            for node in nodes:
                _inline(graph, node, small, [replaced.get(n, n) for n in node.all_input_nodes], replaced)
    graph.eliminate_dead_code()
    program.graph_module.recompile()
    return True


def _static(value) -> bool:
    """Is `value` (a node's meta "val") free of symbolic sizes?"""
    return all(
        not isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool))
        and not (isinstance(v, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in v.shape))
        for v in pytree.tree_leaves(value)
    )


def _call_key(node: torch.fx.Node):
    """What makes two nodes' calls decompose alike: the op, and each argument (a tensor by its shape, strides,
    dtype and device, as decompositions branch on them: not its storage offset, an unrolled loop's step row
    differs in nothing else; anything else by value); None if an argument is neither."""
    parts = []
    for leaf in pytree.tree_leaves((node.args, node.kwargs)):
        if isinstance(leaf, torch.fx.Node):
            v = leaf.meta.get("val")
            if not isinstance(v, torch.Tensor):
                return None
            parts.append(("tensor", tuple(v.shape), v.stride(), v.dtype, str(v.device)))
        elif leaf is None or isinstance(leaf, (bool, int, float, str, torch.dtype, torch.device, torch.memory_format,
                                               torch.layout)):
            parts.append((type(leaf).__name__, repr(leaf)))
        else:
            return None
    return node.target, pytree.tree_structure((node.args, node.kwargs)), tuple(parts)


class _Calls(torch.nn.Module):
    """Each of `nodes`' calls, on its own inputs (flat, in order), all results returned flat."""

    def __init__(self, nodes: list):
        super().__init__()
        self.nodes = nodes

    def forward(self, *tensors):
        results, k = [], 0
        for node in self.nodes:
            inputs = node.all_input_nodes
            at = {n: tensors[k + i] for i, n in enumerate(inputs)}
            k += len(inputs)
            args, kwargs = pytree.tree_map_only(torch.fx.Node, at.__getitem__, (node.args, node.kwargs))
            results += pytree.tree_leaves(node.target(*args, **kwargs))
        return tuple(results)


def _decompose_calls(nodes: list) -> list | None:
    """Per node of `nodes`, the graph `run_decompositions({})` makes of its call (placeholders: the node's
    `all_input_nodes`; output: its result, or the list of its results), or None where it keeps the call whole;
    None for all if the small program cannot be exported or decomposed."""
    module = _Calls(nodes)
    inputs = tuple(n.meta["val"] for node in nodes for n in node.all_input_nodes)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.export.export(module, inputs, strict=False).run_decompositions({})
    except Exception:
        return None
    graph = program.graph_module.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    signature = program.graph_signature
    if len(placeholders) != len(inputs) or any(s.kind.name != "USER_INPUT" for s in signature.input_specs):
        return None  # a lifted constant or a parameter: not a graph of the call alone
    if any(s.kind.name != "USER_OUTPUT" for s in signature.output_specs):
        return None  # a call that writes an input (batch_norm's running stats in training: its schema does not say so)
    outputs = list(next(n for n in reversed(graph.nodes) if n.op == "output").args[0])
    smalls, k, o = [], 0, 0
    for node in nodes:
        count = len(pytree.tree_leaves(node.meta["val"]))  # results of its call
        n_inputs = len(node.all_input_nodes)
        small = _extract(graph, placeholders[k : k + n_inputs], outputs[o : o + count], node)
        if small is False:
            return None
        smalls.append(small)
        k, o = k + n_inputs, o + count
    return smalls


def _extract(graph: torch.fx.Graph, placeholders: list, outputs: list, node: torch.fx.Node):
    """The part of `graph` computing `outputs` from `placeholders` as a graph of its own; None if it is `node`'s
    call kept whole; False if it reads anything else."""
    needed, stack = set(), list(outputs)
    while stack:
        n = stack.pop()
        if n in needed or n in placeholders:
            continue
        if n.op != "call_function":
            return False
        needed.add(n)
        stack += n.all_input_nodes
    ops = [n for n in graph.nodes if n in needed]
    if ops and ops[0].target is node.target and all(n.target is operator.getitem for n in ops[1:]):
        return None
    small = torch.fx.Graph()
    mapping = {p: small.placeholder(p.name) for p in placeholders}
    for n in ops:
        mapping[n] = small.node_copy(n, mapping.__getitem__)
    result = [mapping[n] for n in outputs]
    small.output(result if isinstance(node.meta.get("val"), (list, tuple)) else result[0])
    return small


def _returns_input(small: torch.fx.Graph) -> bool:
    """Does the decomposition hand back one of its inputs itself (an alias)?"""
    output = next(n for n in reversed(small.nodes) if n.op == "output")
    return any(n.op == "placeholder" for n in output.all_input_nodes)


# The node meta a decomposition's nodes take from the node they replace (as run_decompositions keeps it).
_KEPT_META = ("stack_trace", "nn_module_stack", "source_fn_stack", "torch_fn", "from_node", "seq_nr")


def _inline(graph: torch.fx.Graph, node: torch.fx.Node, small: torch.fx.Graph, inputs: list, replaced: dict) -> None:
    """Put the nodes of `small` (`node`'s decomposition, its placeholders standing for `inputs`) in place of `node`;
    `replaced` learns what stands for `node` (and its getitems) now."""
    placeholders = [n for n in small.nodes if n.op == "placeholder"]
    mapping = dict(zip(placeholders, inputs))
    with graph.inserting_before(node):
        result = graph.graph_copy(small, mapping)
    for new in mapping.values():
        if new not in inputs:
            for key in _KEPT_META:
                if key in node.meta and key not in new.meta:
                    new.meta[key] = node.meta[key]
    if isinstance(result, torch.fx.Node):
        node.replace_all_uses_with(result)
        replaced[node] = result
    else:  # a list or tuple of tensors: its readers are getitems (`decompose_locally` checked)
        for user in list(node.users):
            user.replace_all_uses_with(result[user.args[1]])
            replaced[user] = result[user.args[1]]
            graph.erase_node(user)
    graph.erase_node(node)
