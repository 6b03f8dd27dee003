// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A launch passes one tensor to a kernel that takes two.

// CHECK-NOT: Traceback
"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>, %b: !torch.vtensor<[8],f32>):
  %0 = torch.aten.mul.Tensor %a, %b : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  "fusion.yield"(%0) : (!torch.vtensor<[8],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: launch-operand-count.mlir:[[# @LINE + 1]]:8: error: 'fusion.launch' op operand types (!torch.vtensor<[8],f32>) do not match @k arguments (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>)
  %0 = "fusion.launch"(%arg0) {kernel = @k} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
