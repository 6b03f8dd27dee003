// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// Dimensions that each fit in int64 but whose product does not.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[4294967296,4294967296,4],f32>) -> !torch.vtensor<[4294967296,4294967296,4],f32> {
  // CHECK: huge-numel.mlir:[[# @LINE + 1]]:8: error: type !torch.vtensor<[4294967296,4294967296,4],f32> has more elements than int64 can count
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[4294967296,4294967296,4],f32> -> !torch.vtensor<[4294967296,4294967296,4],f32>
  return %0 : !torch.vtensor<[4294967296,4294967296,4],f32>
}
