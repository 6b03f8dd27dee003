// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-elementwise, fusion-fuse-matmul{row-prologue=true})' | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-elementwise, fusion-fuse-matmul{row-prologue=true})' --fusion-explain | filecheck %s --check-prefix=EXPLAIN

// A linear (its bias split off by fusion-split-bias) followed by bias add
// and gelu: one matmul group, the pointwise group is its epilogue.

// CHECK-LABEL: func.func @fuse_linear_bias_gelu
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           %[[MM:.+]] = torch.aten.linear
// CHECK:           %[[ADD:.+]] = torch.aten.add.Tensor %[[MM]]
// CHECK:           %[[GELU:.+]] = torch.aten.gelu %[[ADD]]
// CHECK-NEXT:      "fusion.yield"(%[[GELU]])
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_linear_bias_gelu(%x: !torch.vtensor<[2,5,8],f32>, %w: !torch.vtensor<[16,8],f32>, %b: !torch.vtensor<[16],f32>) -> !torch.vtensor<[2,5,16],f32> {
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %str = torch.constant.str "none"
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,5,8],f32>, !torch.vtensor<[16,8],f32>, !torch.none -> !torch.vtensor<[2,5,16],f32>
  %1 = torch.aten.add.Tensor %0, %b, %int1 : !torch.vtensor<[2,5,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[2,5,16],f32>
  %2 = torch.aten.gelu %1, %str : !torch.vtensor<[2,5,16],f32>, !torch.str -> !torch.vtensor<[2,5,16],f32>
  return %2 : !torch.vtensor<[2,5,16],f32>
}

// -----

// The pre-activation value is also returned: the group has two results,
// the epilogue's first, then the exported one.

// CHECK-LABEL: func.func @fuse_epilogue_exports_pre_activation
// CHECK:         %[[G:.+]]:2 = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           %[[MM:.+]] = torch.aten.mm
// CHECK:           %[[ADD:.+]] = torch.aten.add.Tensor %[[MM]]
// CHECK-NEXT:      %[[RELU:.+]] = torch.aten.relu %[[ADD]]
// CHECK-NEXT:      "fusion.yield"(%[[RELU]], %[[ADD]])
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK-NEXT:    return %[[G]]#1, %[[G]]#0
func.func @fuse_epilogue_exports_pre_activation(%a: !torch.vtensor<[17,33],f32>, %b: !torch.vtensor<[33,9],f32>, %bias: !torch.vtensor<[9],f32>) -> (!torch.vtensor<[17,9],f32>, !torch.vtensor<[17,9],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.mm %a, %b : !torch.vtensor<[17,33],f32>, !torch.vtensor<[33,9],f32> -> !torch.vtensor<[17,9],f32>
  %1 = torch.aten.add.Tensor %0, %bias, %int1 : !torch.vtensor<[17,9],f32>, !torch.vtensor<[9],f32>, !torch.int -> !torch.vtensor<[17,9],f32>
  %2 = torch.aten.relu %1 : !torch.vtensor<[17,9],f32> -> !torch.vtensor<[17,9],f32>
  return %1, %2 : !torch.vtensor<[17,9],f32>, !torch.vtensor<[17,9],f32>
}

// -----

// Prologue: a cast of A (recomputed per tile) and a transposed B (read by
// strides) join the GEMM; the residual add and the scale join as epilogue.

// CHECK-LABEL: func.func @fuse_prologue_cast_transpose_and_residual
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,8],f32>, %[[W:.+]]: !torch.vtensor<[16,8],f16>, %[[R:.+]]: !torch.vtensor<[4,16],f16>):
// CHECK:           %[[XH:.+]] = torch.prims.convert_element_type %[[X]]
// CHECK:           %[[WT:.+]] = torch.aten.t %[[W]]
// CHECK-NEXT:      %[[MM:.+]] = torch.aten.mm %[[XH]], %[[WT]]
// CHECK:           %[[S:.+]] = torch.aten.mul.Scalar %[[MM]]
// CHECK:           %[[ADD:.+]] = torch.aten.add.Tensor %[[S]], %[[R]]
// CHECK-NEXT:      "fusion.yield"(%[[ADD]])
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK-NOT:     "fusion.group"
func.func @fuse_prologue_cast_transpose_and_residual(%x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[16,8],f16>, %r: !torch.vtensor<[4,16],f16>) -> !torch.vtensor<[4,16],f16> {
  %int5 = torch.constant.int 5
  %int1 = torch.constant.int 1
  %float = torch.constant.float 5.000000e-01
  %0 = torch.prims.convert_element_type %x, %int5 : !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f16>
  %1 = torch.aten.t %w : !torch.vtensor<[16,8],f16> -> !torch.vtensor<[8,16],f16>
  %2 = torch.aten.mm %0, %1 : !torch.vtensor<[4,8],f16>, !torch.vtensor<[8,16],f16> -> !torch.vtensor<[4,16],f16>
  %3 = torch.aten.mul.Scalar %2, %float : !torch.vtensor<[4,16],f16>, !torch.float -> !torch.vtensor<[4,16],f16>
  %4 = torch.aten.add.Tensor %3, %r, %int1 : !torch.vtensor<[4,16],f16>, !torch.vtensor<[4,16],f16>, !torch.int -> !torch.vtensor<[4,16],f16>
  return %4 : !torch.vtensor<[4,16],f16>
}

// -----

// A batched matmul with a broadcast A, and baddbmm keeping its scaled bias.

// CHECK-LABEL: func.func @fuse_batched
// CHECK:         "fusion.group"(%arg0, %arg1) ({
// CHECK:           torch.aten.matmul
// CHECK-NEXT:      torch.aten.tanh
// CHECK:         }) {kind = "matmul"}
// CHECK:         "fusion.group"(%arg2, %arg3, %arg1) ({
// CHECK:           torch.aten.baddbmm
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "matmul"}
func.func @fuse_batched(%a: !torch.vtensor<[5,8],f32>, %b: !torch.vtensor<[3,8,6],f32>, %c: !torch.vtensor<[6],f32>, %d: !torch.vtensor<[3,5,8],f32>) -> (!torch.vtensor<[3,5,6],f32>, !torch.vtensor<[3,5,6],f32>) {
  %0 = torch.aten.matmul %a, %b : !torch.vtensor<[5,8],f32>, !torch.vtensor<[3,8,6],f32> -> !torch.vtensor<[3,5,6],f32>
  %1 = torch.aten.tanh %0 : !torch.vtensor<[3,5,6],f32> -> !torch.vtensor<[3,5,6],f32>
  %float = torch.constant.float 5.000000e-01
  %int2 = torch.constant.int 2
  %2 = torch.aten.baddbmm %c, %d, %b, %float, %int2 : !torch.vtensor<[6],f32>, !torch.vtensor<[3,5,8],f32>, !torch.vtensor<[3,8,6],f32>, !torch.float, !torch.int -> !torch.vtensor<[3,5,6],f32>
  return %1, %2 : !torch.vtensor<[3,5,6],f32>, !torch.vtensor<[3,5,6],f32>
}

// -----

// A reduction reads the GEMM's result: the GEMM is a group of its own,
// and the explain report says why the reduction stayed outside.

// CHECK-LABEL: func.func @no_fuse_reduction_epilogue
// CHECK:         %[[MM:.+]] = "fusion.group"(%arg0, %arg1) ({
// CHECK:           torch.aten.mm
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK:         "fusion.group"(%[[MM]]) ({
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         }) {kind = "persistent-reduction"}
// EXPLAIN-LABEL: func.func @no_fuse_reduction_epilogue
// EXPLAIN:         {fusion.explain = ["consumer fusion.group: consumer is a persistent-reduction group (a GEMM epilogue is pointwise over the GEMM's result)"], kind = "matmul"}
func.func @no_fuse_reduction_epilogue(%a: !torch.vtensor<[4,8],f32>, %b: !torch.vtensor<[8,16],f32>) -> !torch.vtensor<[4,1],f32> {
  %true = torch.constant.bool true
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.mm %a, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,16],f32> -> !torch.vtensor<[4,16],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  %2 = torch.aten.sum.dim_IntList %1, %dims, %true, %none : !torch.vtensor<[4,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  return %2 : !torch.vtensor<[4,1],f32>
}

// -----

// The epilogue would run over a bigger space than the GEMM's result (the
// [4,16] product broadcast into [2,4,16]); a cast read also by a return is
// not recomputed as a prologue.

// CHECK-LABEL: func.func @no_fuse_bigger_space_or_shared_prologue
// CHECK:         %[[CAST:.+]] = "fusion.group"(%arg0) ({
// CHECK:         }) {kind = "pointwise"}
// CHECK:         %[[MM:.+]] = "fusion.group"(%[[CAST]], %arg1) ({
// CHECK:           torch.aten.mm
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK:         "fusion.group"(%[[MM]], %arg2) ({
// CHECK:         }) {kind = "pointwise"}
// EXPLAIN-LABEL: func.func @no_fuse_bigger_space_or_shared_prologue
// EXPLAIN:         fusion.explain = ["producer fusion.group: producer's result is also read elsewhere", "consumer fusion.group: different iteration space (the epilogue runs over the GEMM's result tile)"], kind = "matmul"
func.func @no_fuse_bigger_space_or_shared_prologue(%a: !torch.vtensor<[4,8],f32>, %b: !torch.vtensor<[8,16],f16>, %c: !torch.vtensor<[2,4,16],f16>) -> (!torch.vtensor<[4,8],f16>, !torch.vtensor<[2,4,16],f16>) {
  %int5 = torch.constant.int 5
  %int1 = torch.constant.int 1
  %0 = torch.prims.convert_element_type %a, %int5 : !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f16>
  %1 = torch.aten.mm %0, %b : !torch.vtensor<[4,8],f16>, !torch.vtensor<[8,16],f16> -> !torch.vtensor<[4,16],f16>
  %2 = torch.aten.add.Tensor %1, %c, %int1 : !torch.vtensor<[4,16],f16>, !torch.vtensor<[2,4,16],f16>, !torch.int -> !torch.vtensor<[2,4,16],f16>
  return %0, %2 : !torch.vtensor<[4,8],f16>, !torch.vtensor<[2,4,16],f16>
}

// -----

// What the template does not take stays an ATen op: a matrix-vector
// product, mixed dtypes.

// CHECK-LABEL: func.func @no_fuse_matvec_or_mixed_dtypes
// CHECK-NOT:     kind = "matmul"
// CHECK:         torch.aten.matmul %arg0, %arg1
// CHECK:         torch.aten.mm %arg0, %arg2
func.func @no_fuse_matvec_or_mixed_dtypes(%a: !torch.vtensor<[4,8],f32>, %v: !torch.vtensor<[8],f32>, %h: !torch.vtensor<[8,4],f64>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4,4],f64>) {
  %0 = torch.aten.matmul %a, %v : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[4],f32>
  %1 = torch.aten.mm %a, %h : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,4],f64> -> !torch.vtensor<[4,4],f64>
  return %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4,4],f64>
}

// -----

// A producer that stores a reshape of what it computes (a transpose made
// contiguous: clone + _unsafe_view) is a copy, not a per-tile prologue.

// CHECK-LABEL: func.func @no_fuse_prologue_storing_a_reshape
// CHECK:         %[[COPY:.+]] = "fusion.group"(%arg0) ({
// CHECK:           torch.aten._unsafe_view
// CHECK:         }) {kind = "pointwise"}
// CHECK:         "fusion.group"(%[[COPY]], %arg1) ({
// CHECK:         }) {kind = "matmul"}
func.func @no_fuse_prologue_storing_a_reshape(%a: !torch.vtensor<[4,2,8],f32>, %b: !torch.vtensor<[16,4],f32>) -> !torch.vtensor<[8,4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int8 = torch.constant.int 8
  %int16 = torch.constant.int 16
  %none = torch.constant.none
  %0 = torch.aten.transpose.int %a, %int0, %int1 : !torch.vtensor<[4,2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,4,8],f32>
  %1 = torch.aten.clone %0, %none : !torch.vtensor<[2,4,8],f32>, !torch.none -> !torch.vtensor<[2,4,8],f32>
  %s = torch.prim.ListConstruct %int8, %int16 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten._unsafe_view %1, %s : !torch.vtensor<[2,4,8],f32>, !torch.list<int> -> !torch.vtensor<[8,16],f32>
  %3 = torch.aten.mm %2, %b : !torch.vtensor<[8,16],f32>, !torch.vtensor<[16,4],f32> -> !torch.vtensor<[8,4],f32>
  return %3 : !torch.vtensor<[8,4],f32>
}

// -----

// SwiGLU: the gate and up projections read the same x and become one
// grouped GEMM (one A tile, two accumulators) whose epilogue is silu(g) * u.

// CHECK-LABEL: func.func @fuse_grouped_swiglu
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[6,16],f32>, %[[WG:.+]]: !torch.vtensor<[24,16],f32>, %[[WU:.+]]: !torch.vtensor<[24,16],f32>):
// CHECK:           %[[GATE:.+]] = torch.aten.linear %[[X]], %[[WG]]
// CHECK:           %[[UP:.+]] = torch.aten.linear %[[X]], %[[WU]]
// CHECK-NEXT:      %[[SILU:.+]] = torch.aten.silu %[[GATE]]
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Tensor %[[SILU]], %[[UP]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL]])
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_grouped_swiglu(%x: !torch.vtensor<[6,16],f32>, %wg: !torch.vtensor<[24,16],f32>, %wu: !torch.vtensor<[24,16],f32>) -> !torch.vtensor<[6,24],f32> {
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %wg, %none : !torch.vtensor<[6,16],f32>, !torch.vtensor<[24,16],f32>, !torch.none -> !torch.vtensor<[6,24],f32>
  %1 = torch.aten.linear %x, %wu, %none : !torch.vtensor<[6,16],f32>, !torch.vtensor<[24,16],f32>, !torch.none -> !torch.vtensor<[6,24],f32>
  %2 = torch.aten.silu %0 : !torch.vtensor<[6,24],f32> -> !torch.vtensor<[6,24],f32>
  %3 = torch.aten.mul.Tensor %2, %1 : !torch.vtensor<[6,24],f32>, !torch.vtensor<[6,24],f32> -> !torch.vtensor<[6,24],f32>
  return %3 : !torch.vtensor<[6,24],f32>
}

// -----

// Not grouped: GEMMs of x with different widths (no common tile), and a
// GEMM whose A is the other's result (a dependence, not a sibling).

// CHECK-LABEL: func.func @no_fuse_grouped_different_width_or_dependent
// CHECK-COUNT-3: }) {kind = "matmul"}
func.func @no_fuse_grouped_different_width_or_dependent(%x: !torch.vtensor<[6,16],f32>, %w1: !torch.vtensor<[24,16],f32>, %w2: !torch.vtensor<[8,16],f32>, %w3: !torch.vtensor<[16,24],f32>) -> (!torch.vtensor<[6,24],f32>, !torch.vtensor<[6,8],f32>, !torch.vtensor<[6,16],f32>) {
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w1, %none : !torch.vtensor<[6,16],f32>, !torch.vtensor<[24,16],f32>, !torch.none -> !torch.vtensor<[6,24],f32>
  %1 = torch.aten.linear %x, %w2, %none : !torch.vtensor<[6,16],f32>, !torch.vtensor<[8,16],f32>, !torch.none -> !torch.vtensor<[6,8],f32>
  %2 = torch.aten.linear %0, %w3, %none : !torch.vtensor<[6,24],f32>, !torch.vtensor<[16,24],f32>, !torch.none -> !torch.vtensor<[6,16],f32>
  return %0, %1, %2 : !torch.vtensor<[6,24],f32>, !torch.vtensor<[6,8],f32>, !torch.vtensor<[6,16],f32>
}

// -----

// Summed GEMMs over different A operands (an RNN's x @ W_ih + h @ W_hh,
// K = 24 and 20): independent, one result space, read by one pointwise
// group, so one grouped GEMM (a K loop per A, an accumulator per GEMM)
// whose epilogue is the add and the tanh.

// CHECK-LABEL: func.func @fuse_summed_gemms_different_a
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2, %arg3) ({
// CHECK-DAG:       %[[X:.+]] = torch.aten.mm %{{.+}}, %{{.+}} : !torch.vtensor<[3,24],f32>, !torch.vtensor<[24,20],f32> -> !torch.vtensor<[3,20],f32>
// CHECK-DAG:       %[[H:.+]] = torch.aten.mm %{{.+}}, %{{.+}} : !torch.vtensor<[3,20],f32>, !torch.vtensor<[20,20],f32> -> !torch.vtensor<[3,20],f32>
// CHECK:           %[[ADD:.+]] = torch.aten.add.Tensor
// CHECK-NEXT:      %[[TANH:.+]] = torch.aten.tanh %[[ADD]]
// CHECK-NEXT:      "fusion.yield"(%[[TANH]])
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_summed_gemms_different_a(%x: !torch.vtensor<[3,24],f32>, %wx: !torch.vtensor<[24,20],f32>, %h: !torch.vtensor<[3,20],f32>, %wh: !torch.vtensor<[20,20],f32>) -> !torch.vtensor<[3,20],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.mm %x, %wx : !torch.vtensor<[3,24],f32>, !torch.vtensor<[24,20],f32> -> !torch.vtensor<[3,20],f32>
  %1 = torch.aten.mm %h, %wh : !torch.vtensor<[3,20],f32>, !torch.vtensor<[20,20],f32> -> !torch.vtensor<[3,20],f32>
  %2 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[3,20],f32>, !torch.vtensor<[3,20],f32>, !torch.int -> !torch.vtensor<[3,20],f32>
  %3 = torch.aten.tanh %2 : !torch.vtensor<[3,20],f32> -> !torch.vtensor<[3,20],f32>
  return %3 : !torch.vtensor<[3,20],f32>
}

// -----

// Not merged: the second GEMM reads the first one's result (a dependence),
// and its epilogue (the add) reads it too, so it is no chain either.

// CHECK-LABEL: func.func @no_fuse_summed_gemms_dependent
// CHECK:         %[[G1:.+]] = "fusion.group"(%arg0, %arg1) ({
// CHECK:         }) {kind = "matmul"}
// CHECK:         %[[G2:.+]] = "fusion.group"(%[[G1]], %arg2) ({
// CHECK:           torch.aten.mm
// CHECK:           torch.aten.add.Tensor
// CHECK:         }) {kind = "matmul"}
// EXPLAIN-LABEL: func.func @no_fuse_summed_gemms_dependent
// EXPLAIN:         "consumer fusion.group: the intermediate is read by the second GEMM's 'torch.aten.add.Tensor' (a chain feeds it to the GEMM as its A only)"
func.func @no_fuse_summed_gemms_dependent(%x: !torch.vtensor<[3,20],f32>, %w1: !torch.vtensor<[20,20],f32>, %w2: !torch.vtensor<[20,20],f32>) -> !torch.vtensor<[3,20],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.mm %x, %w1 : !torch.vtensor<[3,20],f32>, !torch.vtensor<[20,20],f32> -> !torch.vtensor<[3,20],f32>
  %1 = torch.aten.mm %0, %w2 : !torch.vtensor<[3,20],f32>, !torch.vtensor<[20,20],f32> -> !torch.vtensor<[3,20],f32>
  %2 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[3,20],f32>, !torch.vtensor<[3,20],f32>, !torch.int -> !torch.vtensor<[3,20],f32>
  return %2 : !torch.vtensor<[3,20],f32>
}

// -----

// Back to back: the first GEMM's result, after its epilogue (bias, silu),
// is read only as the second's A and its rows (96 wide) fit on chip: one
// matmul-chain group; the second GEMM's epilogue is the bias and residual.

// CHECK-LABEL: func.func @fuse_chain_mlp_silu_residual
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2, %arg3, %arg4) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8,48],f32>, %[[W1:.+]]: !torch.vtensor<[96,48],f32>, %[[B1:.+]]: !torch.vtensor<[96],f32>, %[[W2:.+]]: !torch.vtensor<[48,96],f32>, %[[B2:.+]]: !torch.vtensor<[48],f32>):
// CHECK:           %[[H:.+]] = torch.aten.linear %[[X]], %[[W1]], %[[B1]]
// CHECK-NEXT:      %[[S:.+]] = torch.aten.silu %[[H]]
// CHECK:           %[[O:.+]] = torch.aten.linear %[[S]], %[[W2]], %[[B2]]
// CHECK:           %[[R:.+]] = torch.aten.add.Tensor %[[X]], %[[O]]
// CHECK-NEXT:      "fusion.yield"(%[[R]])
// CHECK-NEXT:    }) {kind = "matmul-chain"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_chain_mlp_silu_residual(%x: !torch.vtensor<[8,48],f32>, %w1: !torch.vtensor<[96,48],f32>, %b1: !torch.vtensor<[96],f32>, %w2: !torch.vtensor<[48,96],f32>, %b2: !torch.vtensor<[48],f32>) -> !torch.vtensor<[8,48],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.linear %x, %w1, %b1 : !torch.vtensor<[8,48],f32>, !torch.vtensor<[96,48],f32>, !torch.vtensor<[96],f32> -> !torch.vtensor<[8,96],f32>
  %1 = torch.aten.silu %0 : !torch.vtensor<[8,96],f32> -> !torch.vtensor<[8,96],f32>
  %2 = torch.aten.linear %1, %w2, %b2 : !torch.vtensor<[8,96],f32>, !torch.vtensor<[48,96],f32>, !torch.vtensor<[48],f32> -> !torch.vtensor<[8,48],f32>
  %3 = torch.aten.add.Tensor %x, %2, %int1 : !torch.vtensor<[8,48],f32>, !torch.vtensor<[8,48],f32>, !torch.int -> !torch.vtensor<[8,48],f32>
  return %3 : !torch.vtensor<[8,48],f32>
}

// -----

// Not chained: an f32 hidden of 130 is a block of 256 rows > 128, more than
// fits on chip beside the second accumulator. Two GEMM kernels.

// CHECK-LABEL: func.func @no_fuse_chain_hidden_too_large
// CHECK:         %[[G1:.+]] = "fusion.group"(%arg0, %arg1) ({
// CHECK:         }) {kind = "matmul"}
// CHECK:         %[[G2:.+]] = "fusion.group"(%[[G1]], %arg2) ({
// CHECK:         }) {kind = "matmul"}
// CHECK-NOT:     matmul-chain
// EXPLAIN-LABEL: func.func @no_fuse_chain_hidden_too_large
// EXPLAIN:         "consumer fusion.group: hidden size 130 (a block of 256) > 128 for float32 (its rows would not fit on chip)"
func.func @no_fuse_chain_hidden_too_large(%x: !torch.vtensor<[9,16],f32>, %w1: !torch.vtensor<[16,130],f32>, %w2: !torch.vtensor<[130,8],f32>) -> !torch.vtensor<[9,8],f32> {
  %0 = torch.aten.mm %x, %w1 : !torch.vtensor<[9,16],f32>, !torch.vtensor<[16,130],f32> -> !torch.vtensor<[9,130],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[9,130],f32> -> !torch.vtensor<[9,130],f32>
  %2 = torch.aten.mm %1, %w2 : !torch.vtensor<[9,130],f32>, !torch.vtensor<[130,8],f32> -> !torch.vtensor<[9,8],f32>
  return %2 : !torch.vtensor<[9,8],f32>
}

// -----

// Not chained: the hidden is returned too, so it must be written anyway.

// CHECK-LABEL: func.func @no_fuse_chain_hidden_returned
// CHECK:         %[[G1:.+]] = "fusion.group"(%arg0, %arg1) ({
// CHECK:         }) {kind = "matmul"}
// CHECK:         %[[G2:.+]] = "fusion.group"(%[[G1]], %arg2) ({
// CHECK:         }) {kind = "matmul"}
// CHECK:         return %[[G2]], %[[G1]]
// EXPLAIN-LABEL: func.func @no_fuse_chain_hidden_returned
// EXPLAIN:         "consumer fusion.group: the first GEMM's result is also read elsewhere (it must be written)"
func.func @no_fuse_chain_hidden_returned(%x: !torch.vtensor<[9,16],f32>, %w1: !torch.vtensor<[16,24],f32>, %w2: !torch.vtensor<[24,8],f32>) -> (!torch.vtensor<[9,8],f32>, !torch.vtensor<[9,24],f32>) {
  %0 = torch.aten.mm %x, %w1 : !torch.vtensor<[9,16],f32>, !torch.vtensor<[16,24],f32> -> !torch.vtensor<[9,24],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[9,24],f32> -> !torch.vtensor<[9,24],f32>
  %2 = torch.aten.mm %1, %w2 : !torch.vtensor<[9,24],f32>, !torch.vtensor<[24,8],f32> -> !torch.vtensor<[9,8],f32>
  return %2, %1 : !torch.vtensor<[9,8],f32>, !torch.vtensor<[9,24],f32>
}

// -----

// Not chained: the hidden is the second GEMM's B operand (its rows are the
// second GEMM's K, not its rows).

// CHECK-LABEL: func.func @no_fuse_chain_b_operand
// CHECK:         %[[G1:.+]] = "fusion.group"(%arg0, %arg1) ({
// CHECK:         }) {kind = "matmul"}
// CHECK:         %[[G2:.+]] = "fusion.group"(%arg2, %[[G1]]) ({
// CHECK:         }) {kind = "matmul"}
// EXPLAIN-LABEL: func.func @no_fuse_chain_b_operand
// EXPLAIN:         "consumer fusion.group: the intermediate is read by the second GEMM's B operand (a chain feeds it to the GEMM as its A only)"
func.func @no_fuse_chain_b_operand(%x: !torch.vtensor<[24,16],f32>, %w1: !torch.vtensor<[16,24],f32>, %w2: !torch.vtensor<[8,24],f32>) -> !torch.vtensor<[8,24],f32> {
  %0 = torch.aten.mm %x, %w1 : !torch.vtensor<[24,16],f32>, !torch.vtensor<[16,24],f32> -> !torch.vtensor<[24,24],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[24,24],f32> -> !torch.vtensor<[24,24],f32>
  %2 = torch.aten.mm %w2, %1 : !torch.vtensor<[8,24],f32>, !torch.vtensor<[24,24],f32> -> !torch.vtensor<[8,24],f32>
  return %2 : !torch.vtensor<[8,24],f32>
}

// -----

// Not chained: a GEMM over 2 x 9 rows feeds a batched one (batch 2, 9 rows):
// a chain's programs own rows of one batch index of both.

// CHECK-LABEL: func.func @no_fuse_chain_batch_dims_differ
// CHECK:         "fusion.group"(%arg0, %arg1) ({
// CHECK:         }) {kind = "matmul"}
// CHECK:         "fusion.group"({{.+}}, %arg2) ({
// CHECK:         }) {kind = "matmul"}
// EXPLAIN-LABEL: func.func @no_fuse_chain_batch_dims_differ
// EXPLAIN:         "consumer fusion.group: the GEMMs' batch dims differ (a chain's programs own rows of one batch index)"
func.func @no_fuse_chain_batch_dims_differ(%x: !torch.vtensor<[2,9,16],f32>, %w1: !torch.vtensor<[16,24],f32>, %w2: !torch.vtensor<[2,24,8],f32>) -> !torch.vtensor<[2,9,8],f32> {
  %0 = torch.aten.matmul %x, %w1 : !torch.vtensor<[2,9,16],f32>, !torch.vtensor<[16,24],f32> -> !torch.vtensor<[2,9,24],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[2,9,24],f32> -> !torch.vtensor<[2,9,24],f32>
  %2 = torch.aten.bmm %1, %w2 : !torch.vtensor<[2,9,24],f32>, !torch.vtensor<[2,24,8],f32> -> !torch.vtensor<[2,9,8],f32>
  return %2 : !torch.vtensor<[2,9,8],f32>
}

// -----

// K-split (issue 22): an LSTM's Linear over cat([x, h], -1). The cat runs
// along A's K dim, so it joins the GEMM group as a prologue and is never
// stored: the template reads x and h by a K loop each (Lowering/triton-matmul.mlir).

// CHECK-LABEL: func.func @fuse_ksplit_cat_of_inputs
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>, %[[H:.+]]: !torch.vtensor<[4,32],f32>, %[[W:.+]]: !torch.vtensor<[64,48],f32>):
// CHECK:           %[[L:.+]] = torch.prim.ListConstruct %[[X]], %[[H]]
// CHECK-NEXT:      %[[CAT:.+]] = torch.aten.cat %[[L]]
// CHECK:           %[[MM:.+]] = torch.aten.linear %[[CAT]], %[[W]]
// CHECK-NEXT:      %[[S:.+]] = torch.aten.sigmoid %[[MM]]
// CHECK-NEXT:      "fusion.yield"(%[[S]])
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_ksplit_cat_of_inputs(%x: !torch.vtensor<[4,16],f32>, %h: !torch.vtensor<[4,32],f32>, %w: !torch.vtensor<[64,48],f32>) -> !torch.vtensor<[4,64],f32> {
  %none = torch.constant.none
  %int-1 = torch.constant.int -1
  %0 = torch.prim.ListConstruct %x, %h : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,32],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %0, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,48],f32>
  %2 = torch.aten.linear %1, %w, %none : !torch.vtensor<[4,48],f32>, !torch.vtensor<[64,48],f32>, !torch.none -> !torch.vtensor<[4,64],f32>
  %3 = torch.aten.sigmoid %2 : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
  return %3 : !torch.vtensor<[4,64],f32>
}

// -----

// A computed piece: fusion-fuse-concat leaves the cat to this pass (no
// concat group), which takes it with the tanh computing its piece; the
// tanh is evaluated on h's tiles in the piece's K loop.

// CHECK-LABEL: func.func @fuse_ksplit_computed_piece
// CHECK:         %[[G:.+]] = "fusion.group"(%arg1, %arg0, %arg2) ({
// CHECK-NEXT:    ^bb0(%[[H:.+]]: !torch.vtensor<[4,32],f32>, %[[X:.+]]: !torch.vtensor<[4,16],f32>, %[[W:.+]]: !torch.vtensor<[64,48],f32>):
// CHECK-NEXT:      %[[T:.+]] = torch.aten.tanh %[[H]]
// CHECK:           %[[L:.+]] = torch.prim.ListConstruct %[[X]], %[[T]]
// CHECK-NEXT:      %[[CAT:.+]] = torch.aten.cat %[[L]]
// CHECK:           %[[MM:.+]] = torch.aten.linear %[[CAT]], %[[W]]
// CHECK-NEXT:      "fusion.yield"(%[[MM]])
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_ksplit_computed_piece(%x: !torch.vtensor<[4,16],f32>, %h: !torch.vtensor<[4,32],f32>, %w: !torch.vtensor<[64,48],f32>) -> !torch.vtensor<[4,64],f32> {
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %t = torch.aten.tanh %h : !torch.vtensor<[4,32],f32> -> !torch.vtensor<[4,32],f32>
  %0 = torch.prim.ListConstruct %x, %t : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,32],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %0, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,48],f32>
  %2 = torch.aten.linear %1, %w, %none : !torch.vtensor<[4,48],f32>, !torch.vtensor<[64,48],f32>, !torch.none -> !torch.vtensor<[4,64],f32>
  return %2 : !torch.vtensor<[4,64],f32>
}

// -----

// Limits of K-split, each a kernel of its own for the cat, with the reason:
// a cat along rows (the GEMM's M, not K), a cat also returned (stored for
// its other reader anyway), an op on the cat reading a value that varies
// along K.

// CHECK-LABEL: func.func @no_fuse_ksplit_cat_along_rows
// CHECK:         %[[C:.+]] = "fusion.group"(%arg0, %arg1) ({
// CHECK:           torch.aten.cat
// CHECK:         }) {kind = "pointwise"}
// CHECK:         "fusion.group"(%[[C]], %arg2) ({
// CHECK-NOT:       torch.aten.cat
// CHECK:         }) {kind = "matmul"}
// EXPLAIN-LABEL: func.func @no_fuse_ksplit_cat_along_rows
// EXPLAIN:         {fusion.explain = ["consumer fusion.group: cat along dim 0, not the GEMM operand's K dim (only a K dim is read by K-split)"], kind = "pointwise"}
func.func @no_fuse_ksplit_cat_along_rows(%x: !torch.vtensor<[4,48],f32>, %h: !torch.vtensor<[2,48],f32>, %w: !torch.vtensor<[64,48],f32>) -> !torch.vtensor<[6,64],f32> {
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %0 = torch.prim.ListConstruct %x, %h : (!torch.vtensor<[4,48],f32>, !torch.vtensor<[2,48],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %0, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[6,48],f32>
  %2 = torch.aten.linear %1, %w, %none : !torch.vtensor<[6,48],f32>, !torch.vtensor<[64,48],f32>, !torch.none -> !torch.vtensor<[6,64],f32>
  return %2 : !torch.vtensor<[6,64],f32>
}

// -----

// CHECK-LABEL: func.func @no_fuse_ksplit_cat_also_returned
// CHECK:         %[[C:.+]] = "fusion.group"(%arg0, %arg1) ({
// CHECK:           torch.aten.cat
// CHECK:         }) {kind = "pointwise"}
// CHECK:         %[[G:.+]] = "fusion.group"(%[[C]], %arg2) ({
// CHECK-NOT:       torch.aten.cat
// CHECK:         }) {kind = "matmul"}
// CHECK:         return %[[G]], %[[C]]
// EXPLAIN-LABEL: func.func @no_fuse_ksplit_cat_also_returned
// EXPLAIN:         {fusion.explain = ["consumer fusion.group: producer's result is also read elsewhere"], kind = "pointwise"}
func.func @no_fuse_ksplit_cat_also_returned(%x: !torch.vtensor<[4,16],f32>, %h: !torch.vtensor<[4,32],f32>, %w: !torch.vtensor<[64,48],f32>) -> (!torch.vtensor<[4,64],f32>, !torch.vtensor<[4,48],f32>) {
  %none = torch.constant.none
  %int-1 = torch.constant.int -1
  %0 = torch.prim.ListConstruct %x, %h : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,32],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %0, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,48],f32>
  %2 = torch.aten.linear %1, %w, %none : !torch.vtensor<[4,48],f32>, !torch.vtensor<[64,48],f32>, !torch.none -> !torch.vtensor<[4,64],f32>
  return %2, %1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,48],f32>
}

// -----

// An op on the cat reading a value that varies along K (`* y`, y [4, 48]):
// each piece's loop would need y at the cat's coordinates, not the piece's.

// CHECK-LABEL: func.func @no_fuse_ksplit_cat_times_a_full_width_value
// CHECK:         %[[C:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           torch.aten.cat
// CHECK:           torch.aten.mul.Tensor
// CHECK:         }) {kind = "pointwise"}
// CHECK:         "fusion.group"(%[[C]], %arg3) ({
// CHECK-NOT:       torch.aten.cat
// CHECK:         }) {kind = "matmul"}
// EXPLAIN-LABEL: func.func @no_fuse_ksplit_cat_times_a_full_width_value
// EXPLAIN:         {fusion.explain = ["consumer fusion.group: an op on the cat reads a value that varies along K (only values the same along K are read per piece)"], kind = "pointwise"}
func.func @no_fuse_ksplit_cat_times_a_full_width_value(%x: !torch.vtensor<[4,16],f32>, %h: !torch.vtensor<[4,32],f32>, %y: !torch.vtensor<[4,48],f32>, %w: !torch.vtensor<[64,48],f32>) -> !torch.vtensor<[4,64],f32> {
  %none = torch.constant.none
  %int-1 = torch.constant.int -1
  %0 = torch.prim.ListConstruct %x, %h : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,32],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %0, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,48],f32>
  %r = torch.aten.mul.Tensor %1, %y : !torch.vtensor<[4,48],f32>, !torch.vtensor<[4,48],f32> -> !torch.vtensor<[4,48],f32>
  %2 = torch.aten.linear %r, %w, %none : !torch.vtensor<[4,48],f32>, !torch.vtensor<[64,48],f32>, !torch.none -> !torch.vtensor<[4,64],f32>
  return %2 : !torch.vtensor<[4,64],f32>
}

// -----

// Elementwise ops on the cat whose other operands are the same along K (a
// relu, a scale per row, a cast) join with it: each piece's loop evaluates
// them on the piece in place of the cat.

// CHECK-LABEL: func.func @fuse_ksplit_ops_on_the_cat
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2, %arg3) ({
// CHECK:           %[[CAT:.+]] = torch.aten.cat
// CHECK-NEXT:      %[[R:.+]] = torch.aten.relu %[[CAT]]
// CHECK-NEXT:      %[[S:.+]] = torch.aten.mul.Tensor %[[R]]
// CHECK:           torch.aten.linear %[[S]]
// CHECK:         }) {kind = "matmul"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_ksplit_ops_on_the_cat(%x: !torch.vtensor<[4,16],f32>, %h: !torch.vtensor<[4,32],f32>, %s: !torch.vtensor<[4,1],f32>, %w: !torch.vtensor<[64,48],f32>) -> !torch.vtensor<[4,64],f32> {
  %none = torch.constant.none
  %int-1 = torch.constant.int -1
  %0 = torch.prim.ListConstruct %x, %h : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,32],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %0, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,48],f32>
  %r = torch.aten.relu %1 : !torch.vtensor<[4,48],f32> -> !torch.vtensor<[4,48],f32>
  %m = torch.aten.mul.Tensor %r, %s : !torch.vtensor<[4,48],f32>, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,48],f32>
  %2 = torch.aten.linear %m, %w, %none : !torch.vtensor<[4,48],f32>, !torch.vtensor<[64,48],f32>, !torch.none -> !torch.vtensor<[4,64],f32>
  return %2 : !torch.vtensor<[4,64],f32>
}

// -----

// One cat read by two GEMMs over different result shapes (two kernels):
// each GEMM group gets a copy of the cat (it computes nothing) and reads
// the pieces; no cat is stored.

// CHECK-LABEL: func.func @fuse_ksplit_cat_read_by_two_gemms
// CHECK:         %[[G1:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           torch.aten.cat
// CHECK:           torch.aten.linear
// CHECK:         }) {kind = "matmul"}
// CHECK:         %[[G2:.+]] = "fusion.group"(%arg0, %arg1, %arg3) ({
// CHECK:           torch.aten.cat
// CHECK:           torch.aten.linear
// CHECK:         }) {kind = "matmul"}
// CHECK-NEXT:    return %[[G1]], %[[G2]]
func.func @fuse_ksplit_cat_read_by_two_gemms(%x: !torch.vtensor<[4,16],f32>, %h: !torch.vtensor<[4,32],f32>, %w1: !torch.vtensor<[64,48],f32>, %w2: !torch.vtensor<[8,48],f32>) -> (!torch.vtensor<[4,64],f32>, !torch.vtensor<[4,8],f32>) {
  %none = torch.constant.none
  %int-1 = torch.constant.int -1
  %0 = torch.prim.ListConstruct %x, %h : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,32],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %0, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,48],f32>
  %2 = torch.aten.linear %1, %w1, %none : !torch.vtensor<[4,48],f32>, !torch.vtensor<[64,48],f32>, !torch.none -> !torch.vtensor<[4,64],f32>
  %3 = torch.aten.linear %1, %w2, %none : !torch.vtensor<[4,48],f32>, !torch.vtensor<[8,48],f32>, !torch.none -> !torch.vtensor<[4,8],f32>
  return %2, %3 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,8],f32>
}

// -----

// Convolutions are implicit-GEMM groups of kind "conv": the conv2d, its
// per-channel bias add (fusion-split-bias's view to [C, 1, 1]), a residual
// add and the relu are one group.

// CHECK-LABEL: func.func @fuse_conv2d_bias_residual_relu
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           %[[CONV:.+]] = torch.aten.conv2d
// CHECK:           %[[BIAS:.+]] = torch.aten.add.Tensor %[[CONV]]
// CHECK:           %[[RES:.+]] = torch.aten.add.Tensor %[[BIAS]], %arg
// CHECK-NEXT:      %[[RELU:.+]] = torch.aten.relu %[[RES]]
// CHECK-NEXT:      "fusion.yield"(%[[RELU]])
// CHECK-NEXT:    }) {kind = "conv"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_conv2d_bias_residual_relu(%x: !torch.vtensor<[2,4,6,6],f32>, %w: !torch.vtensor<[4,4,3,3],f32>, %b: !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,6,6],f32> {
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.conv2d %x, %w, %none, %0, %0, %0, %int1 : !torch.vtensor<[2,4,6,6],f32>, !torch.vtensor<[4,4,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,4,6,6],f32>
  %2 = torch.prim.ListConstruct %int4, %int1, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.view %b, %2 : !torch.vtensor<[4],f32>, !torch.list<int> -> !torch.vtensor<[4,1,1],f32>
  %4 = torch.aten.add.Tensor %1, %3, %int1 : !torch.vtensor<[2,4,6,6],f32>, !torch.vtensor<[4,1,1],f32>, !torch.int -> !torch.vtensor<[2,4,6,6],f32>
  %5 = torch.aten.add.Tensor %4, %x, %int1 : !torch.vtensor<[2,4,6,6],f32>, !torch.vtensor<[2,4,6,6],f32>, !torch.int -> !torch.vtensor<[2,4,6,6],f32>
  %6 = torch.aten.relu %5 : !torch.vtensor<[2,4,6,6],f32> -> !torch.vtensor<[2,4,6,6],f32>
  return %6 : !torch.vtensor<[2,4,6,6],f32>
}

// -----

// A pointwise op on the input is the conv's prologue (recomputed on each
// tile; the template zeroes it where the window is padding); a depthwise
// conv1d (groups = channels) is a conv group too.

// CHECK-LABEL: func.func @fuse_conv1d_depthwise_prologue
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1) ({
// CHECK:           %[[EXP:.+]] = torch.aten.exp %arg
// CHECK:           %[[CONV:.+]] = torch.aten.conv1d %[[EXP]]
// CHECK-NEXT:      "fusion.yield"(%[[CONV]])
// CHECK-NEXT:    }) {kind = "conv"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_conv1d_depthwise_prologue(%x: !torch.vtensor<[2,4,11],f32>, %w: !torch.vtensor<[4,1,3],f32>) -> !torch.vtensor<[2,4,6],f32> {
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %s = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.exp %x : !torch.vtensor<[2,4,11],f32> -> !torch.vtensor<[2,4,11],f32>
  %1 = torch.aten.conv1d %0, %w, %none, %s, %p, %p, %int4 : !torch.vtensor<[2,4,11],f32>, !torch.vtensor<[4,1,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,4,6],f32>
  return %1 : !torch.vtensor<[2,4,6],f32>
}

// -----

// A transposed convolution stays an ATen call (the template computes
// forward convolutions only): the relu after it is a pointwise group.

// CHECK-LABEL: func.func @no_fuse_transposed_conv
// CHECK:         %[[T:.+]] = torch.aten.conv_transpose2d.input %arg0, %arg1
// CHECK:         "fusion.group"(%[[T]])
// CHECK:         }) {kind = "pointwise"}
// EXPLAIN-LABEL: func.func @no_fuse_transposed_conv
// EXPLAIN:         fusion.explain = ["producer torch.aten.conv_transpose2d.input: not a convolution the template takes: a transposed convolution (the template computes forward convolutions only)"]
func.func @no_fuse_transposed_conv(%x: !torch.vtensor<[2,4,5,5],f32>, %w: !torch.vtensor<[4,3,3,3],f32>) -> !torch.vtensor<[2,3,11,11],f32> {
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %s = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv_transpose2d.input %x, %w, %none, %s, %p, %p, %int1, %d : !torch.vtensor<[2,4,5,5],f32>, !torch.vtensor<[4,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int, !torch.list<int> -> !torch.vtensor<[2,3,11,11],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[2,3,11,11],f32> -> !torch.vtensor<[2,3,11,11],f32>
  return %1 : !torch.vtensor<[2,3,11,11],f32>
}

// -----

// Two convolutions back to back are two conv groups (the second reads the
// first's result from memory); an f64 convolution stays an ATen call (the
// template takes f32, f16 and bf16).

// CHECK-LABEL: func.func @no_fuse_conv_into_conv_or_f64
// CHECK:         %[[A:.+]] = "fusion.group"(%arg0, %arg1)
// CHECK:         }) {kind = "conv"}
// CHECK:         %[[B:.+]] = "fusion.group"(%[[A]], %arg1)
// CHECK:         }) {kind = "conv"}
// CHECK:         torch.aten.conv2d %arg2, %arg3
// EXPLAIN-LABEL: func.func @no_fuse_conv_into_conv_or_f64
// EXPLAIN:         fusion.explain = ["consumer fusion.group: a convolution's kernel takes no other template (a GEMM, a convolution) as its prologue or epilogue"]
func.func @no_fuse_conv_into_conv_or_f64(%x: !torch.vtensor<[1,2,5,5],f32>, %w: !torch.vtensor<[2,2,3,3],f32>, %x64: !torch.vtensor<[1,2,5,5],f64>, %h: !torch.vtensor<[2,2,3,3],f64>) -> (!torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[1,2,5,5],f64>) {
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.conv2d %x, %w, %none, %0, %0, %0, %int1 : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[2,2,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,5,5],f32>
  %2 = torch.aten.conv2d %1, %w, %none, %0, %0, %0, %int1 : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[2,2,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,5,5],f32>
  %3 = torch.aten.conv2d %x64, %h, %none, %0, %0, %0, %int1 : !torch.vtensor<[1,2,5,5],f64>, !torch.vtensor<[2,2,3,3],f64>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,5,5],f64>
  return %2, %3 : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[1,2,5,5],f64>
}

// -----

// `?` rows (dynamic batch and sequence): the linear and its epilogue are one
// matmul group; M and the row sizes are the kernel's arguments per launch.

// CHECK-LABEL: func.func @fuse_linear_dynamic_rows
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           %[[MM:.+]] = torch.aten.linear
// CHECK:           %[[ADD:.+]] = torch.aten.add.Tensor %[[MM]]
// CHECK:           %[[RELU:.+]] = torch.aten.relu %[[ADD]]
// CHECK-NEXT:      "fusion.yield"(%[[RELU]])
// CHECK-NEXT:    }) {kind = "matmul"}
func.func @fuse_linear_dynamic_rows(%x: !torch.vtensor<[?,?,8],f32>, %w: !torch.vtensor<[16,8],f32>, %b: !torch.vtensor<[16],f32>) -> !torch.vtensor<[?,?,16],f32> {
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,?,8],f32>, !torch.vtensor<[16,8],f32>, !torch.none -> !torch.vtensor<[?,?,16],f32>
  %1 = torch.aten.add.Tensor %0, %b, %int1 : !torch.vtensor<[?,?,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[?,?,16],f32>
  %2 = torch.aten.relu %1 : !torch.vtensor<[?,?,16],f32> -> !torch.vtensor<[?,?,16],f32>
  return %2 : !torch.vtensor<[?,?,16],f32>
}

// -----

// The backward's bias gradient beside its weight gradient: the GEMM's
// kernel sums its A (g's transpose) over K as it loads it.

// CHECK-LABEL: func.func @fuse_bias_gradient_beside_weight_gradient
// CHECK:         %[[G:.+]]:2 = "fusion.group"(%arg0, %arg1) ({
// CHECK:           %[[MM:.+]] = torch.aten.mm
// CHECK:           %[[SUM:.+]] = torch.aten.sum.dim_IntList
// CHECK:           %[[V:.+]] = torch.aten.view %[[SUM]]
// CHECK:           "fusion.yield"(%[[V]], %[[MM]])
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK-NEXT:    return %[[G]]#1, %[[G]]#0
func.func @fuse_bias_gradient_beside_weight_gradient(%g: !torch.vtensor<[2,3,8],f32>, %x: !torch.vtensor<[6,5],f32>) -> (!torch.vtensor<[8,5],f32>, !torch.vtensor<[8],f32>) {
  %int6 = torch.constant.int 6
  %int8 = torch.constant.int 8
  %int0 = torch.constant.int 0
  %true = torch.constant.bool true
  %none = torch.constant.none
  %s0 = torch.prim.ListConstruct %int6, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %g, %s0 : !torch.vtensor<[2,3,8],f32>, !torch.list<int> -> !torch.vtensor<[6,8],f32>
  %1 = torch.aten.t %0 : !torch.vtensor<[6,8],f32> -> !torch.vtensor<[8,6],f32>
  %2 = torch.aten.mm %1, %x : !torch.vtensor<[8,6],f32>, !torch.vtensor<[6,5],f32> -> !torch.vtensor<[8,5],f32>
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.sum.dim_IntList %0, %dims, %true, %none : !torch.vtensor<[6,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,8],f32>
  %s1 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %4 = torch.aten.view %3, %s1 : !torch.vtensor<[1,8],f32>, !torch.list<int> -> !torch.vtensor<[8],f32>
  return %2, %4 : !torch.vtensor<[8,5],f32>, !torch.vtensor<[8],f32>
}

// -----

// The limit: a `?` K (or N, or a batched B) stays an ATen call; its relu is a pointwise group.

// CHECK-LABEL: func.func @dynamic_k_stays_aten
// CHECK:         torch.aten.mm
// CHECK:         kind = "pointwise"
// EXPLAIN-LABEL: func.func @dynamic_k_stays_aten
// EXPLAIN:       fusion.explain = ["producer torch.aten.mm: not a GEMM the template takes: a `?` size outside the rows of A and of the result (K, N, batch and B must be static)"]
func.func @dynamic_k_stays_aten(%a: !torch.vtensor<[4,?],f32>, %b: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %0 = torch.aten.mm %a, %b : !torch.vtensor<[4,?],f32>, !torch.vtensor<[?,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// The sum runs over A's rows (M), not its K: the GEMM's tiles do not hold
// whole rows of it, so it stays a reduction kernel of its own.

// CHECK-LABEL: func.func @no_fuse_sum_over_rows_of_a
// CHECK:         "fusion.group"
// CHECK:           torch.aten.mm
// CHECK:         }) {kind = "matmul"}
// CHECK:         "fusion.group"
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         }) {kind = "{{(persistent-)?}}reduction"}
func.func @no_fuse_sum_over_rows_of_a(%g: !torch.vtensor<[6,8],f32>, %x: !torch.vtensor<[6,5],f32>) -> (!torch.vtensor<[8,5],f32>, !torch.vtensor<[6],f32>) {
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %none = torch.constant.none
  %1 = torch.aten.t %g : !torch.vtensor<[6,8],f32> -> !torch.vtensor<[8,6],f32>
  %2 = torch.aten.mm %1, %x : !torch.vtensor<[8,6],f32>, !torch.vtensor<[6,5],f32> -> !torch.vtensor<[8,5],f32>
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.sum.dim_IntList %g, %dims, %false, %none : !torch.vtensor<[6,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[6],f32>
  return %2, %3 : !torch.vtensor<[8,5],f32>, !torch.vtensor<[6],f32>
}

// -----

// A sum of a value computed from A (g * 2), not of A as stored: the GEMM
// reads g, so the sum is no sum of its tiles.

// CHECK-LABEL: func.func @no_fuse_sum_of_a_computed_value
// CHECK:         }) {kind = "matmul"}
// CHECK:         "fusion.group"
// CHECK:           torch.aten.mul.Scalar
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         }) {kind = "{{(persistent-)?}}reduction"}
func.func @no_fuse_sum_of_a_computed_value(%g: !torch.vtensor<[6,8],f32>, %x: !torch.vtensor<[6,5],f32>) -> (!torch.vtensor<[8,5],f32>, !torch.vtensor<[8],f32>) {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %none = torch.constant.none
  %1 = torch.aten.t %g : !torch.vtensor<[6,8],f32> -> !torch.vtensor<[8,6],f32>
  %2 = torch.aten.mm %1, %x : !torch.vtensor<[8,6],f32>, !torch.vtensor<[6,5],f32> -> !torch.vtensor<[8,5],f32>
  %m = torch.aten.mul.Scalar %g, %int2 : !torch.vtensor<[6,8],f32>, !torch.int -> !torch.vtensor<[6,8],f32>
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.sum.dim_IntList %m, %dims, %false, %none : !torch.vtensor<[6,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8],f32>
  return %2, %3 : !torch.vtensor<[8,5],f32>, !torch.vtensor<[8],f32>
}

// -----

// A copy read through a reshape joins the pointwise group reading it
// (fusion-fuse-vertical evaluates it at the reshape's coordinates); GEMM
// tiles read inputs through strides only, so that group is no epilogue.

// CHECK-LABEL: func.func @no_fuse_epilogue_viewing_a_copy
// CHECK:         %[[MM:.+]] = "fusion.group"(%arg0, %arg1)
// CHECK:         }) {kind = "matmul"}
// CHECK-NEXT:    %[[E:.+]] = "fusion.group"(%arg2, %[[MM]])
// CHECK:           torch.aten.clone
// CHECK:           torch.aten._unsafe_view
// CHECK:           torch.aten.add.Tensor
// CHECK:         }) {kind = "pointwise"}
// EXPLAIN-LABEL: func.func @no_fuse_epilogue_viewing_a_copy
// EXPLAIN:       "consumer fusion.group: consumer views a computed value (read at the view's coordinates by pointwise kernels only)"
func.func @no_fuse_epilogue_viewing_a_copy(%a: !torch.vtensor<[6,8],f32>, %b: !torch.vtensor<[8,20],f32>, %x: !torch.vtensor<[2,4,3,5],f32>) -> !torch.vtensor<[6,20],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int6 = torch.constant.int 6
  %int20 = torch.constant.int 20
  %t = torch.aten.transpose.int %x, %int1, %int2 : !torch.vtensor<[2,4,3,5],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,3,4,5],f32>
  %c = torch.aten.clone %t, %int0 : !torch.vtensor<[2,3,4,5],f32>, !torch.int -> !torch.vtensor<[2,3,4,5],f32>
  %s = torch.prim.ListConstruct %int6, %int20 : (!torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten._unsafe_view %c, %s : !torch.vtensor<[2,3,4,5],f32>, !torch.list<int> -> !torch.vtensor<[6,20],f32>
  %m = torch.aten.mm %a, %b : !torch.vtensor<[6,8],f32>, !torch.vtensor<[8,20],f32> -> !torch.vtensor<[6,20],f32>
  %r = torch.aten.add.Tensor %m, %v, %int1 : !torch.vtensor<[6,20],f32>, !torch.vtensor<[6,20],f32>, !torch.int -> !torch.vtensor<[6,20],f32>
  return %r : !torch.vtensor<[6,20],f32>
}

// -----

// A GEMM reading a cat piece by piece (K-split) does not chain with the GEMM after
// it: the back-to-back template reads its operands whole (fuzz seed 2900238: the
// chain kernel failed to lower, "no Triton lowering for 'torch.aten.cat'").

// CHECK-LABEL: func.func @no_chain_over_a_ksplit_cat
// CHECK-NOT:     matmul-chain
// EXPLAIN-LABEL: func.func @no_chain_over_a_ksplit_cat
// EXPLAIN:       fusion.explain = ["consumer fusion.group: a GEMM reads a cat piece by piece (K-split: the back-to-back template reads its operands whole)"], kind = "matmul"
func.func @no_chain_over_a_ksplit_cat(%x: !torch.vtensor<[2,3],f32>, %y: !torch.vtensor<[2,2],f32>, %w1: !torch.vtensor<[5,6],f32>, %w2: !torch.vtensor<[6,4],f32>) -> !torch.vtensor<[2,4],f32> {
  %int1 = torch.constant.int 1
  %l = torch.prim.ListConstruct %x, %y : (!torch.vtensor<[2,3],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %c = torch.aten.cat %l, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,5],f32>
  %0 = torch.aten.mm %c, %w1 : !torch.vtensor<[2,5],f32>, !torch.vtensor<[5,6],f32> -> !torch.vtensor<[2,6],f32>
  %1 = torch.aten.mm %0, %w2 : !torch.vtensor<[2,6],f32>, !torch.vtensor<[6,4],f32> -> !torch.vtensor<[2,4],f32>
  return %1 : !torch.vtensor<[2,4],f32>
}

// -----

// A head split of a GEMM's result, as AOTAutograd saves q and k for the
// backward: view -> transpose (k: transposed again) -> expand -> clone ->
// _unsafe_view. Each element of the copy is one element of the tile: the
// GEMM stores it straight into the split layout, no copy kernel.

// CHECK-LABEL: func.func @fuse_epilogue_stores_head_split
// CHECK:         %[[G:.+]]:2 = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           torch.aten.matmul
// CHECK:           torch.aten.add.Tensor
// CHECK:           torch.aten.transpose.int
// CHECK:           torch.aten.clone
// CHECK:           torch.aten._unsafe_view
// CHECK:           "fusion.yield"
// CHECK-NEXT:    }) {kind = "matmul"}
// CHECK-NOT:     "fusion.group"
// CHECK:         return %[[G]]#{{[01]}}, %[[G]]#{{[01]}}
// EXPLAIN-LABEL: func.func @fuse_epilogue_stores_head_split
// EXPLAIN-NOT:   different iteration space
func.func @fuse_epilogue_stores_head_split(%x: !torch.vtensor<[2,4,8],f32>, %w: !torch.vtensor<[8,8],f32>, %b: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[4,4,4],f32>, !torch.vtensor<[4,4,4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %intm1 = torch.constant.int -1
  %intm2 = torch.constant.int -2
  %false = torch.constant.bool false
  %0 = torch.aten.matmul %x, %w : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[2,4,8],f32>
  %1 = torch.aten.add.Tensor %0, %b, %int1 : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[2,4,8],f32>
  %s4 = torch.prim.ListConstruct %int2, %int4, %int2, %int4 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.view %1, %s4 : !torch.vtensor<[2,4,8],f32>, !torch.list<int> -> !torch.vtensor<[2,4,2,4],f32>
  %3 = torch.aten.transpose.int %2, %int1, %int2 : !torch.vtensor<[2,4,2,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,2,4,4],f32>
  %e = torch.prim.ListConstruct %int2, %int2, %int4, %int4 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %4 = torch.aten.expand %3, %e, %false : !torch.vtensor<[2,2,4,4],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,2,4,4],f32>
  %5 = torch.aten.clone %4, %int0 : !torch.vtensor<[2,2,4,4],f32>, !torch.int -> !torch.vtensor<[2,2,4,4],f32>
  %s3 = torch.prim.ListConstruct %int4, %int4, %int4 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %6 = torch.aten._unsafe_view %5, %s3 : !torch.vtensor<[2,2,4,4],f32>, !torch.list<int> -> !torch.vtensor<[4,4,4],f32>
  %7 = torch.aten.transpose.int %3, %intm2, %intm1 : !torch.vtensor<[2,2,4,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,2,4,4],f32>
  %8 = torch.aten.clone %7, %int0 : !torch.vtensor<[2,2,4,4],f32>, !torch.int -> !torch.vtensor<[2,2,4,4],f32>
  %9 = torch.aten._unsafe_view %8, %s3 : !torch.vtensor<[2,2,4,4],f32>, !torch.list<int> -> !torch.vtensor<[4,4,4],f32>
  return %6, %9 : !torch.vtensor<[4,4,4],f32>, !torch.vtensor<[4,4,4],f32>
}

// -----

// Row prologue: an RMSNorm (f32 statistics, cast back, times its weight)
// read only by two linears sharing it as A: one grouped GEMM computes it,
// its mean in a loop over K before the GEMMs' (the normalized A is never
// stored).

// CHECK-LABEL: func.func @fuse_rmsnorm_row_prologue
// CHECK:         %[[G:.+]]:2 = "fusion.group"(%arg0, %arg1, %arg2, %arg3) ({
// CHECK:           torch.aten.pow.Tensor_Scalar
// CHECK:           torch.aten.mean.dim
// CHECK:           torch.aten.rsqrt
// CHECK:           torch.aten.linear
// CHECK:           torch.aten.linear
// CHECK:         }) {kind = "matmul"}
// CHECK-NOT:     "fusion.group"
func.func @fuse_rmsnorm_row_prologue(%x: !torch.vtensor<[2,8,16],bf16>, %g: !torch.vtensor<[16],bf16>, %wq: !torch.vtensor<[12,16],bf16>, %wk: !torch.vtensor<[12,16],bf16>) -> (!torch.vtensor<[2,8,12],bf16>, !torch.vtensor<[2,8,12],bf16>) {
  %int6 = torch.constant.int 6
  %int15 = torch.constant.int 15
  %int2 = torch.constant.int 2
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %eps = torch.constant.float 9.9999999999999995E-7
  %0 = torch.aten._to_copy %x, %int6, %none, %none, %none, %false, %none : !torch.vtensor<[2,8,16],bf16>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[2,8,16],f32>
  %1 = torch.aten.pow.Tensor_Scalar %0, %int2 : !torch.vtensor<[2,8,16],f32>, !torch.int -> !torch.vtensor<[2,8,16],f32>
  %dims = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %2 = torch.aten.mean.dim %1, %dims, %true, %none : !torch.vtensor<[2,8,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[2,8,1],f32>
  %3 = torch.aten.add.Scalar %2, %eps, %int1 : !torch.vtensor<[2,8,1],f32>, !torch.float, !torch.int -> !torch.vtensor<[2,8,1],f32>
  %4 = torch.aten.rsqrt %3 : !torch.vtensor<[2,8,1],f32> -> !torch.vtensor<[2,8,1],f32>
  %5 = torch.aten.mul.Tensor %0, %4 : !torch.vtensor<[2,8,16],f32>, !torch.vtensor<[2,8,1],f32> -> !torch.vtensor<[2,8,16],f32>
  %6 = torch.aten._to_copy %5, %int15, %none, %none, %none, %false, %none : !torch.vtensor<[2,8,16],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[2,8,16],bf16>
  %7 = torch.aten.mul.Tensor %g, %6 : !torch.vtensor<[16],bf16>, !torch.vtensor<[2,8,16],bf16> -> !torch.vtensor<[2,8,16],bf16>
  %8 = torch.aten.linear %7, %wq, %none : !torch.vtensor<[2,8,16],bf16>, !torch.vtensor<[12,16],bf16>, !torch.none -> !torch.vtensor<[2,8,12],bf16>
  %9 = torch.aten.linear %7, %wk, %none : !torch.vtensor<[2,8,16],bf16>, !torch.vtensor<[12,16],bf16>, !torch.none -> !torch.vtensor<[2,8,12],bf16>
  return %8, %9 : !torch.vtensor<[2,8,12],bf16>, !torch.vtensor<[2,8,12],bf16>
}

// -----

// The limits: a normalization also returned is stored by its own kernel
// (the GEMM reads it, nothing recomputes it); one over A's rows (M, not the
// GEMM's K) is no sum of A's tile rows.

// CHECK-LABEL: func.func @no_fuse_row_prologue_returned_or_over_m
// CHECK:         }) {kind = "{{(persistent-)?}}reduction"}
// CHECK:         }) {kind = "matmul"}
// CHECK:         }) {kind = "{{(persistent-)?}}reduction"}
// CHECK:         }) {kind = "matmul"}
// EXPLAIN-LABEL: func.func @no_fuse_row_prologue_returned_or_over_m
// EXPLAIN:       fusion.explain = ["consumer fusion.group: producer's result is also read elsewhere (a row prologue yields the GEMM's A only)"]
// EXPLAIN:       fusion.explain = ["consumer fusion.group: 'torch.aten.mean.dim' is not a sum or mean over A's rows with keepdim (the GEMM's K)"]
func.func @no_fuse_row_prologue_returned_or_over_m(%x: !torch.vtensor<[8,16],f32>, %w: !torch.vtensor<[12,16],f32>) -> (!torch.vtensor<[8,12],f32>, !torch.vtensor<[8,16],f32>, !torch.vtensor<[8,12],f32>) {
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %true = torch.constant.bool true
  %last = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.mean.dim %x, %last, %true, %none : !torch.vtensor<[8,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8,1],f32>
  %1 = torch.aten.sub.Tensor %x, %0, %int1 : !torch.vtensor<[8,16],f32>, !torch.vtensor<[8,1],f32>, !torch.int -> !torch.vtensor<[8,16],f32>
  %2 = torch.aten.linear %1, %w, %none : !torch.vtensor<[8,16],f32>, !torch.vtensor<[12,16],f32>, !torch.none -> !torch.vtensor<[8,12],f32>
  %first = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.mean.dim %x, %first, %true, %none : !torch.vtensor<[8,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,16],f32>
  %4 = torch.aten.sub.Tensor %x, %3, %int1 : !torch.vtensor<[8,16],f32>, !torch.vtensor<[1,16],f32>, !torch.int -> !torch.vtensor<[8,16],f32>
  %5 = torch.aten.linear %4, %w, %none : !torch.vtensor<[8,16],f32>, !torch.vtensor<[12,16],f32>, !torch.none -> !torch.vtensor<[8,12],f32>
  return %2, %1, %5 : !torch.vtensor<[8,12],f32>, !torch.vtensor<[8,16],f32>, !torch.vtensor<[8,12],f32>
}

// -----

// A pre-norm residual `h = x + o_proj(a)` read by the next norm and the
// next residual: the add is the first GEMM's epilogue (it stores h, o is
// never stored), the norm's group yields the normalized h alone, so it is
// the second GEMM's row prologue; the second residual is its epilogue.

// CHECK-LABEL: func.func @fuse_residual_epilogue_before_row_prologue
// CHECK:         %[[H:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           torch.aten.linear
// CHECK:           torch.aten.add.Tensor
// CHECK-NOT:       torch.aten.mean.dim
// CHECK:         }) {kind = "matmul"}
// CHECK-NEXT:    %[[OUT:.+]] = "fusion.group"(%[[H]], %arg3) ({
// CHECK:           torch.aten.mean.dim
// CHECK:           torch.aten.linear
// CHECK:           torch.aten.add.Tensor
// CHECK:         }) {kind = "matmul"}
// CHECK-NEXT:    return %[[OUT]]
func.func @fuse_residual_epilogue_before_row_prologue(%a: !torch.vtensor<[8,16],f32>, %w: !torch.vtensor<[16,16],f32>, %x: !torch.vtensor<[8,16],f32>, %w2: !torch.vtensor<[16,16],f32>) -> !torch.vtensor<[8,16],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %true = torch.constant.bool true
  %eps = torch.constant.float 9.9999999999999995E-7
  %0 = torch.aten.linear %a, %w, %none : !torch.vtensor<[8,16],f32>, !torch.vtensor<[16,16],f32>, !torch.none -> !torch.vtensor<[8,16],f32>
  %h = torch.aten.add.Tensor %x, %0, %int1 : !torch.vtensor<[8,16],f32>, !torch.vtensor<[8,16],f32>, !torch.int -> !torch.vtensor<[8,16],f32>
  %1 = torch.aten.pow.Tensor_Scalar %h, %int2 : !torch.vtensor<[8,16],f32>, !torch.int -> !torch.vtensor<[8,16],f32>
  %dims = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %2 = torch.aten.mean.dim %1, %dims, %true, %none : !torch.vtensor<[8,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8,1],f32>
  %3 = torch.aten.add.Scalar %2, %eps, %int1 : !torch.vtensor<[8,1],f32>, !torch.float, !torch.int -> !torch.vtensor<[8,1],f32>
  %4 = torch.aten.rsqrt %3 : !torch.vtensor<[8,1],f32> -> !torch.vtensor<[8,1],f32>
  %5 = torch.aten.mul.Tensor %h, %4 : !torch.vtensor<[8,16],f32>, !torch.vtensor<[8,1],f32> -> !torch.vtensor<[8,16],f32>
  %6 = torch.aten.linear %5, %w2, %none : !torch.vtensor<[8,16],f32>, !torch.vtensor<[16,16],f32>, !torch.none -> !torch.vtensor<[8,16],f32>
  %7 = torch.aten.add.Tensor %h, %6, %int1 : !torch.vtensor<[8,16],f32>, !torch.vtensor<[8,16],f32>, !torch.int -> !torch.vtensor<[8,16],f32>
  return %7 : !torch.vtensor<[8,16],f32>
}

// -----

// The pre-activation value saved for the backward as a [rows, N] view: a
// reshape of the tile, stored by the GEMM beside the activation.

// CHECK-LABEL: func.func @fuse_epilogue_stores_reshape_of_result
// CHECK:         %[[G:.+]]:2 = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           %[[ADD:.+]] = torch.aten.add.Tensor
// CHECK:           torch.aten.gelu %[[ADD]]
// CHECK:           torch.aten.view %[[ADD]]
// CHECK:         }) {kind = "matmul"}
// CHECK-NOT:     "fusion.group"
func.func @fuse_epilogue_stores_reshape_of_result(%x: !torch.vtensor<[2,4,8],f32>, %w: !torch.vtensor<[8,16],f32>, %b: !torch.vtensor<[16],f32>) -> (!torch.vtensor<[8,16],f32>, !torch.vtensor<[2,4,16],f32>) {
  %int1 = torch.constant.int 1
  %int8 = torch.constant.int 8
  %int16 = torch.constant.int 16
  %str = torch.constant.str "tanh"
  %0 = torch.aten.matmul %x, %w : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[8,16],f32> -> !torch.vtensor<[2,4,16],f32>
  %1 = torch.aten.add.Tensor %0, %b, %int1 : !torch.vtensor<[2,4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[2,4,16],f32>
  %2 = torch.aten.gelu %1, %str : !torch.vtensor<[2,4,16],f32>, !torch.str -> !torch.vtensor<[2,4,16],f32>
  %s = torch.prim.ListConstruct %int8, %int16 : (!torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.view %1, %s : !torch.vtensor<[2,4,16],f32>, !torch.list<int> -> !torch.vtensor<[8,16],f32>
  return %3, %2 : !torch.vtensor<[8,16],f32>, !torch.vtensor<[2,4,16],f32>
}

// -----

// Limit: a transposed copy regrouped into dims whose sizes do not divide
// the tile's ([6, 4] -> t -> [4, 6] -> [3, 8]) has no stride per dim of the
// tile: it stays a copy kernel after the GEMM.

// CHECK-LABEL: func.func @no_fuse_relayout_without_strides
// CHECK:         "fusion.group"
// CHECK:         }) {kind = "matmul"}
// CHECK-NEXT:    "fusion.group"
// CHECK:           torch.aten.clone
// CHECK:         }) {kind = "pointwise"}
// EXPLAIN-LABEL: func.func @no_fuse_relayout_without_strides
// EXPLAIN:       a reshape regroups dims whose sizes do not divide each other (no stride per dim)
func.func @no_fuse_relayout_without_strides(%a: !torch.vtensor<[6,5],f32>, %b: !torch.vtensor<[5,4],f32>) -> !torch.vtensor<[3,8],f32> {
  %int0 = torch.constant.int 0
  %int3 = torch.constant.int 3
  %int8 = torch.constant.int 8
  %0 = torch.aten.mm %a, %b : !torch.vtensor<[6,5],f32>, !torch.vtensor<[5,4],f32> -> !torch.vtensor<[6,4],f32>
  %1 = torch.aten.t %0 : !torch.vtensor<[6,4],f32> -> !torch.vtensor<[4,6],f32>
  %2 = torch.aten.clone %1, %int0 : !torch.vtensor<[4,6],f32>, !torch.int -> !torch.vtensor<[4,6],f32>
  %s = torch.prim.ListConstruct %int3, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.view %2, %s : !torch.vtensor<[4,6],f32>, !torch.list<int> -> !torch.vtensor<[3,8],f32>
  return %3 : !torch.vtensor<[3,8],f32>
}

// -----

// Limit: a transposed copy an op computes on is read at the view's
// coordinates, not stored: no epilogue (square, so the shapes agree).

// CHECK-LABEL: func.func @no_fuse_relayout_computed_on
// CHECK:         "fusion.group"
// CHECK:         }) {kind = "matmul"}
// CHECK-NEXT:    "fusion.group"
// CHECK:           torch.aten.clone
// CHECK:           torch.aten.add.Tensor
// CHECK:         }) {kind = "pointwise"}
// EXPLAIN-LABEL: func.func @no_fuse_relayout_computed_on
// EXPLAIN:       "consumer fusion.group: view of a computed value"
func.func @no_fuse_relayout_computed_on(%a: !torch.vtensor<[6,5],f32>, %b: !torch.vtensor<[5,6],f32>) -> !torch.vtensor<[6,6],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.mm %a, %b : !torch.vtensor<[6,5],f32>, !torch.vtensor<[5,6],f32> -> !torch.vtensor<[6,6],f32>
  %1 = torch.aten.t %0 : !torch.vtensor<[6,6],f32> -> !torch.vtensor<[6,6],f32>
  %2 = torch.aten.clone %1, %int0 : !torch.vtensor<[6,6],f32>, !torch.int -> !torch.vtensor<[6,6],f32>
  %3 = torch.aten.add.Tensor %2, %2, %int1 : !torch.vtensor<[6,6],f32>, !torch.vtensor<[6,6],f32>, !torch.int -> !torch.vtensor<[6,6],f32>
  return %3 : !torch.vtensor<[6,6],f32>
}

// -----

// The limit: a post-norm residual (BERT's `norm(x + dense(a))`), read by
// the norm alone, joins the norm's group as before: the GEMM stores o, the
// norm's kernel reads it with x; the norm's result is the output.

// CHECK-LABEL: func.func @no_residual_epilogue_read_by_the_norm_alone
// CHECK:         "fusion.group"
// CHECK:           torch.aten.linear
// CHECK-NOT:       torch.aten.add.Tensor
// CHECK:         }) {kind = "matmul"}
// CHECK-NEXT:    "fusion.group"
// CHECK:           torch.aten.add.Tensor
// CHECK:           torch.aten.mean.dim
// CHECK:         }) {kind = "{{(persistent-)?}}reduction"}
func.func @no_residual_epilogue_read_by_the_norm_alone(%a: !torch.vtensor<[8,16],f32>, %w: !torch.vtensor<[16,16],f32>, %x: !torch.vtensor<[8,16],f32>) -> !torch.vtensor<[8,16],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %true = torch.constant.bool true
  %eps = torch.constant.float 9.9999999999999995E-7
  %0 = torch.aten.linear %a, %w, %none : !torch.vtensor<[8,16],f32>, !torch.vtensor<[16,16],f32>, !torch.none -> !torch.vtensor<[8,16],f32>
  %h = torch.aten.add.Tensor %x, %0, %int1 : !torch.vtensor<[8,16],f32>, !torch.vtensor<[8,16],f32>, !torch.int -> !torch.vtensor<[8,16],f32>
  %1 = torch.aten.pow.Tensor_Scalar %h, %int2 : !torch.vtensor<[8,16],f32>, !torch.int -> !torch.vtensor<[8,16],f32>
  %dims = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %2 = torch.aten.mean.dim %1, %dims, %true, %none : !torch.vtensor<[8,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8,1],f32>
  %3 = torch.aten.add.Scalar %2, %eps, %int1 : !torch.vtensor<[8,1],f32>, !torch.float, !torch.int -> !torch.vtensor<[8,1],f32>
  %4 = torch.aten.rsqrt %3 : !torch.vtensor<[8,1],f32> -> !torch.vtensor<[8,1],f32>
  %5 = torch.aten.mul.Tensor %h, %4 : !torch.vtensor<[8,16],f32>, !torch.vtensor<[8,1],f32> -> !torch.vtensor<[8,16],f32>
  return %5 : !torch.vtensor<[8,16],f32>
}
