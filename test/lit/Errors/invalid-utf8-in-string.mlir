// RUN: %unescape-bytes %s > %t
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// An overlong encoding (0xc0 0x80 for NUL) inside a string attribute.

// CHECK-NOT: Traceback
// CHECK: {{.*}}.tmp:[[# @LINE + 1]]:33: error: input is not valid UTF-8: byte 0xc0 (invalid start byte)
func.func @f() attributes {s = "@xc0@@x80@"} {
  return
}
