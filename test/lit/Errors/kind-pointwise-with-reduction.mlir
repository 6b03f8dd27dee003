// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group of kind "pointwise" holding a reduction.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,1],f32> {
  // CHECK: kind-pointwise-with-reduction.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op of kind "pointwise" holds a reduction 'torch.aten.sum.dim_IntList'
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[4,8],f32>):
    %int1 = torch.constant.int 1
    %true = torch.constant.bool true
    %none = torch.constant.none
    %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %1 = torch.aten.sum.dim_IntList %a, %dims, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[4,1],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,1],f32>
  return %0 : !torch.vtensor<[4,1],f32>
}
