// RUN: mlirfuse-opt %s | mlirfuse-opt | filecheck %s

// Fusion ops print in MLIR's generic form; printing and re-parsing keeps them
// (and their operand, result and attribute lists) exactly.

// CHECK:       "fusion.kernel"() ({
// CHECK-NEXT:  ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>, %[[Y:.+]]: !torch.vtensor<[16],f32>):
// CHECK-NEXT:    %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[ADD:.+]] = torch.aten.add.Tensor %[[X]], %[[Y]], %[[ONE]] : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    %[[RELU:.+]] = torch.aten.relu %[[ADD]]
// CHECK-NEXT:    "fusion.yield"(%[[RELU]], %[[ADD]]) : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>) -> ()
// CHECK-NEXT:  }) {kind = "pointwise", sym_name = "fused_add_relu_0"} : () -> ()
"fusion.kernel"() ({
^bb0(%x: !torch.vtensor<[4,16],f32>, %y: !torch.vtensor<[16],f32>):
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %x, %y, %int1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  "fusion.yield"(%1, %0) : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>) -> ()
}) {kind = "pointwise", sym_name = "fused_add_relu_0"} : () -> ()

// CHECK-LABEL: func.func @launch
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,16],f32>, %[[B:.+]]: !torch.vtensor<[16],f32>)
// CHECK-NEXT:    %[[L:.+]]:2 = "fusion.launch"(%[[A]], %[[B]]) {kernel = @fused_add_relu_0} : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>) -> (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>)
// CHECK-NEXT:    return %[[L]]#0, %[[L]]#1
func.func @launch(%arg0: !torch.vtensor<[4,16],f32>, %arg1: !torch.vtensor<[16],f32>) -> (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>) {
  %0:2 = "fusion.launch"(%arg0, %arg1) {kernel = @fused_add_relu_0} : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>) -> (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>)
  return %0#0, %0#1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>
}

// Operands of different types (a tensor, a broadcast tensor, a scalar) and
// several results.

// CHECK-LABEL: func.func @group
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,16],f32>, %[[B:.+]]: !torch.vtensor<[16],f32>, %[[S:.+]]: !torch.float)
// CHECK-NEXT:    %[[G:.+]]:2 = "fusion.group"(%[[A]], %[[B]], %[[S]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>, %[[Y:.+]]: !torch.vtensor<[16],f32>, %[[Z:.+]]: !torch.float):
// CHECK-NEXT:      %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:      %[[ADD:.+]] = torch.aten.add.Tensor %[[X]], %[[Y]], %[[ONE]]
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Scalar %[[ADD]], %[[Z]]
// CHECK-NEXT:      %[[GT:.+]] = torch.aten.gt.Scalar %[[MUL]], %[[Z]] : !torch.vtensor<[4,16],f32>, !torch.float -> !torch.vtensor<[4,16],i1>
// CHECK-NEXT:      "fusion.yield"(%[[MUL]], %[[GT]]) : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],i1>) -> ()
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.float) -> (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],i1>)
// CHECK-NEXT:    return %[[G]]#0, %[[G]]#1
func.func @group(%arg0: !torch.vtensor<[4,16],f32>, %arg1: !torch.vtensor<[16],f32>, %arg2: !torch.float) -> (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],i1>) {
  %0:2 = "fusion.group"(%arg0, %arg1, %arg2) ({
  ^bb0(%x: !torch.vtensor<[4,16],f32>, %y: !torch.vtensor<[16],f32>, %s: !torch.float):
    %int1 = torch.constant.int 1
    %1 = torch.aten.add.Tensor %x, %y, %int1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
    %2 = torch.aten.mul.Scalar %1, %s : !torch.vtensor<[4,16],f32>, !torch.float -> !torch.vtensor<[4,16],f32>
    %3 = torch.aten.gt.Scalar %2, %s : !torch.vtensor<[4,16],f32>, !torch.float -> !torch.vtensor<[4,16],i1>
    "fusion.yield"(%2, %3) : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],i1>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.float) -> (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],i1>)
  return %0#0, %0#1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],i1>
}
