// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group of kind "pointwise" holding a scan (a pointwise kernel would compute it lane by lane: a wrong answer).

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  // CHECK: kind-pointwise-with-scan.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op of kind "pointwise" holds a scan 'torch.aten.cumsum'
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[4,8],f32>):
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %1 = torch.aten.cumsum %a, %int1, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[4,8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}
