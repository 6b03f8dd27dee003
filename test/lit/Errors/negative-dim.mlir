// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A negative tensor dimension other than -1 (unknown).

// CHECK-NOT: Traceback
// CHECK: negative-dim.mlir:[[# @LINE + 1]]:35: error: invalid size -5 for !torch.tensor type
func.func @f(%arg0: !torch.vtensor<[-5],f32>) {
  return
}
