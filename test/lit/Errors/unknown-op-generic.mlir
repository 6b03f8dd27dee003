// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// An op the torch dialect does not have (generic form).

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: unknown-op-generic.mlir:[[# @LINE + 1]]:8: error: unregistered operation 'torch.aten.bogus' found in dialect ('torch')
  %0 = "torch.aten.bogus"(%arg0) : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
