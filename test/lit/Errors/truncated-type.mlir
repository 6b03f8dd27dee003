// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// The file ends inside a tensor type.

// CHECK-NOT: Traceback
// CHECK: truncated-type.mlir:[[# @LINE + 1]]:35: error: unbalanced '<' character in pretty dialect name
func.func @f(%arg0: !torch.vtensor<[8],f3