// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A tensor dimension that does not fit in int64.

// CHECK-NOT: Traceback
// CHECK: huge-dim.mlir:[[# @LINE + 1]]:37: error: integer value too large
func.func @f(%arg0: !torch.vtensor<[99999999999999999999999],f32>) {
  return
}
