// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group of kind "reduction" holding a reduction mlirfuse does not fuse
// (argmax of integers): the fuser would never build it.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[4,8],si64>) -> !torch.vtensor<[4,1],si64> {
  // CHECK: kind-reduction-not-fused.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op of kind "reduction" holds a 'torch.aten.argmax' that is not fused: argmax is fused for floating types only
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[4,8],si64>):
    %int1 = torch.constant.int 1
    %true = torch.constant.bool true
    %1 = torch.aten.argmax %a, %int1, %true : !torch.vtensor<[4,8],si64>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],si64>
    "fusion.yield"(%1) : (!torch.vtensor<[4,1],si64>) -> ()
  }) {kind = "reduction"} : (!torch.vtensor<[4,8],si64>) -> !torch.vtensor<[4,1],si64>
  return %0 : !torch.vtensor<[4,1],si64>
}
