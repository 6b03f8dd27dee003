// RUN: %PYTHON -c "" > %t
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// An empty input holds nothing to compile.

// CHECK-NOT: Traceback
// CHECK: {{.*}}.tmp:1:1: error: input holds no operations (it is empty or only comments)
