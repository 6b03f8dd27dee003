// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// An operand used with a type other than its own.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: wrong-operand-type.mlir:[[# @LINE + 1]]:23: error: use of value '%arg0' expects different type than prior uses
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
