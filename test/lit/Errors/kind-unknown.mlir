// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A kind that does not exist.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: kind-unknown.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op has unknown kind "elementwise"; expected one of pointwise, reduction, persistent-reduction, concat, extern
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "elementwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
