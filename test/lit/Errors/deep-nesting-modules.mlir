// RUN: %PYTHON -c "print('module {' * 10000 + '}' * 10000)" > %t
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// Modules nested 10000 deep. MLIR's parser recurses once per level and
// overflows the C stack (SIGSEGV) a few thousand levels down; nesting past
// 256 levels is reported where it happens instead.

// CHECK-NOT: Traceback
// CHECK: {{.*}}.tmp:1:2056: error: input nests deeper than 256 levels
