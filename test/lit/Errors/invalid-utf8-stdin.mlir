// RUN: %unescape-bytes %s > %t
// RUN: not mlirfuse-opt --mlirfuse-pipeline < %t 2>&1 | filecheck %s
// RUN: not mlirfuse-opt - --mlirfuse-pipeline --emit-triton < %t 2>&1 | filecheck %s

// Standard input is read as bytes and checked the same way.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: <stdin>:[[# @LINE + 1]]:3: error: input is not valid UTF-8: byte 0xed (invalid continuation byte)
  @xed@@xa0@@x80@return %arg0 : !torch.vtensor<[8],f32>
}
