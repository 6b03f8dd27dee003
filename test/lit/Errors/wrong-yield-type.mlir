// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group yields f32 but declares an f16 result.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f16> {
  // CHECK: wrong-yield-type.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op yields type !torch.vtensor<[8],f32> at #0 but result #0 has type !torch.vtensor<[8],f16>
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.relu %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f16>
  return %0 : !torch.vtensor<[8],f16>
}
