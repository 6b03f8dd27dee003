// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A function returns a type other than its signature's.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f16> {
  // CHECK: wrong-result-type.mlir:[[# @LINE + 1]]:3: error: type of return operand 0 ('!torch.vtensor<[8],f32>') doesn't match function result type
  return %arg0 : !torch.vtensor<[8],f32>
}
