// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A fusion.yield outside any group or kernel.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: yield-outside-group.mlir:[[# @LINE + 1]]:3: error: 'fusion.yield' op expects parent op 'fusion.group' or 'fusion.kernel'
  "fusion.yield"(%arg0) : (!torch.vtensor<[8],f32>) -> ()
  return %arg0 : !torch.vtensor<[8],f32>
}
