// RUN: %PYTHON -c "print('func.func @f(%a: ' + 'tuple<' * 10000 + 'i32' + '>' * 10000 + ') { return }')" > %t
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// Types nested 10000 deep.

// CHECK-NOT: Traceback
// CHECK: {{.*}}.tmp:1:{{[0-9]+}}: error: input nests deeper than 256 levels
