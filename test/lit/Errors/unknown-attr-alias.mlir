// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// An attribute alias that was never defined.

// CHECK-NOT: Traceback
// CHECK: unknown-attr-alias.mlir:[[# @LINE + 1]]:98: error: undefined symbol alias id 'nonsense'
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> attributes {x = #nonsense} {
  return %arg0 : !torch.vtensor<[8],f32>
}
