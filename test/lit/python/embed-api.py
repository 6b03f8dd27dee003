# RUN: %PYTHON %s | filecheck %s

# mlirfuse.embed, as another compiler uses it: its own Context (torch-mlir's
# dialect loaded first, the fusion dialect loaded twice), its own PassManager
# with one of torch-mlir's passes before ours and one after, on a module of
# several functions: public and private, value and non-value semantics.

from torch_mlir import ir, passmanager
from torch_mlir.dialects import torch as torch_d

import mlirfuse
from mlirfuse import embed

ctx = ir.Context()
torch_d.register_dialect(ctx)
embed.load_dialect(ctx)
embed.load_dialect(ctx)  # harmless

SOURCE = """
func.func @public_value(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %1 : !torch.vtensor<[8],f32>
}
func.func private @private_value(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %1 : !torch.vtensor<[8],f32>
}
func.func @non_value(%arg0: !torch.tensor<[8],f32>) -> !torch.tensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.tensor<[8],f32> -> !torch.tensor<[8],f32>
  %1 = torch.aten.neg %0 : !torch.tensor<[8],f32> -> !torch.tensor<[8],f32>
  return %1 : !torch.tensor<[8],f32>
}
"""

with ctx:
    module = ir.Module.parse(SOURCE)
    pm = passmanager.PassManager.parse("builtin.module(func.func(torch-maximize-value-semantics))")
    embed.add_pass(pm, "fusion-fuse-vertical", max_args=8)
    pm.add("func.func(torch-maximize-value-semantics)")
    embed.add_passes(pm, ["fusion-canonicalize", "fusion-outline"])
    pm.run(module.operation)
    print(module)

# Both value-semantic functions launch one shared kernel; the non-value one is left as it was.
# CHECK:       "fusion.kernel"() ({
# CHECK:       }) {kind = "pointwise", sym_name = "fused_exp_neg_0"}
# CHECK-NOT:   "fusion.kernel"
# CHECK-LABEL: func.func @public_value
# CHECK-NEXT:    "fusion.launch"(%arg0) {kernel = @fused_exp_neg_0}
# CHECK-LABEL: func.func private @private_value
# CHECK-NEXT:    "fusion.launch"(%arg0) {kernel = @fused_exp_neg_0}
# CHECK-LABEL: func.func @non_value
# CHECK-NEXT:    torch.aten.exp %arg0 : !torch.tensor<[8],f32>
# CHECK-NEXT:    torch.aten.neg

# The kernel lowers to Triton on its own.
print(sorted(embed.triton_sources(module)))
kernel = next(op for op in module.body.operations if op.operation.name == "fusion.kernel")
print(next(line for line in embed.lower_kernel(kernel).source.splitlines() if line.startswith("def ")))
# CHECK:      ['fused_exp_neg_0']
# CHECK-NEXT: def fused_exp_neg_0(

# The whole pipeline with options, in pipeline syntax; explain=true leaves the reasons in the IR.
SIBLINGS = """
func.func @f(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.exp %arg0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.logcumsumexp %1, %int1 : !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  %3 = torch.aten.sum.dim_IntList %2, %0, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  return %3 : !torch.vtensor<[4,1],f32>
}
"""
with ctx:
    module = ir.Module.parse(SIBLINGS)
    pm = passmanager.PassManager("builtin.module")
    embed.add_passes(pm, "builtin.module(mlirfuse-pipeline{max-args=64 explain=true}, cse)")
    pm.run(module.operation)
for op, reasons in embed.explanations(module):
    print(op.name, reasons)
# CHECK: fusion.launch ['consumer torch.aten.logcumsumexp: unsupported op']
# CHECK: fusion.launch ['producer torch.aten.logcumsumexp: unsupported op']

# The analyses, asked by the embedding compiler.
with ctx:
    module = ir.Module.parse(SOURCE)
    facts = embed.analyses(module)
    exp, neg, _ = list(module.body.operations[0].regions[0].blocks[0].operations)
    print("reaches", facts.dependence.reaches(exp, neg), facts.dependence.reaches(neg, exp))
    print("shape", facts.shapes.shape(exp.results[0]), facts.shapes.dtype(exp.results[0]))
    print("alias", facts.alias.may_alias(exp.results[0], neg.results[0]), facts.alias.is_mutated(exp.results[0]))
# CHECK: reaches True False
# CHECK: shape (8,) float32
# CHECK: alias False False

# Options spelled wrong: the error names the valid ones and, in pipeline text, the column.
with ctx:
    try:
        embed.add_pass(passmanager.PassManager("builtin.module"), "fusion-fuse-vertical", max_arg=4)
    except mlirfuse.PipelineError as e:
        print(e)
    try:
        embed.add_passes(passmanager.PassManager("builtin.module"), "cse, mlirfuse-pipeline{max-args=64 explian=true}")
    except mlirfuse.PipelineError as e:
        print(e.located())
# CHECK:      pass 'fusion-fuse-vertical' has no option 'max-arg' (options: max-args, max-group-size, recompute-analyses); did you mean 'max-args'?
# CHECK-NEXT: <pass-pipeline>:1:36: error: pipeline 'mlirfuse-pipeline' has no option 'explian' ({{.*}}explain{{.*}}); did you mean 'explain'?
# CHECK-NEXT: cse, mlirfuse-pipeline{max-args=64 explian=true}
# CHECK-NEXT: {{^                                   \^$}}

# A refused element leaves the caller's PassManager as it was: nothing of ours was added before it.
with ctx:
    pm = passmanager.PassManager.parse("builtin.module(cse)")
    try:
        embed.add_passes(pm, "fusion-outline, bogus-pass")
    except mlirfuse.PipelineError as e:
        print(e.message.split(":")[0])
    print(pm)
# CHECK:      unknown pass or malformed pipeline element 'bogus-pass'
# CHECK-NEXT: builtin.module(cse)
