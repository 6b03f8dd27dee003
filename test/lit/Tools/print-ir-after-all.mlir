// RUN: mlirfuse-opt %s --mlirfuse-pipeline --mlir-print-ir-after-all -o /dev/null 2>&1 | filecheck %s

// The pipeline is a straight line of named passes: the IR is dumped to
// stderr after each, under its name, showing what that pass did.

// CHECK:       IR Dump After fusion-fuse-vertical
// CHECK:         "fusion.group"
// CHECK-NOT:     "fusion.kernel"
// CHECK:       IR Dump After fusion-canonicalize
// CHECK:         "fusion.group"
// CHECK-NOT:     "fusion.kernel"
// CHECK:       IR Dump After fusion-outline
// CHECK:         "fusion.kernel"
// CHECK:       }) {kind = "pointwise", sym_name = "fused_exp_neg_0"}
// CHECK:         "fusion.launch"
// CHECK-NOT:     "fusion.group"

func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %1 : !torch.vtensor<[8],f32>
}
