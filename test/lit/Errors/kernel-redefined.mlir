// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// Two kernels with one name: a launch could not tell which it calls.

// CHECK-NOT: Traceback
"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>):
  "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()
// CHECK: kernel-redefined.mlir:[[# @LINE + 1]]:1: error: redefinition of symbol named 'k'
"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>):
  %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.launch"(%arg0) {kernel = @k} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
