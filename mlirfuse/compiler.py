"""`mlirfuse.compile`: nn.Module -> a callable running fused Triton kernels.

    cm = mlirfuse.compile(model, example_inputs)
    cm(*inputs)      # what model(*inputs) returns
    cm = mlirfuse.compile(model, (ids,), {"attention_mask": mask})
    cm(ids, attention_mask=mask)
    cm.stats         # aten_ops, groups, kernels, launches, unfused_ops, unfused_views, operand_views
    cm.mlir          # the final IR
    cm.kernels       # kernel name -> TritonKernel (source included)

Inference only: calls run under `torch.no_grad()`.
"""

from __future__ import annotations

import torch
from torch.utils import _pytree as pytree

from mlirfuse.errors import CompilationError, InputMismatchError
from mlirfuse.frontend.importer import ImportedProgram, flatten_inputs, import_module
from mlirfuse.ir import ir
from mlirfuse.passes import default_pipeline
from mlirfuse.passes.pipeline import build_pass_manager
from mlirfuse.runtime.program import Program


def count_aten_ops(module: ir.Module) -> int:
    """torch ops that compute something: constants and list construction excluded."""
    count = 0

    def visit(op):
        nonlocal count
        if op.name.startswith(("torch.aten.", "torch.prims.")) or op.name == "torch.operator":
            count += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return count


def run_pipeline(module: ir.Module, context: ir.Context, pipeline=None, explain: bool = False) -> None:
    pm = build_pass_manager(pipeline or default_pipeline(), context, explain=explain)
    try:
        pm.run(module.operation)
    except ir.MLIRError as e:
        raise CompilationError(f"the fusion pipeline failed: {e}") from None


class CompiledModule:
    def __init__(self, model: torch.nn.Module, imported: ImportedProgram, pipeline=None, explain: bool = False):
        self.model = model
        self.imported = imported
        aten_ops = count_aten_ops(imported.module)
        run_pipeline(imported.module, imported.context, pipeline, explain)
        self.mlir = str(imported.module)
        func = next(op for op in imported.module.body.operations if op.operation.name == "func.func")
        self.program = Program(func, imported.module)
        self.kernels = self.program.kernels
        steps = self.program.steps
        launches = sum(1 for s in steps if s.kind == "launch")
        self.stats = {
            "aten_ops": aten_ops,
            # Outlining turns every fusion.group into one fusion.launch: the two counts agree by construction.
            "groups": launches,
            "kernels": len(self.kernels),
            "launches": launches,
            "unfused_ops": sum(1 for s in steps if s.kind == "aten" and not s.operand_view),
            # Of those, views (view, transpose, split, ...): they launch no kernel.
            "unfused_views": sum(1 for s in steps if s.kind == "aten" and s.view and not s.operand_view),
            # Views folded into an extern call's operands (fusion-extern-operands), not counted above.
            "operand_views": sum(1 for s in steps if s.operand_view),
        }

    def explain(self) -> dict[str, list[str]]:
        """Kernel name -> why its neighbours were not fused (compile with explain=True)."""
        reasons: dict[str, list[str]] = {}

        def visit(op):
            if op.name == "fusion.launch" and "fusion.explain" in op.attributes:
                name = ir.FlatSymbolRefAttr(op.attributes["kernel"]).value
                items = ir.ArrayAttr(op.attributes["fusion.explain"])
                reasons.setdefault(name, []).extend(ir.StringAttr(a).value for a in items)
            return ir.WalkResult.ADVANCE

        self.imported.module.operation.walk(visit)
        return reasons

    def _check_inputs(self, flat: list) -> None:
        meta = self.imported.input_meta
        if len(flat) != len(meta):
            raise InputMismatchError(f"expected {len(meta)} inputs (as in the example), got {len(flat)}")
        for i, (x, m) in enumerate(zip(flat, meta)):
            if isinstance(m, tuple):
                if not isinstance(x, torch.Tensor):
                    raise InputMismatchError(f"input {i}: expected a tensor, got {type(x).__name__}")
                got = (tuple(x.shape), x.dtype, x.device)
                if got != m:
                    raise InputMismatchError(
                        f"input {i}: compiled for shape {list(m[0])} {m[1]} on {m[2]}, "
                        f"got shape {list(got[0])} {got[1]} on {got[2]}; recompile for new shapes"
                    )
            elif x != m:
                raise InputMismatchError(f"input {i}: compiled for the value {m!r}, got {x!r}")

    def __call__(self, *inputs, **kwargs):
        try:
            flat = flatten_inputs(inputs, kwargs, self.imported.in_spec)
        except ValueError:
            raise InputMismatchError(f"keyword arguments {sorted(kwargs)} differ from the example's") from None
        self._check_inputs(flat)
        arguments = []
        for kind, what in self.imported.bindings:
            if kind == "param":
                arguments.append(self.model.get_parameter(what))
            elif kind == "buffer":
                arguments.append(self.model.get_buffer(what))
            elif kind == "constant":
                arguments.append(what)
            else:
                arguments.append(flat[what])
        with torch.no_grad():
            results = self.program.run(arguments)
            outputs = []
            for (kind, what), value in zip(self.imported.results, results):
                if kind == "output":
                    outputs.append(value)
                elif kind == "buffer":
                    self.model.get_buffer(what).copy_(value)
                else:
                    flat[what].copy_(value)
        return pytree.tree_unflatten(outputs, self.imported.out_spec)


MATMUL_MODES = ("triton", "aten")


def compile(
    model: torch.nn.Module,
    example_inputs,
    example_kwargs: dict | None = None,
    *,
    pipeline=None,
    explain: bool = False,
    matmul: str = "triton",
) -> CompiledModule:
    """Compile `model` for inputs shaped like `example_inputs` (a tuple) and `example_kwargs`.

    `pipeline`: a pass pipeline string or list of pass names (default: the
    mlirfuse pipeline). `explain`: record on each launch which neighbours
    were not fused and why (`cm.explain()`). `matmul`: "triton" (default)
    makes matmuls Triton GEMMs with their prologue and epilogue
    (fusion-fuse-matmul); "aten" leaves them ATen calls.
    """
    if matmul not in MATMUL_MODES:
        raise ValueError(f"matmul must be one of {', '.join(map(repr, MATMUL_MODES))}, got {matmul!r}")
    if matmul == "aten":
        if pipeline is not None:
            raise ValueError("matmul='aten' selects the default pipeline without fusion-fuse-matmul; give no pipeline")
        pipeline = [p for p in default_pipeline() if p != "fusion-fuse-matmul"]
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    return CompiledModule(model, import_module(model, tuple(example_inputs), example_kwargs), pipeline, explain)
