// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// An integer constant that does not fit in int64.

// CHECK-NOT: Traceback
func.func @f() -> !torch.int {
  // CHECK: huge-int-literal.mlir:[[# @LINE + 1]]:27: error: custom op 'torch.constant.int' integer value too large
  %0 = torch.constant.int 999999999999999999999999999999
  return %0 : !torch.int
}
