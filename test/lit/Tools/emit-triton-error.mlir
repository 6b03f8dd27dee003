// RUN: not mlirfuse-opt %s --emit-triton 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A kernel the Triton lowering cannot express is reported at that kernel's
// line:col, like any other error, with exit code 1 and no partial output.

// CHECK-NOT: Traceback
// CHECK:     emit-triton-error.mlir:[[# @LINE + 1]]:1: error: kernel @k: no Triton lowering for 'torch.aten.mm'
"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[4,4],f32>):
  %0 = torch.aten.mm %a, %a : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  "fusion.yield"(%0) : (!torch.vtensor<[4,4],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()
// CHECK-NOT: Traceback
// CHECK-NOT: @triton.jit

func.func @f(%arg0: !torch.vtensor<[4,4],f32>) -> !torch.vtensor<[4,4],f32> {
  %0 = "fusion.launch"(%arg0) {kernel = @k} : (!torch.vtensor<[4,4],f32>) -> !torch.vtensor<[4,4],f32>
  return %0 : !torch.vtensor<[4,4],f32>
}
