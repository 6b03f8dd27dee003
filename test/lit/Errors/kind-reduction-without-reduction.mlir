// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group of kind "reduction" must compute a reduction: the fuser and the
// lowering rely on it (this was an internal AttributeError).

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: kind-reduction-without-reduction.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op of kind "reduction" holds no reduction
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "reduction"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
