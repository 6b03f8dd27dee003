// RUN: not mlirfuse-opt %t.does-not-exist.mlir 2>&1 | filecheck %s

// A missing input file is reported by name, with exit code 1.

// CHECK-NOT: Traceback
// CHECK:     mlirfuse-opt: error: cannot read '{{.*}}does-not-exist.mlir': No such file or directory
// CHECK-NOT: Traceback
