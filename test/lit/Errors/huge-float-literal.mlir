// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A float constant whose exponent is out of range.

// CHECK-NOT: Traceback
func.func @f() -> !torch.float {
  // CHECK: huge-float-literal.mlir:[[# @LINE + 1]]:29: error: unexpected decimal integer literal for a floating point value
  %0 = torch.constant.float 1e99999
  return %0 : !torch.float
}
