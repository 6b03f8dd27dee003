// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// The file ends in the middle of an op's type list.

// CHECK-NOT: Traceback
// CHECK: truncated-op.mlir:[[# @LINE + 2]]:28: error: expected non-function type
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 :