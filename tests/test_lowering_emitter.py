"""The lowering's shape: one emitter, depending only on the IR and the op rule tables.

- every module in `mlirfuse/lowering/` imports at module level only from the
  allowed layers, with no function-local import and no cycle;
- the per-op emitters work on any tile: a template (GEMM, attention) hosts an
  epilogue by handing `emit_op` its tile expressions.
"""

from __future__ import annotations

import ast
from pathlib import Path

from mlirfuse.dialect import make_context
from mlirfuse.ir import block_ops, ir
from mlirfuse.lowering.emitter import KernelEmitter, Value

LOWERING = Path(__file__).resolve().parents[1] / "mlirfuse" / "lowering"
# What the lowering may depend on: the IR, the error base class, the op rule tables, itself.
ALLOWED = ("mlirfuse.ir", "mlirfuse.errors", "mlirfuse.dialect", "mlirfuse.ops.dtypes", "mlirfuse.ops.elementwise", "mlirfuse.ops.reductions", "mlirfuse.ops.attention",
           "mlirfuse.ops.scans", "mlirfuse.ops.matmul", "mlirfuse.ops.conv", "mlirfuse.ops.indexing", "mlirfuse.ops.pooling", "mlirfuse.ops.views", "mlirfuse.lowering")


def _imports(path: Path) -> tuple[list[str], list[str]]:
    """(module-level mlirfuse imports, imports nested in a function or class) of one file."""
    tree = ast.parse(path.read_text())
    top = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mlirfuse"):
            top.append(node.module)
        elif isinstance(node, ast.Import):
            top += [a.name for a in node.names if a.name.startswith("mlirfuse")]
    nested = [
        ast.unparse(inner)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for inner in ast.walk(node)
        if isinstance(inner, (ast.Import, ast.ImportFrom))
    ]
    return top, nested


def test_lowering_depends_only_on_ir_and_rule_tables():
    graph = {}
    for path in sorted(LOWERING.glob("*.py")):
        top, nested = _imports(path)
        assert not nested, f"{path.name}: function-local imports {nested}"
        bad = [m for m in top if not any(m == a or m.startswith(a + ".") for a in ALLOWED)]
        assert not bad, f"{path.name} imports {bad}; the lowering depends on the IR and the op rule tables only"
        graph[f"mlirfuse.lowering.{path.stem}"] = {m for m in top if m.startswith("mlirfuse.lowering.")}

    def visit(module, stack):
        assert module not in stack, f"import cycle: {' -> '.join(stack + [module])}"
        for dep in graph.get(module, ()):
            visit(dep, stack + [module])

    for module in graph:
        visit(module, [])


EPILOGUE = """
func.func @epilogue(%acc: !torch.vtensor<[16,16],f32>, %bias: !torch.vtensor<[16],f32>) -> !torch.vtensor<[16,16],bf16> {
  %int1 = torch.constant.int 1
  %int15 = torch.constant.int 15
  %none = torch.constant.str "none"
  %false = torch.constant.bool false
  %0 = torch.aten.add.Tensor %acc, %bias, %int1 : !torch.vtensor<[16,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[16,16],f32>
  %1 = torch.aten.gelu %0, %none : !torch.vtensor<[16,16],f32>, !torch.str -> !torch.vtensor<[16,16],f32>
  %2 = torch.prims.convert_element_type %1, %int15 : !torch.vtensor<[16,16],f32>, !torch.int -> !torch.vtensor<[16,16],bf16>
  return %2 : !torch.vtensor<[16,16],bf16>
}
"""


def test_template_hosts_an_epilogue_through_emit_op():
    # What a GEMM template does with its epilogue: the accumulator tile and a
    # loaded bias tile stand for the ops' tensor operands; one line per op follows.
    with make_context():
        module = ir.Module.parse(EPILOGUE)
        func = module.body.operations[0]
        block = func.regions[0].blocks[0]
        em = KernelEmitter("matmul_epilogue", block)
        tiles = {block.arguments[0]: Value("acc", "float32"), block.arguments[1]: Value("bias[None, :]", "float32")}
        ops, _ = block_ops(block)
        for op in ops:
            if op.operation.name.startswith("torch.constant."):
                em.emit_body_op(op)
                continue
            tiles[op.results[0]] = em.emit_op(op, tiles.get)
        assert em.body == [
            "tmp0 = acc + bias[None, :]  # torch.aten.add.Tensor",
            "tmp1 = 0.5 * tmp0 * (1 + tl.erf(tmp0 * 0.7071067811865476))  # torch.aten.gelu",
            "tmp2 = round_to_bf16(tmp1).to(tl.float32)  # torch.prims.convert_element_type",
        ]
