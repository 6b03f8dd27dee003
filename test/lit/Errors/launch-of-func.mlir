// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A launch of a symbol that is a function, not a kernel.

// CHECK-NOT: Traceback
func.func @g(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  return %arg0 : !torch.vtensor<[8],f32>
}
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: launch-of-func.mlir:[[# @LINE + 1]]:8: error: 'fusion.launch' op refers to unknown kernel @g
  %0 = "fusion.launch"(%arg0) {kernel = @g} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
