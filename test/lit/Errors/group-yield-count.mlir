// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group that yields two values but has one result.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: group-yield-count.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op yields 2 values but has 1 results
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    "fusion.yield"(%a, %a) : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
