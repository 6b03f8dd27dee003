// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group body that reads a value from outside it.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: group-not-isolated.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op body uses a value defined outside it; groups are isolated from above
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.mul.Tensor %a, %arg0 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
