// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group of kind "attention" holding no attention (one matmul, no softmax).

// CHECK-NOT: Traceback
func.func @f(%a0: !torch.vtensor<[4,8],f32>, %a1: !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[4,4],f32> {
  // CHECK: kind-attention-without-attention.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op of kind "attention" holds neither one 'torch.aten.scaled_dot_product_attention' nor matmul -> softmax -> matmul
  %0 = "fusion.group"(%a0, %a1) ({
  ^bb0(%a: !torch.vtensor<[4,8],f32>, %b: !torch.vtensor<[8,4],f32>):
    %1 = torch.aten.matmul %a, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[4,4],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[4,4],f32>) -> ()
  }) {kind = "attention"} : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[4,4],f32>
  return %0 : !torch.vtensor<[4,4],f32>
}
