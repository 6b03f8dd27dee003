// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group with one operand whose body takes two block arguments.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: group-block-arg-count.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op has 1 operands but its body has 2 block arguments
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>, %b: !torch.vtensor<[8],f32>):
    "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
