// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(mlirfuse-pipeline)' | filecheck %s
// The flag spelling runs the same pipeline.
// RUN: mlirfuse-opt %s --split-input-file --mlirfuse-pipeline | filecheck %s

// Two linear -> gelu -> *0.5 blocks back to back: each linear (its bias
// split off by fusion-split-bias) is a Triton GEMM whose epilogue is the bias
// add, gelu and scale (fusion-fuse-matmul); the first one's result, read only
// as the second's A and 16 wide, stays on chip: one matmul-chain kernel.

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>, %[[W:.+]]: !torch.vtensor<[16,16],f32>, %[[BIAS:.+]]: !torch.vtensor<[16],f32>, %[[W2:.+]]: !torch.vtensor<[16,16],f32>, %[[BIAS2:.+]]: !torch.vtensor<[16],f32>):
// CHECK:           %[[MM:.+]] = torch.aten.linear %[[X]], %[[W]]
// CHECK:           %[[ADD:.+]] = torch.aten.add.Tensor %[[MM]], %[[BIAS]]
// CHECK:           %[[GELU:.+]] = torch.aten.gelu %[[ADD]]
// CHECK:           %[[MUL:.+]] = torch.aten.mul.Scalar %[[GELU]]
// CHECK:           %[[MM2:.+]] = torch.aten.linear %[[MUL]], %[[W2]]
// CHECK:           %[[ADD2:.+]] = torch.aten.add.Tensor %[[MM2]], %[[BIAS2]]
// CHECK:           %[[GELU2:.+]] = torch.aten.gelu %[[ADD2]]
// CHECK:           %[[MUL2:.+]] = torch.aten.mul.Scalar %[[GELU2]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL2]]) : (!torch.vtensor<[4,16],f32>) -> ()
// CHECK-NEXT:    }) {kind = "matmul-chain", sym_name = "fused_linear_add_gelu_mul_0"} : () -> ()
// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @fuse_mlp
// CHECK-SAME:    (%[[IN:[^:]+]]: !torch.vtensor<[4,16],f32>, %[[W1:[^:]+]]: !torch.vtensor<[16,16],f32>, %[[B1:[^:]+]]: !torch.vtensor<[16],f32>, %[[W2:[^:]+]]: !torch.vtensor<[16,16],f32>, %[[B2:[^:]+]]: !torch.vtensor<[16],f32>)
// CHECK-NOT:     fusion.group
// CHECK-NEXT:    %[[L:.+]] = "fusion.launch"(%[[IN]], %[[W1]], %[[B1]], %[[W2]], %[[B2]]) {kernel = @fused_linear_add_gelu_mul_0}
// CHECK-NEXT:    return %[[L]]
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

// A residual block: the GEMM, bias add, gelu and the residual add that
// reads the block's input are one kernel.

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>, %[[W:.+]]: !torch.vtensor<[16,16],f32>, %[[BIAS:.+]]: !torch.vtensor<[16],f32>):
// CHECK:           %[[MM:.+]] = torch.aten.linear %[[X]], %[[W]]
// CHECK:           %[[BADD:.+]] = torch.aten.add.Tensor %[[MM]], %[[BIAS]]
// CHECK:           %[[GELU:.+]] = torch.aten.gelu %[[BADD]]
// CHECK-NEXT:      %[[ADD:.+]] = torch.aten.add.Tensor %[[GELU]], %[[X]]
// CHECK-NEXT:      "fusion.yield"(%[[ADD]])
// CHECK-NEXT:    }) {kind = "matmul", sym_name = "fused_linear_add_gelu_0"} : () -> ()
// CHECK-LABEL: func.func @fuse_residual_block
// CHECK-SAME:    (%[[IN:[^:]+]]: !torch.vtensor<[4,16],f32>, %[[W:[^:]+]]: !torch.vtensor<[16,16],f32>, %[[B:[^:]+]]: !torch.vtensor<[16],f32>)
// CHECK-NEXT:    %[[OUT:.+]] = "fusion.launch"(%[[IN]], %[[W]], %[[B]]) {kernel = @fused_linear_add_gelu_0}
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

// Nothing fusible (a matrix-vector product is no GEMM for the template):
// the pipeline leaves the function as it was.

// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @no_fuse_only_matvec
// CHECK-NEXT:    %[[MV:.+]] = torch.aten.mv
// CHECK-NEXT:    return %[[MV]]
func.func @no_fuse_only_matvec(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.mv %arg0, %arg1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
