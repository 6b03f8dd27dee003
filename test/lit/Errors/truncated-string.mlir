// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// The file ends inside a string attribute.

// CHECK-NOT: Traceback
// CHECK: truncated-string.mlir:[[# @LINE + 1]]:39: error: expected '"' in string literal
func.func @f() attributes {s = "pointw