// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// An op of a dialect nobody registered. The context must accept the
// unregistered fusion namespace, but no other (without
// --allow-unregistered-dialect).

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: unknown-dialect-op.mlir:[[# @LINE + 1]]:8: error: operation 'bogus.op' belongs to no registered dialect
  %0 = "bogus.op"(%arg0) : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
