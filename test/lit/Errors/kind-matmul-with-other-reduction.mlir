// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group of kind "matmul" holding a reduction that is not its GEMM's A
// summed over K (the one reduction a GEMM kernel computes): A's rows.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[6,8],f32>, %arg1: !torch.vtensor<[6,5],f32>) -> (!torch.vtensor<[8,5],f32>, !torch.vtensor<[6],f32>) {
  // CHECK: kind-matmul-with-other-reduction.mlir:[[# @LINE + 1]]:10: error: 'fusion.group' op of kind "matmul" holds a reduction 'torch.aten.sum.dim_IntList' that is neither a row sum of a normalization of its A nor its one GEMM's A summed over K
  %0:2 = "fusion.group"(%arg0, %arg1) ({
  ^bb0(%g: !torch.vtensor<[6,8],f32>, %x: !torch.vtensor<[6,5],f32>):
    %int1 = torch.constant.int 1
    %false = torch.constant.bool false
    %none = torch.constant.none
    %t = torch.aten.t %g : !torch.vtensor<[6,8],f32> -> !torch.vtensor<[8,6],f32>
    %mm = torch.aten.mm %t, %x : !torch.vtensor<[8,6],f32>, !torch.vtensor<[6,5],f32> -> !torch.vtensor<[8,5],f32>
    %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %s = torch.aten.sum.dim_IntList %g, %dims, %false, %none : !torch.vtensor<[6,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[6],f32>
    "fusion.yield"(%mm, %s) : (!torch.vtensor<[8,5],f32>, !torch.vtensor<[6],f32>) -> ()
  }) {kind = "matmul"} : (!torch.vtensor<[6,8],f32>, !torch.vtensor<[6,5],f32>) -> (!torch.vtensor<[8,5],f32>, !torch.vtensor<[6],f32>)
  return %0#0, %0#1 : !torch.vtensor<[8,5],f32>, !torch.vtensor<[6],f32>
}
