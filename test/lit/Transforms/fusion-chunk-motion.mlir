// RUN: mlirfuse-opt %s --split-input-file --fusion-chunk-motion | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-chunk-motion, fusion-fuse-elementwise)' | filecheck %s --check-prefix=FUSE
// RUN: mlirfuse-opt %s --split-input-file --fusion-chunk-motion='matmul-slices=false' | filecheck %s --check-prefix=ATEN

// The LSTM gates: (a + b).chunk(2) feeding elementwise math. The split
// becomes slices, and the slices move above the add onto a and b, so the
// adds and the chunk math fuse into one group that reads a and b through
// slices (index arithmetic, no copies).

// CHECK-LABEL: func.func @fuse_chunked_gates
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[1,8],f32>, %[[B:.+]]: !torch.vtensor<[1,8],f32>)
// CHECK-NOT:     torch.aten.split.Tensor
// CHECK-NOT:     torch.prim.ListUnpack
// CHECK-DAG:     %[[A0:.+]] = torch.aten.slice.Tensor %[[A]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : !torch.vtensor<[1,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4],f32>
// CHECK-DAG:     %[[B0:.+]] = torch.aten.slice.Tensor %[[B]], {{.*}} -> !torch.vtensor<[1,4],f32>
// CHECK:         torch.aten.add.Tensor %[[A0]], %[[B0]], %{{.+}} : !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32>, !torch.int -> !torch.vtensor<[1,4],f32>
// CHECK-NOT:     torch.aten.add.Tensor %{{.+}}, %{{.+}}, %{{.+}} : !torch.vtensor<[1,8],f32>
// FUSE-LABEL:  func.func @fuse_chunked_gates
// FUSE-NEXT:     %[[G:.+]] = "fusion.group"({{.*}}) ({
// FUSE-DAG:        torch.aten.slice.Tensor
// FUSE-DAG:        torch.aten.sigmoid
// FUSE-DAG:        torch.aten.tanh
// FUSE:            torch.aten.mul.Tensor
// FUSE:          }) {kind = "pointwise"}
// FUSE-NEXT:     return %[[G]]
func.func @fuse_chunked_gates(%a: !torch.vtensor<[1,8],f32>, %b: !torch.vtensor<[1,8],f32>) -> !torch.vtensor<[1,4],f32> {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[1,8],f32>, !torch.vtensor<[1,8],f32>, !torch.int -> !torch.vtensor<[1,8],f32>
  %1 = torch.aten.split.Tensor %0, %int4, %int1 : !torch.vtensor<[1,8],f32>, !torch.int, !torch.int -> !torch.list<vtensor>
  %2:2 = torch.prim.ListUnpack %1 : !torch.list<vtensor> -> !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32>
  %3 = torch.aten.sigmoid %2#0 : !torch.vtensor<[1,4],f32> -> !torch.vtensor<[1,4],f32>
  %4 = torch.aten.tanh %2#1 : !torch.vtensor<[1,4],f32> -> !torch.vtensor<[1,4],f32>
  %5 = torch.aten.mul.Tensor %3, %4 : !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32> -> !torch.vtensor<[1,4],f32>
  return %5 : !torch.vtensor<[1,4],f32>
}

// -----

// The slices a rewrite builds share their int constants, and reuse those of
// the slice they replace: one constant per value, not four per slice (an
// unrolled LSTM's chunks made ~45k constants that every later pass walked).

// CHECK-LABEL: func.func @fuse_chunk_pieces_share_constants
// CHECK:         torch.aten.slice.Tensor %arg0, %[[D:[a-z0-9_]+]], %[[S:[a-z0-9_]+]], %[[E:[a-z0-9_]+]], %[[D]] :
// CHECK-NEXT:    torch.aten.slice.Tensor %arg1, %[[D]], %[[S]], %[[E]], %[[D]] :
// CHECK:         torch.aten.slice.Tensor %arg0, %[[D]], %[[E]], %[[END:[a-z0-9_]+]], %[[D]] :
// CHECK-NEXT:    torch.aten.slice.Tensor %arg1, %[[D]], %[[E]], %[[END]], %[[D]] :
func.func @fuse_chunk_pieces_share_constants(%a: !torch.vtensor<[1,8],f32>, %b: !torch.vtensor<[1,8],f32>) -> !torch.vtensor<[1,4],f32> {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[1,8],f32>, !torch.vtensor<[1,8],f32>, !torch.int -> !torch.vtensor<[1,8],f32>
  %1 = torch.aten.split.Tensor %0, %int4, %int1 : !torch.vtensor<[1,8],f32>, !torch.int, !torch.int -> !torch.list<vtensor>
  %2:2 = torch.prim.ListUnpack %1 : !torch.list<vtensor> -> !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32>
  %3 = torch.aten.mul.Tensor %2#0, %2#1 : !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32> -> !torch.vtensor<[1,4],f32>
  return %3 : !torch.vtensor<[1,4],f32>
}

// -----

// A [8] bias broadcast into [1,8] is sliced along its own (only) dim.

// CHECK-LABEL: func.func @fuse_chunk_broadcast_bias
// CHECK:         torch.aten.slice.Tensor %arg1, {{.*}} : !torch.vtensor<[8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
func.func @fuse_chunk_broadcast_bias(%a: !torch.vtensor<[1,8],f32>, %bias: !torch.vtensor<[8],f32>) -> !torch.vtensor<[1,4],f32> {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.aten.add.Tensor %a, %bias, %int1 : !torch.vtensor<[1,8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[1,8],f32>
  %1 = torch.aten.split.Tensor %0, %int4, %int1 : !torch.vtensor<[1,8],f32>, !torch.int, !torch.int -> !torch.list<vtensor>
  %2:2 = torch.prim.ListUnpack %1 : !torch.list<vtensor> -> !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32>
  %3 = torch.aten.mul.Tensor %2#0, %2#1 : !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32> -> !torch.vtensor<[1,4],f32>
  return %3 : !torch.vtensor<[1,4],f32>
}

// -----

// The add is also returned whole: its result is not only sliced, so it stays
// and the slices stay below it (the slices still replace the split).

// CHECK-LABEL: func.func @no_move_result_used_whole
// CHECK:         %[[ADD:.+]] = torch.aten.add.Tensor %arg0, %arg1
// CHECK:         torch.aten.slice.Tensor %[[ADD]]
// CHECK:         torch.aten.slice.Tensor %[[ADD]]
func.func @no_move_result_used_whole(%a: !torch.vtensor<[1,8],f32>, %b: !torch.vtensor<[1,8],f32>) -> (!torch.vtensor<[1,8],f32>, !torch.vtensor<[1,4],f32>) {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[1,8],f32>, !torch.vtensor<[1,8],f32>, !torch.int -> !torch.vtensor<[1,8],f32>
  %1 = torch.aten.split.Tensor %0, %int4, %int1 : !torch.vtensor<[1,8],f32>, !torch.int, !torch.int -> !torch.list<vtensor>
  %2:2 = torch.prim.ListUnpack %1 : !torch.list<vtensor> -> !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32>
  %3 = torch.aten.mul.Tensor %2#0, %2#1 : !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32> -> !torch.vtensor<[1,4],f32>
  return %0, %3 : !torch.vtensor<[1,8],f32>, !torch.vtensor<[1,4],f32>
}

// -----

// A split of a GEMM's columns moves onto the weight (matmul-slices): each
// piece is a GEMM of its own over a slice of %w, read by strides, which
// fusion-fuse-matmul groups into one kernel with the mul as its epilogue.
// With matmul-slices=false (mlirfuse.compile(matmul="aten")) the slices
// stay on the product and the group reads through them.

// CHECK-LABEL: func.func @fuse_slice_through_matmul
// CHECK-NOT:     torch.aten.mm %{{.+}}, %{{.+}} : {{.*}} -> !torch.vtensor<[1,8],f32>
// CHECK-DAG:     %[[W0:.+]] = torch.aten.slice.Tensor %arg1, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : !torch.vtensor<[8,8],f32>, {{.*}} -> !torch.vtensor<[8,4],f32>
// CHECK-DAG:     %[[W1:.+]] = torch.aten.slice.Tensor %arg1, {{.*}} -> !torch.vtensor<[8,4],f32>
// CHECK-DAG:     torch.aten.mm %arg0, %[[W0]] : !torch.vtensor<[1,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[1,4],f32>
// CHECK-DAG:     torch.aten.mm %arg0, %[[W1]] : !torch.vtensor<[1,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[1,4],f32>
// ATEN-LABEL:  func.func @fuse_slice_through_matmul
// ATEN:          %[[MM:.+]] = torch.aten.mm %arg0, %arg1 : {{.*}} -> !torch.vtensor<[1,8],f32>
// ATEN-DAG:      torch.aten.slice.Tensor %[[MM]]
// ATEN-DAG:      torch.aten.slice.Tensor %[[MM]]
func.func @fuse_slice_through_matmul(%a: !torch.vtensor<[1,8],f32>, %w: !torch.vtensor<[8,8],f32>) -> !torch.vtensor<[1,4],f32> {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.aten.mm %a, %w : !torch.vtensor<[1,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[1,8],f32>
  %1 = torch.aten.split.Tensor %0, %int4, %int1 : !torch.vtensor<[1,8],f32>, !torch.int, !torch.int -> !torch.list<vtensor>
  %2:2 = torch.prim.ListUnpack %1 : !torch.list<vtensor> -> !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32>
  %3 = torch.aten.mul.Tensor %2#0, %2#1 : !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32> -> !torch.vtensor<[1,4],f32>
  return %3 : !torch.vtensor<[1,4],f32>
}

// -----

// linear: the [N, K] weight is sliced along dim 0 and its bias along its
// only dim, every 2nd column (step 2) too.

// CHECK-LABEL: func.func @fuse_slice_through_linear_with_bias
// CHECK-DAG:     %[[W:.+]] = torch.aten.slice.Tensor %arg1, {{.*}} : !torch.vtensor<[6,8],f32>, {{.*}} -> !torch.vtensor<[3,8],f32>
// CHECK-DAG:     %[[B:.+]] = torch.aten.slice.Tensor %arg2, {{.*}} : !torch.vtensor<[6],f32>, {{.*}} -> !torch.vtensor<[3],f32>
// CHECK:         %[[L:.+]] = torch.aten.linear %arg0, %[[W]], %[[B]] : {{.*}} -> !torch.vtensor<[2,3],f32>
// CHECK-NEXT:    return %[[L]]
func.func @fuse_slice_through_linear_with_bias(%x: !torch.vtensor<[2,8],f32>, %w: !torch.vtensor<[6,8],f32>, %b: !torch.vtensor<[6],f32>) -> !torch.vtensor<[2,3],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int6 = torch.constant.int 6
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[2,8],f32>, !torch.vtensor<[6,8],f32>, !torch.vtensor<[6],f32> -> !torch.vtensor<[2,6],f32>
  %1 = torch.aten.slice.Tensor %0, %int1, %int0, %int6, %int2 : !torch.vtensor<[2,6],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  return %1 : !torch.vtensor<[2,3],f32>
}

// -----

// An LSTM's gates: the pieces move through the add and both GEMMs, onto the
// weights and the bias (an addmm's B is sliced before its bias); no piece of
// a computed value is left (the pass builds each GEMM in place of the piece
// of the add's operand it would otherwise slice, then move).

// CHECK-LABEL: func.func @fuse_chunk_through_gemm_sum
// CHECK-NOT:     torch.aten.slice.Tensor %{{[0-9]+}},
// CHECK:         %[[W0:.+]] = torch.aten.slice.Tensor %arg2, {{.*}} -> !torch.vtensor<[8,4],f32>
// CHECK-NEXT:    %[[B0:.+]] = torch.aten.slice.Tensor %arg4, {{.*}} -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    %[[X0:.+]] = torch.aten.addmm %[[B0]], %arg0, %[[W0]], {{.*}} -> !torch.vtensor<[1,4],f32>
// CHECK-NEXT:    %[[U0:.+]] = torch.aten.slice.Tensor %arg3, {{.*}} -> !torch.vtensor<[8,4],f32>
// CHECK-NEXT:    %[[H0:.+]] = torch.aten.mm %arg1, %[[U0]] : {{.*}} -> !torch.vtensor<[1,4],f32>
// CHECK-NEXT:    %[[G0:.+]] = torch.aten.add.Tensor %[[X0]], %[[H0]], {{.*}} -> !torch.vtensor<[1,4],f32>
// CHECK-NOT:     torch.aten.slice.Tensor %{{[0-9]+}},
// CHECK:         %[[G1:.+]] = torch.aten.add.Tensor {{.*}} -> !torch.vtensor<[1,4],f32>
// CHECK-NEXT:    torch.aten.mul.Tensor %[[G0]], %[[G1]]
func.func @fuse_chunk_through_gemm_sum(%x: !torch.vtensor<[1,8],f32>, %h: !torch.vtensor<[1,8],f32>, %w: !torch.vtensor<[8,8],f32>, %u: !torch.vtensor<[8,8],f32>, %b: !torch.vtensor<[8],f32>) -> !torch.vtensor<[1,4],f32> {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.aten.addmm %b, %x, %w, %int1, %int1 : !torch.vtensor<[8],f32>, !torch.vtensor<[1,8],f32>, !torch.vtensor<[8,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,8],f32>
  %1 = torch.aten.mm %h, %u : !torch.vtensor<[1,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[1,8],f32>
  %2 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[1,8],f32>, !torch.vtensor<[1,8],f32>, !torch.int -> !torch.vtensor<[1,8],f32>
  %3 = torch.aten.split.Tensor %2, %int4, %int1 : !torch.vtensor<[1,8],f32>, !torch.int, !torch.int -> !torch.list<vtensor>
  %4:2 = torch.prim.ListUnpack %3 : !torch.list<vtensor> -> !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32>
  %5 = torch.aten.mul.Tensor %4#0, %4#1 : !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4],f32> -> !torch.vtensor<[1,4],f32>
  return %5 : !torch.vtensor<[1,4],f32>
}

// -----

// Not moved: a product also used whole, a slice of rows (not columns), and
// a batched product (batched GEMMs are never grouped: a launch per piece).

// CHECK-LABEL: func.func @no_move_matmul_whole_rows_or_batched
// CHECK-DAG:     %[[MM:.+]] = torch.aten.mm %arg0, %arg1 : {{.*}} -> !torch.vtensor<[4,8],f32>
// CHECK-DAG:     torch.aten.slice.Tensor %[[MM]]
// CHECK-DAG:     %[[MM2:.+]] = torch.aten.mm %arg0, %arg2 : {{.*}} -> !torch.vtensor<[4,8],f32>
// CHECK-DAG:     torch.aten.slice.Tensor %[[MM2]], %int0
// CHECK-DAG:     %[[BMM:.+]] = torch.aten.bmm %arg3, %arg4 : {{.*}} -> !torch.vtensor<[2,4,8],f32>
// CHECK-DAG:     torch.aten.slice.Tensor %[[BMM]]
func.func @no_move_matmul_whole_rows_or_batched(%a: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[8,8],f32>, %w2: !torch.vtensor<[8,8],f32>, %ba: !torch.vtensor<[2,4,8],f32>, %bw: !torch.vtensor<[2,8,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,4],f32>, !torch.vtensor<[2,8],f32>, !torch.vtensor<[2,4,4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %0 = torch.aten.mm %a, %w : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.slice.Tensor %0, %int1, %int0, %int4, %int1 : !torch.vtensor<[4,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,4],f32>
  %2 = torch.aten.mm %a, %w2 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[4,8],f32>
  %3 = torch.aten.slice.Tensor %2, %int0, %int0, %int2, %int1 : !torch.vtensor<[4,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,8],f32>
  %4 = torch.aten.bmm %ba, %bw : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[2,8,8],f32> -> !torch.vtensor<[2,4,8],f32>
  %5 = torch.aten.slice.Tensor %4, %int2, %int0, %int4, %int1 : !torch.vtensor<[2,4,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4,4],f32>
  return %0, %1, %3, %5 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,4],f32>, !torch.vtensor<[2,8],f32>, !torch.vtensor<[2,4,4],f32>
}

// -----

// A reshape of a computed value sinks below elementwise ops whose other
// operands are single elements: silu and the scale run in the [2,8] shape,
// the reshape moves to the end (where a group stores it for free).

// CHECK-LABEL: func.func @reshape_below_elementwise
// CHECK:         %[[E:.+]] = torch.aten.exp %arg0 : !torch.vtensor<[2,8],f32>
// CHECK:         %[[S:.+]] = torch.aten.silu %[[E]] : !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
// CHECK:         %[[M:.+]] = torch.aten.mul.Tensor %[[S]], %[[S]] : !torch.vtensor<[2,8],f32>, !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
// CHECK:         %[[K:.+]] = torch.aten.mul.Tensor %[[M]], %arg1 : !torch.vtensor<[2,8],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[2,8],f32>
// CHECK:         %[[V:.+]] = torch.aten.view %[[K]], %{{.+}} -> !torch.vtensor<[2,2,4],f32>
// CHECK-NEXT:    return %[[V]]
func.func @reshape_below_elementwise(%a: !torch.vtensor<[2,8],f32>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[2,2,4],f32> {
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %0 = torch.aten.exp %a : !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
  %l = torch.prim.ListConstruct %int2, %int2, %int4 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[2,8],f32>, !torch.list<int> -> !torch.vtensor<[2,2,4],f32>
  %2 = torch.aten.silu %1 : !torch.vtensor<[2,2,4],f32> -> !torch.vtensor<[2,2,4],f32>
  %3 = torch.aten.mul.Tensor %2, %2 : !torch.vtensor<[2,2,4],f32>, !torch.vtensor<[2,2,4],f32> -> !torch.vtensor<[2,2,4],f32>
  %4 = torch.aten.mul.Tensor %3, %s : !torch.vtensor<[2,2,4],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[2,2,4],f32>
  return %4 : !torch.vtensor<[2,2,4],f32>
}

// -----

// Stays: a view of an input (a group reads it in place), and a reshape
// meeting a full-sized operand.

// CHECK-LABEL: func.func @no_reshape_motion
// CHECK:         %[[V:.+]] = torch.aten.view %arg0
// CHECK-NEXT:    torch.aten.silu %[[V]]
// CHECK:         %[[W:.+]] = torch.aten.view %{{.+}} -> !torch.vtensor<[2,2,4],f32>
// CHECK-NEXT:    torch.aten.add.Tensor %[[W]], %arg1
func.func @no_reshape_motion(%a: !torch.vtensor<[2,8],f32>, %b: !torch.vtensor<[2,2,4],f32>) -> (!torch.vtensor<[2,2,4],f32>, !torch.vtensor<[2,2,4],f32>) {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %l = torch.prim.ListConstruct %int2, %int2, %int4 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %a, %l : !torch.vtensor<[2,8],f32>, !torch.list<int> -> !torch.vtensor<[2,2,4],f32>
  %1 = torch.aten.silu %0 : !torch.vtensor<[2,2,4],f32> -> !torch.vtensor<[2,2,4],f32>
  %2 = torch.aten.exp %a : !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
  %3 = torch.aten.view %2, %l : !torch.vtensor<[2,8],f32>, !torch.list<int> -> !torch.vtensor<[2,2,4],f32>
  %4 = torch.aten.add.Tensor %3, %b, %int1 : !torch.vtensor<[2,2,4],f32>, !torch.vtensor<[2,2,4],f32>, !torch.int -> !torch.vtensor<[2,2,4],f32>
  return %1, %4 : !torch.vtensor<[2,2,4],f32>, !torch.vtensor<[2,2,4],f32>
}

// -----

// unbind becomes one select per piece, split_with_sizes one slice per piece;
// both move above the add they cut (a select of a size-1 operand takes its
// only element), so each piece's math reads the inputs directly: one group
// for the unbind pieces, one per split piece (different shapes).

// CHECK-LABEL: func.func @unbind_and_split_with_sizes
// CHECK-NOT:     torch.aten.unbind
// CHECK-NOT:     torch.aten.split_with_sizes
// CHECK-DAG:     %[[A0:.+]] = torch.aten.select.int %arg0, %{{.+}}, %{{.+}} : !torch.vtensor<[8,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[8],f32>
// CHECK-DAG:     %[[B0:.+]] = torch.aten.select.int %arg1, %{{.+}}, %{{.+}} : !torch.vtensor<[1,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[1],f32>
// CHECK:         torch.aten.add.Tensor %[[A0]], %[[B0]]
// CHECK:         %[[S1:.+]] = torch.aten.slice.Tensor %arg0, %{{.+}} -> !torch.vtensor<[5,2],f32>
// CHECK:         torch.aten.tanh %[[S1]]
// FUSE-LABEL:  func.func @unbind_and_split_with_sizes
// FUSE:          "fusion.group"(%arg1, %arg0) ({
// FUSE-COUNT-2:    torch.aten.sigmoid
// FUSE:          "fusion.yield"
// FUSE-COUNT-2:  "fusion.group"(%arg0)
// FUSE-NOT:      "fusion.group"
func.func @unbind_and_split_with_sizes(%a: !torch.vtensor<[8,2],f32>, %b: !torch.vtensor<[1,2],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[3,2],f32>, !torch.vtensor<[5,2],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int5 = torch.constant.int 5
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[8,2],f32>, !torch.vtensor<[1,2],f32>, !torch.int -> !torch.vtensor<[8,2],f32>
  %1 = torch.aten.unbind.int %0, %int1 : !torch.vtensor<[8,2],f32>, !torch.int -> !torch.list<vtensor>
  %2:2 = torch.prim.ListUnpack %1 : !torch.list<vtensor> -> !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
  %3 = torch.aten.sigmoid %2#0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %4 = torch.aten.sigmoid %2#1 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %sizes = torch.prim.ListConstruct %int3, %int5 : (!torch.int, !torch.int) -> !torch.list<int>
  %5 = torch.aten.split_with_sizes %a, %sizes, %int0 : !torch.vtensor<[8,2],f32>, !torch.list<int>, !torch.int -> !torch.list<vtensor>
  %6:2 = torch.prim.ListUnpack %5 : !torch.list<vtensor> -> !torch.vtensor<[3,2],f32>, !torch.vtensor<[5,2],f32>
  %7 = torch.aten.tanh %6#0 : !torch.vtensor<[3,2],f32> -> !torch.vtensor<[3,2],f32>
  %8 = torch.aten.tanh %6#1 : !torch.vtensor<[5,2],f32> -> !torch.vtensor<[5,2],f32>
  return %3, %4, %7, %8 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[3,2],f32>, !torch.vtensor<[5,2],f32>
}
