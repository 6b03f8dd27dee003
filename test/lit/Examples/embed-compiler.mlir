// examples/embed_compiler.py, an outside compiler embedding mlirfuse, on two
// functions: a public value-semantic one (torch.export's form) and a private
// one in TorchScript's form (!torch.tensor, an in-place op) that only
// torch-mlir's own passes, run first in the same PassManager, make
// value-semantic. Then mlirfuse fuses both, torch-mlir runs again and the
// compiler's own pass counts the launches.

// RUN: %PYTHON %S/../../../examples/embed_compiler.py %s | filecheck %s

// Two kernels, one per function, outlined at the top of the module.
// CHECK:       "fusion.kernel"() ({
// CHECK:         torch.aten.mul.Tensor
// CHECK-NEXT:    torch.aten.tanh
// CHECK-NEXT:    torch.aten.sigmoid
// CHECK:       }) {kind = "pointwise", sym_name = "fused_mul_tanh_sigmoid_0"}
// CHECK:       "fusion.kernel"() ({
// CHECK:         torch.aten.exp
// CHECK:         torch.aten.add.Scalar
// CHECK:       }) {kind = "pointwise", sym_name = "fused_exp_add_1"}

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    attributes {mycompiler.launches = 1 : i64}
// CHECK-NEXT:    %[[L:.+]] = "fusion.launch"(%arg0, %arg1) {kernel = @fused_mul_tanh_sigmoid_0}
// CHECK-NEXT:    return %[[L]]
func.func @forward(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %0 = torch.aten.mul.Tensor %arg0, %arg1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.tanh %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.sigmoid %1 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  return %2 : !torch.vtensor<[4,8],f32>
}

// CHECK-LABEL: func.func private @helper
// CHECK-SAME:    attributes {mycompiler.launches = 1 : i64}
// CHECK-NOT:     torch.copy.to_tensor
// CHECK-NOT:     torch.aten.add_.Scalar
// CHECK:         "fusion.launch"(%arg0) {kernel = @fused_exp_add_1}
func.func private @helper(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.copy.to_tensor %arg0 : !torch.tensor<[4,8],f32>
  %1 = torch.aten.exp %0 : !torch.tensor<[4,8],f32> -> !torch.tensor<[4,8],f32>
  %2 = torch.aten.add_.Scalar %1, %int1, %int1 : !torch.tensor<[4,8],f32>, !torch.int, !torch.int -> !torch.tensor<[4,8],f32>
  %3 = torch.copy.to_vtensor %2 : !torch.vtensor<[4,8],f32>
  return %3 : !torch.vtensor<[4,8],f32>
}

// Each kernel's Triton source follows the IR.
// CHECK:       # ----- Triton kernel fused_mul_tanh_sigmoid_0
// CHECK:       @triton.jit
// CHECK:       def fused_mul_tanh_sigmoid_0(
// CHECK:       # ----- Triton kernel fused_exp_add_1
// CHECK:       def fused_exp_add_1(
