// RUN: %unescape-bytes %s > %t
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %t --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// Even in a comment, Latin-1 text is not UTF-8.

// CHECK-NOT: Traceback
// CHECK: {{.*}}.tmp:[[# @LINE + 1]]:7: error: input is not valid UTF-8: byte 0xe9 (invalid continuation byte)
// caf@xe9@ au lait
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  return %arg0 : !torch.vtensor<[8],f32>
}
