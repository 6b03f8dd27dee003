// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// An op the torch dialect does not have (custom form).

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: unknown-op.mlir:[[# @LINE + 1]]:8: error: custom op 'torch.aten.bogus' is unknown
  %0 = torch.aten.bogus %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
