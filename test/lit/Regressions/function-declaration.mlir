// A module an embedding compiler hands over may declare functions without a
// body (`func.func private @f(...)`): the passes skip them (they used to
// fail with "internal error ... IndexError") and fuse around the call.

// RUN: mlirfuse-opt %s --mlirfuse-pipeline='explain=true' | filecheck %s

// CHECK:       sym_name = "fused_exp_0"
// CHECK:       sym_name = "fused_neg_tanh_1"
// CHECK:       func.func private @external(!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
// CHECK-LABEL: func.func @calls_external
// CHECK-NEXT:    %[[A:.+]] = "fusion.launch"(%arg0) {fusion.explain = ["consumer func.call: unsupported op"], kernel = @fused_exp_0}
// CHECK-NEXT:    %[[B:.+]] = call @external(%[[A]])
// CHECK-NEXT:    "fusion.launch"(%[[B]]) {fusion.explain = ["producer func.call: unsupported op"], kernel = @fused_neg_tanh_1}
func.func private @external(!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
func.func @calls_external(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = func.call @external(%0) : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %2 = torch.aten.neg %1 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %3 = torch.aten.tanh %2 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %3 : !torch.vtensor<[8],f32>
}
