// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A launch whose kernel is a string, not a symbol (this was an internal error).

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: launch-kernel-not-a-symbol.mlir:[[# @LINE + 1]]:8: error: 'fusion.launch' op requires a symbol attribute 'kernel'
  %0 = "fusion.launch"(%arg0) {kernel = "k"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
