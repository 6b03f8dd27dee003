"""nn.Module + example inputs -> `torch` dialect, with weights left out of the IR.

`torch.export` traces the module; `run_decompositions({})` makes the graph
functional without decomposing composite ops (torch-mlir's default table
costs seconds on big graphs and breaks some attention exports; what we need
decomposed we decompose in MLIR). The FX importer then imports the graph
*statelessly*: every placeholder - parameter, buffer, lifted constant, user
input - becomes a function argument. `bindings` says what each argument is
bound to at call time: the module's live parameters and buffers are looked
up on every call, so a weight update is seen by the next call and a 1 GB
model does not make 1 GB of IR. Non-persistent buffers (rotary `inv_freq`,
`position_ids`) are registered buffers of the module and bind the same way.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch
from torch.export import ExportedProgram
from torch.export._tree_utils import reorder_kwargs
from torch.export.graph_signature import InputKind, OutputKind
from torch.utils import _pytree as pytree

from mlirfuse.dialect import make_context
from mlirfuse.errors import UnsupportedModelError
from mlirfuse.ir import ir


@dataclass
class ImportedProgram:
    """A torch-dialect module and how to feed and read its `forward` function."""

    module: ir.Module
    context: ir.Context
    # Per function argument: ("param", name) | ("buffer", name) | ("constant", tensor) | ("input", index)
    bindings: list[tuple[str, object]]
    # Per function result: ("output", index) | ("buffer", name) | ("input", index) (written back)
    results: list[tuple[str, object]]
    out_spec: object
    # How `(args, kwargs)` flatten: the order of keyword arguments among the user inputs.
    in_spec: object = None
    # Per flat user input: (shape, dtype, device) for tensors, the value itself otherwise.
    input_meta: list = field(default_factory=list)


def export(model: torch.nn.Module, example_inputs: tuple, example_kwargs: dict | None = None) -> ExportedProgram:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.export.export(model, tuple(example_inputs), kwargs=example_kwargs or None, strict=False)
            program = program.run_decompositions({})
    except Exception as e:
        raise UnsupportedModelError(f"torch.export could not trace {type(model).__name__}: {e}") from e
    # Export checks dtypes after casts with _assert_tensor_metadata; the IR's
    # types already say the same, and the op computes nothing.
    graph = program.graph_module.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is torch.ops.aten._assert_tensor_metadata.default:
            graph.erase_node(node)
    return program


def import_program(program: ExportedProgram, func_name: str = "forward") -> ImportedProgram:
    """Import an exported program's graph; placeholders become arguments."""
    from torch_mlir.extras.fx_importer import FxImporter

    context = make_context()
    importer = FxImporter(context=context)
    try:
        importer.import_stateless_graph(program.graph_module.graph, func_name=func_name)
    except Exception as e:
        raise UnsupportedModelError(f"torch-mlir could not import the exported graph: {e}") from e

    bindings = []
    user_index = 0
    for spec in program.graph_signature.input_specs:
        if spec.kind == InputKind.PARAMETER:
            bindings.append(("param", spec.target))
        elif spec.kind == InputKind.BUFFER:
            bindings.append(("buffer", spec.target))
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            bindings.append(("constant", program.constants[spec.target]))
        elif spec.kind == InputKind.USER_INPUT:
            bindings.append(("input", user_index))
            user_index += 1
        else:
            raise UnsupportedModelError(f"exported input '{spec.arg.name}' of kind {spec.kind.name} is not supported")

    user_inputs = [spec.arg.name for spec in program.graph_signature.input_specs if spec.kind == InputKind.USER_INPUT]
    results = []
    output_index = 0
    for spec in program.graph_signature.output_specs:
        if spec.kind == OutputKind.USER_OUTPUT:
            results.append(("output", output_index))
            output_index += 1
        elif spec.kind == OutputKind.BUFFER_MUTATION:
            results.append(("buffer", spec.target))
        elif spec.kind == OutputKind.USER_INPUT_MUTATION:
            results.append(("input", user_inputs.index(spec.target)))
        else:
            raise UnsupportedModelError(f"exported output of kind {spec.kind.name} is not supported")
    return ImportedProgram(
        importer.module, context, bindings, results, program.call_spec.out_spec, program.call_spec.in_spec
    )


def flatten_inputs(args: tuple, kwargs: dict, in_spec) -> list:
    """The user inputs in the exported function's order: keyword arguments in the example's order, not the caller's."""
    if in_spec is not None:
        kwargs = reorder_kwargs(kwargs, in_spec)
    return pytree.tree_flatten((tuple(args), kwargs))[0]


def import_module(model: torch.nn.Module, example_inputs: tuple, example_kwargs: dict | None = None) -> ImportedProgram:
    """Export `model` on `example_inputs` (and keyword arguments) and import it into the torch dialect."""
    if not isinstance(model, torch.nn.Module):
        raise UnsupportedModelError(f"expected a torch.nn.Module, got {type(model).__name__}")
    imported = import_program(export(model, example_inputs, example_kwargs))
    flat = flatten_inputs(example_inputs, example_kwargs or {}, imported.in_spec)
    imported.input_meta = [
        (tuple(x.shape), x.dtype, x.device) if isinstance(x, torch.Tensor) else x for x in flat
    ]
    return imported
