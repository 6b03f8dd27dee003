// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// Kernels are held to their kind as groups are.

// CHECK-NOT: Traceback
// CHECK: kernel-reduction-without-reduction.mlir:[[# @LINE + 1]]:1: error: 'fusion.kernel' op of kind "reduction" holds no reduction
"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>):
  %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
}) {kind = "reduction", sym_name = "k"} : () -> ()
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.launch"(%arg0) {kernel = @k} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
