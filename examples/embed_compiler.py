"""A small outside compiler that embeds mlirfuse: torch-mlir's passes, then ours, then its own.

    python examples/embed_compiler.py input.mlir

It owns the Context and the PassManager, as any MLIR-based compiler would,
and mlirfuse adds its passes to them (`mlirfuse.embed`):

1. torch-mlir's own passes make the torch IR value-semantic: in-place and
   `!torch.tensor` ops become `!torch.vtensor` ops (torch-reduce-op-variants,
   torch-maximize-value-semantics), then torch-mlir's canonicalizations;
2. the mlirfuse pipeline, options in `--pass-pipeline` syntax, fuses,
   deduplicates and outlines `fusion.kernel`s;
3. torch-mlir's passes run again, on IR holding fusion ops;
4. a pass of the compiler's own (a Python callable) records how many
   kernels each function launches.

It prints the IR, then each kernel's Triton source.
test/lit/Examples/embed-compiler.mlir runs it and FileChecks the output.
"""

from __future__ import annotations

import sys

from torch_mlir import ir, passmanager
from torch_mlir.dialects import torch as torch_d

from mlirfuse import embed

# torch-mlir's passes, by their registered names (torch_mlir's own pass registry).
TORCH_MLIR_BEFORE = "builtin.module(func.func(torch-reduce-op-variants, torch-maximize-value-semantics), canonicalize)"
TORCH_MLIR_AFTER = "func.func(torch-maximize-value-semantics)"


def count_launches(module: ir.Operation, pass_) -> None:
    """mycompiler-count-launches: `mycompiler.launches = N` on each function (N: its fusion.launch ops)."""
    for func in module.regions[0].blocks[0].operations:
        if func.operation.name != "func.func":
            continue
        launches = []

        def visit(op):
            if op.name == "fusion.launch":
                launches.append(op)
            return ir.WalkResult.ADVANCE

        func.operation.walk(visit)
        func.attributes["mycompiler.launches"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(launches))


def compile_file(path: str) -> str:
    context = ir.Context()
    torch_d.register_dialect(context)  # the compiler's own context and dialects
    embed.load_dialect(context)
    with context:
        with open(path) as f:
            module = ir.Module.parse(f.read())
        pm = passmanager.PassManager.parse(TORCH_MLIR_BEFORE)
        embed.add_passes(pm, "mlirfuse-pipeline{max-args=64 explain=true}")
        pm.add(TORCH_MLIR_AFTER)
        pm.add(count_launches, name="mycompiler-count-launches", argument="mycompiler-count-launches")
        pm.run(module.operation)
    lines = [str(module)]
    for name, source in embed.triton_sources(module).items():
        lines += [f"# ----- Triton kernel {name}", source]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} input.mlir")
    print(compile_file(sys.argv[1]))
