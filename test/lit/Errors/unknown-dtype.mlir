// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A tensor type with an element type that does not exist.

// CHECK-NOT: Traceback
// CHECK: unknown-dtype.mlir:[[# @LINE + 1]]:40: error: expected non-function type
func.func @f(%arg0: !torch.vtensor<[8],f99>) {
  return
}
