// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// This file is only comments: nothing to compile.

// CHECK-NOT: Traceback
// CHECK: only-comments.mlir:1:1: error: input holds no operations (it is empty or only comments)
