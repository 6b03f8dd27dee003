// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A unary op given two operands (generic form).

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: wrong-operand-count-generic.mlir:[[# @LINE + 1]]:8: error: 'torch.aten.exp' op requires a single operand
  %0 = "torch.aten.exp"(%arg0, %arg0) : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
