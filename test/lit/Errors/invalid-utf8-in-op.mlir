// RUN: %unescape-bytes %s > %t
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A byte that is not UTF-8 where an operand should be; it is
// reported at its line and byte column, not as a UnicodeDecodeError.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: {{.*}}.tmp:[[# @LINE + 1]]:10: error: input is not valid UTF-8: byte 0xff (invalid start byte)
  return @xff@ %arg0 : !torch.vtensor<[8],f32>
}
