// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(mlirfuse-pipeline)' | filecheck %s
// The flag spelling runs the same pipeline.
// RUN: mlirfuse-opt %s --split-input-file --mlirfuse-pipeline | filecheck %s

// Two linear -> gelu -> *0.5 blocks: the matmuls stay torch ops without
// their bias (fusion-split-bias), each bias add + epilogue is fused, and the
// two identical epilogues share one kernel.

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>, %[[BIAS:.+]]: !torch.vtensor<[16],f32>):
// CHECK-NEXT:      %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:      %[[ADD:.+]] = torch.aten.add.Tensor %[[X]], %[[BIAS]], %[[ONE]]
// CHECK-NEXT:      %[[APPROX:.+]] = torch.constant.str "none"
// CHECK-NEXT:      %[[GELU:.+]] = torch.aten.gelu %[[ADD]], %[[APPROX]]
// CHECK-NEXT:      %[[HALF:.+]] = torch.constant.float 5.000000e-01
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Scalar %[[GELU]], %[[HALF]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL]]) : (!torch.vtensor<[4,16],f32>) -> ()
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_add_gelu_mul_0"} : () -> ()
// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @fuse_mlp
// CHECK-SAME:    (%[[IN:[^:]+]]: !torch.vtensor<[4,16],f32>, %[[W1:[^:]+]]: !torch.vtensor<[16,16],f32>, %[[B1:[^:]+]]: !torch.vtensor<[16],f32>, %[[W2:[^:]+]]: !torch.vtensor<[16,16],f32>, %[[B2:[^:]+]]: !torch.vtensor<[16],f32>)
// CHECK-NOT:     fusion.group
// CHECK-NEXT:    %[[NONE1:.+]] = torch.constant.none
// CHECK-NEXT:    %[[MM1:.+]] = torch.aten.linear %[[IN]], %[[W1]], %[[NONE1]]
// CHECK-NEXT:    %[[EPI1:.+]] = "fusion.launch"(%[[MM1]], %[[B1]]) {kernel = @fused_add_gelu_mul_0} : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>) -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    %[[NONE2:.+]] = torch.constant.none
// CHECK-NEXT:    %[[MM2:.+]] = torch.aten.linear %[[EPI1]], %[[W2]], %[[NONE2]]
// CHECK-NEXT:    %[[EPI2:.+]] = "fusion.launch"(%[[MM2]], %[[B2]]) {kernel = @fused_add_gelu_mul_0} : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>) -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    return %[[EPI2]]
func.func @fuse_mlp(%arg0: !torch.vtensor<[4,16],f32>, %arg1: !torch.vtensor<[16,16],f32>, %arg2: !torch.vtensor<[16],f32>, %arg3: !torch.vtensor<[16,16],f32>, %arg4: !torch.vtensor<[16],f32>) -> !torch.vtensor<[4,16],f32> {
  %0 = torch.aten.linear %arg0, %arg1, %arg2 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16,16],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[4,16],f32>
  %str = torch.constant.str "none"
  %1 = torch.aten.gelu %0, %str : !torch.vtensor<[4,16],f32>, !torch.str -> !torch.vtensor<[4,16],f32>
  %float5.000000e-01 = torch.constant.float 5.000000e-01
  %2 = torch.aten.mul.Scalar %1, %float5.000000e-01 : !torch.vtensor<[4,16],f32>, !torch.float -> !torch.vtensor<[4,16],f32>
  %3 = torch.aten.linear %2, %arg3, %arg4 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16,16],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[4,16],f32>
  %str_0 = torch.constant.str "none"
  %4 = torch.aten.gelu %3, %str_0 : !torch.vtensor<[4,16],f32>, !torch.str -> !torch.vtensor<[4,16],f32>
  %float5.000000e-01_1 = torch.constant.float 5.000000e-01
  %5 = torch.aten.mul.Scalar %4, %float5.000000e-01_1 : !torch.vtensor<[4,16],f32>, !torch.float -> !torch.vtensor<[4,16],f32>
  return %5 : !torch.vtensor<[4,16],f32>
}

// -----

// A residual block: bias add, gelu and the residual add that reads the
// block's input are one kernel with three inputs.

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>, %[[BIAS:.+]]: !torch.vtensor<[16],f32>, %[[R:.+]]: !torch.vtensor<[4,16],f32>):
// CHECK-NEXT:      %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:      %[[BADD:.+]] = torch.aten.add.Tensor %[[X]], %[[BIAS]], %[[ONE]]
// CHECK-NEXT:      %[[APPROX:.+]] = torch.constant.str "none"
// CHECK-NEXT:      %[[GELU:.+]] = torch.aten.gelu %[[BADD]], %[[APPROX]]
// CHECK-NEXT:      %[[ADD:.+]] = torch.aten.add.Tensor %[[GELU]], %[[R]], %[[ONE]]
// CHECK-NEXT:      "fusion.yield"(%[[ADD]])
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_add_gelu_0"} : () -> ()
// CHECK-LABEL: func.func @fuse_residual_block
// CHECK-SAME:    (%[[IN:[^:]+]]: !torch.vtensor<[4,16],f32>, %[[W:[^:]+]]: !torch.vtensor<[16,16],f32>, %[[B:[^:]+]]: !torch.vtensor<[16],f32>)
// CHECK-NEXT:    %[[NONE:.+]] = torch.constant.none
// CHECK-NEXT:    %[[MM:.+]] = torch.aten.linear %[[IN]], %[[W]], %[[NONE]]
// CHECK-NEXT:    %[[OUT:.+]] = "fusion.launch"(%[[MM]], %[[B]], %[[IN]]) {kernel = @fused_add_gelu_0}
// CHECK-NEXT:    return %[[OUT]]
func.func @fuse_residual_block(%arg0: !torch.vtensor<[4,16],f32>, %arg1: !torch.vtensor<[16,16],f32>, %arg2: !torch.vtensor<[16],f32>) -> !torch.vtensor<[4,16],f32> {
  %0 = torch.aten.linear %arg0, %arg1, %arg2 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16,16],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[4,16],f32>
  %str = torch.constant.str "none"
  %1 = torch.aten.gelu %0, %str : !torch.vtensor<[4,16],f32>, !torch.str -> !torch.vtensor<[4,16],f32>
  %int1 = torch.constant.int 1
  %2 = torch.aten.add.Tensor %1, %arg0, %int1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
  return %2 : !torch.vtensor<[4,16],f32>
}

// -----

// Three exp -> neg chains separated by matrix-vector products: three launches
// of one kernel, whatever their position in the function.

// CHECK:         "fusion.kernel"() ({
// CHECK:         }) {kind = "pointwise", sym_name = "fused_exp_neg_0"} : () -> ()
// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @fuse_dedup_three_chains
// CHECK-SAME:    (%[[A:[^:]+]]: !torch.vtensor<[8],f32>, %[[W:[^:]+]]: !torch.vtensor<[8,8],f32>)
// CHECK-NEXT:    %[[L0:.+]] = "fusion.launch"(%[[A]]) {kernel = @fused_exp_neg_0}
// CHECK-NEXT:    %[[M0:.+]] = torch.aten.mv %[[W]], %[[L0]]
// CHECK-NEXT:    %[[L1:.+]] = "fusion.launch"(%[[M0]]) {kernel = @fused_exp_neg_0}
// CHECK-NEXT:    %[[M1:.+]] = torch.aten.mv %[[W]], %[[L1]]
// CHECK-NEXT:    %[[L2:.+]] = "fusion.launch"(%[[M1]]) {kernel = @fused_exp_neg_0}
// CHECK-NEXT:    %[[M2:.+]] = torch.aten.mv %[[W]], %[[L2]]
// CHECK-NEXT:    return %[[M2]]
func.func @fuse_dedup_three_chains(%arg0: !torch.vtensor<[8],f32>, %w: !torch.vtensor<[8,8],f32>) -> !torch.vtensor<[8],f32> {
  %e0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %n0 = torch.aten.neg %e0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %m0 = torch.aten.mv %w, %n0 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %e1 = torch.aten.exp %m0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %n1 = torch.aten.neg %e1 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %m1 = torch.aten.mv %w, %n1 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %e2 = torch.aten.exp %m1 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %n2 = torch.aten.neg %e2 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %m2 = torch.aten.mv %w, %n2 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %m2 : !torch.vtensor<[8],f32>
}

// -----

// Nothing fusible: the pipeline leaves the function as it was.

// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @no_fuse_only_matmul
// CHECK-NEXT:    %[[MM:.+]] = torch.aten.mm
// CHECK-NEXT:    return %[[MM]]
func.func @no_fuse_only_matmul(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[4,4],f32> {
  %0 = torch.aten.mm %arg0, %arg1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[4,4],f32>
  return %0 : !torch.vtensor<[4,4],f32>
}
