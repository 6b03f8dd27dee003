// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// An attribute of a dialect nobody registered.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: unknown-dialect-attr.mlir:[[# @LINE + 1]]:8: error: attribute 'x' holds '#bogus.attr<"y">' of no registered dialect
  %0 = torch.aten.exp %arg0 {x = #bogus.attr<"y">} : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
