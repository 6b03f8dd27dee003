# RUN: %PYTHON %s | filecheck %s

# Embedding: another compiler's Context (here a bare one with the torch
# dialect) takes the fusion dialect - loading it twice is harmless - and runs
# our passes mixed with upstream ones from a list of names.

from torch_mlir import ir
from torch_mlir.dialects import torch as torch_dialect

from mlirfuse.dialect import load_fusion_dialect
from mlirfuse.passes.pipeline import build_pass_manager

ctx = ir.Context()
torch_dialect.register_dialect(ctx)
load_fusion_dialect(ctx)
load_fusion_dialect(ctx)

SOURCE = """
func.func @embedded(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %1 : !torch.vtensor<[8],f32>
}
"""

with ctx, ir.Location.unknown():
    module = ir.Module.parse(SOURCE)
    pm = build_pass_manager(["fusion-fuse-elementwise", "fusion-canonicalize", "cse", "fusion-outline"], ctx)
    pm.run(module.operation)
    print(module)

# CHECK:       "fusion.kernel"() ({
# CHECK:         torch.aten.exp
# CHECK-NEXT:    torch.aten.neg
# CHECK:       }) {kind = "pointwise", sym_name = "fused_exp_neg_0"} : () -> ()
# CHECK-LABEL: func.func @embedded
# CHECK-NEXT:    %[[L:.+]] = "fusion.launch"(%arg0) {kernel = @fused_exp_neg_0}
# CHECK-NEXT:    return %[[L]]
