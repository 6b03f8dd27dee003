// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A type of a dialect nobody registered.

// CHECK-NOT: Traceback
// CHECK: unknown-dialect-type.mlir:[[# @LINE + 1]]:1: error: attribute 'function_type' holds '!bogus.type' of no registered dialect
func.func @f(%arg0: !bogus.type) -> !bogus.type {
  return %arg0 : !bogus.type
}
