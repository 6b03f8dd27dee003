// RUN: mlirfuse-opt %s --split-input-file --fusion-keepdim-rows | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-keepdim-rows, fusion-fuse-elementwise)' | filecheck %s --check-prefix=FUSE

// A training batch norm's running mean, as AOTAutograd hands it over:
// `0.1 * squeeze(mean) + 0.9 * running_mean` on [C]. Computed on the
// keepdim mean ([1,C,1,1]) with the running mean viewed to match, it is a
// row-space epilogue of the reduction: one group, storing the normalized
// value and the new running mean (a view of its [1,C,1,1] result).

// CHECK-LABEL: func.func @fuse_running_mean_in_keepdim_shape
// CHECK-SAME:    (%[[X:[^:]+]]: !torch.vtensor<[2,4,3,3],f32>, %[[RM:[^:]+]]: !torch.vtensor<[4],f32>)
// CHECK:         %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], {{.+}} -> !torch.vtensor<[1,4,1,1],f32>
// CHECK-NOT:     torch.aten.squeeze.dim
// CHECK:         %[[NEW:.+]] = torch.aten.mul.Scalar %[[MEAN]], {{.+}} -> !torch.vtensor<[1,4,1,1],f32>
// CHECK:         %[[RMV:.+]] = torch.aten.view %[[RM]], {{.+}} -> !torch.vtensor<[1,4,1,1],f32>
// CHECK:         %[[OLD:.+]] = torch.aten.mul.Scalar %[[RMV]], {{.+}} -> !torch.vtensor<[1,4,1,1],f32>
// CHECK:         %[[SUM:.+]] = torch.aten.add.Tensor %[[NEW]], %[[OLD]], {{.+}} -> !torch.vtensor<[1,4,1,1],f32>
// CHECK:         %[[OUT:.+]] = torch.aten.view %[[SUM]], {{.+}} -> !torch.vtensor<[4],f32>
// CHECK-NOT:     torch.aten.squeeze.dim
// CHECK:         return %{{.+}}, %[[OUT]]

// FUSE-LABEL: func.func @fuse_running_mean_in_keepdim_shape
// FUSE:         %[[G:.+]]:2 = "fusion.group"(%arg1, %arg0) ({
// FUSE:           torch.aten.mean.dim
// FUSE:           torch.aten.add.Tensor {{.+}} -> !torch.vtensor<[1,4,1,1],f32>
// FUSE:         }) {kind = "persistent-reduction"}
// FUSE-NOT:     "fusion.group"
// FUSE:         return %[[G]]#1, %[[G]]#0
func.func @fuse_running_mean_in_keepdim_shape(%x: !torch.vtensor<[2,4,3,3],f32>, %rm: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %true = torch.constant.bool true
  %none = torch.constant.none
  %dims = torch.prim.ListConstruct %int0, %int2, %int3 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %mean = torch.aten.mean.dim %x, %dims, %true, %none : !torch.vtensor<[2,4,3,3],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,4,1,1],f32>
  %centered = torch.aten.sub.Tensor %x, %mean, %int1 : !torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[1,4,1,1],f32>, !torch.int -> !torch.vtensor<[2,4,3,3],f32>
  %s3 = torch.aten.squeeze.dim %mean, %int3 : !torch.vtensor<[1,4,1,1],f32>, !torch.int -> !torch.vtensor<[1,4,1],f32>
  %s2 = torch.aten.squeeze.dim %s3, %int2 : !torch.vtensor<[1,4,1],f32>, !torch.int -> !torch.vtensor<[1,4],f32>
  %s0 = torch.aten.squeeze.dim %s2, %int0 : !torch.vtensor<[1,4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %f01 = torch.constant.float 1.000000e-01
  %new = torch.aten.mul.Scalar %s0, %f01 : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %f09 = torch.constant.float 9.000000e-01
  %old = torch.aten.mul.Scalar %rm, %f09 : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %updated = torch.aten.add.Tensor %new, %old, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  return %centered, %updated : !torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[4],f32>
}

// -----

// The batch norm backward's per-channel terms: a sum without keepdim ([C]),
// scaled by the saved rstd ([C]) and unsqueezed back to [1,C,1,1] where the
// input gradient reads it. The sum keeps its dims and the scaling runs on
// [1,C,1,1]: the unsqueezes fold away, and the sum, its scaling and the
// input gradient are one reduction group (the [C] gradient a view of it).

// CHECK-LABEL: func.func @fuse_backward_row_terms_in_keepdim_shape
// CHECK-SAME:    (%[[G:[^:]+]]: !torch.vtensor<[2,4,3,3],f32>, %[[RSTD:[^:]+]]: !torch.vtensor<[4],f32>)
// CHECK:         %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[G]], {{.+}} -> !torch.vtensor<[1,4,1,1],f32>
// CHECK:         %[[GB:.+]] = torch.aten.view %[[SUM]], {{.+}} -> !torch.vtensor<[4],f32>
// CHECK:         %[[RV:.+]] = torch.aten.view %[[RSTD]], {{.+}} -> !torch.vtensor<[1,4,1,1],f32>
// CHECK:         %[[SCALED:.+]] = torch.aten.mul.Tensor %[[SUM]], %[[RV]] {{.+}} -> !torch.vtensor<[1,4,1,1],f32>
// CHECK-NOT:     torch.aten.unsqueeze
// CHECK:         %[[GI:.+]] = torch.aten.sub.Tensor %[[G]], %[[SCALED]], {{.+}} -> !torch.vtensor<[2,4,3,3],f32>
// CHECK:         return %[[GI]], %[[GB]]

// FUSE-LABEL: func.func @fuse_backward_row_terms_in_keepdim_shape
// FUSE:         %[[G:.+]]:2 = "fusion.group"(%arg1, %arg0) ({
// FUSE:           torch.aten.sum.dim_IntList
// FUSE:           torch.aten.sub.Tensor {{.+}} -> !torch.vtensor<[2,4,3,3],f32>
// FUSE:         }) {kind = "persistent-reduction"}
// FUSE-NOT:     "fusion.group"
// FUSE:         return %[[G]]#1, %[[G]]#0
func.func @fuse_backward_row_terms_in_keepdim_shape(%g: !torch.vtensor<[2,4,3,3],f32>, %rstd: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %false = torch.constant.bool false
  %none = torch.constant.none
  %dims = torch.prim.ListConstruct %int0, %int2, %int3 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %sum = torch.aten.sum.dim_IntList %g, %dims, %false, %none : !torch.vtensor<[2,4,3,3],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4],f32>
  %scaled = torch.aten.mul.Tensor %sum, %rstd : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %u0 = torch.aten.unsqueeze %scaled, %int0 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[1,4],f32>
  %u2 = torch.aten.unsqueeze %u0, %int2 : !torch.vtensor<[1,4],f32>, !torch.int -> !torch.vtensor<[1,4,1],f32>
  %u3 = torch.aten.unsqueeze %u2, %int3 : !torch.vtensor<[1,4,1],f32>, !torch.int -> !torch.vtensor<[1,4,1,1],f32>
  %gi = torch.aten.sub.Tensor %g, %u3, %int1 : !torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[1,4,1,1],f32>, !torch.int -> !torch.vtensor<[2,4,3,3],f32>
  return %gi, %sum : !torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[4],f32>
}

// -----

// Limits. A reshape that merges dims of size above 1 moves elements
// between rows, not a unit-dims squeeze: the elementwise op stays in its
// shape. A full reduction's 0-d value broadcasts anywhere already: it
// keeps no dims.

// CHECK-LABEL: func.func @no_fuse_reshape_across_rows
// CHECK:         %[[M:.+]] = torch.aten.mean.dim {{.+}} -> !torch.vtensor<[2,4,1],f32>
// CHECK:         %[[V:.+]] = torch.aten.view %[[M]], {{.+}} -> !torch.vtensor<[8],f32>
// CHECK:         torch.aten.mul.Scalar %[[V]], {{.+}} -> !torch.vtensor<[8],f32>
// CHECK:         %[[S:.+]] = torch.aten.sum %{{.+}}, %{{.+}} : !torch.vtensor<[2,4,3],f32>, !torch.none -> !torch.vtensor<[],f32>
// CHECK:         torch.aten.mul.Scalar %[[S]], {{.+}} -> !torch.vtensor<[],f32>
func.func @no_fuse_reshape_across_rows(%x: !torch.vtensor<[2,4,3],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[],f32>) {
  %int8 = torch.constant.int 8
  %int2 = torch.constant.int 2
  %true = torch.constant.bool true
  %none = torch.constant.none
  %dims = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %mean = torch.aten.mean.dim %x, %dims, %true, %none : !torch.vtensor<[2,4,3],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[2,4,1],f32>
  %shape = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %flat = torch.aten.view %mean, %shape : !torch.vtensor<[2,4,1],f32>, !torch.list<int> -> !torch.vtensor<[8],f32>
  %f2 = torch.constant.float 2.000000e+00
  %scaled = torch.aten.mul.Scalar %flat, %f2 : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
  %total = torch.aten.sum %x, %none : !torch.vtensor<[2,4,3],f32>, !torch.none -> !torch.vtensor<[],f32>
  %half = torch.aten.mul.Scalar %total, %f2 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],f32>
  return %scaled, %half : !torch.vtensor<[8],f32>, !torch.vtensor<[],f32>
}

// -----

// A [C] value also read in its own shape (here returned) keeps it: no op
// reads it through one unsqueeze only, and it squeezes nothing. It is no
// reduction's per-row value either, so its unsqueezes are not folded
// (a mask built from an arange keeps its shapes: BERT's padding mask).

// CHECK-LABEL: func.func @no_fuse_value_read_in_its_own_shape
// CHECK:         %[[W:.+]] = torch.aten.mul.Tensor %arg1, %arg1 : {{.+}} -> !torch.vtensor<[4],f32>
// CHECK:         %[[U:.+]] = torch.aten.unsqueeze %[[W]], {{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         torch.aten.unsqueeze %[[U]], {{.+}} -> !torch.vtensor<[4,1,1],f32>
// CHECK:         return %{{.+}}, %[[W]]
func.func @no_fuse_value_read_in_its_own_shape(%x: !torch.vtensor<[2,4,3,3],f32>, %w: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[4],f32>) {
  %int-1 = torch.constant.int -1
  %sq = torch.aten.mul.Tensor %w, %w : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %u1 = torch.aten.unsqueeze %sq, %int-1 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4,1],f32>
  %u2 = torch.aten.unsqueeze %u1, %int-1 : !torch.vtensor<[4,1],f32>, !torch.int -> !torch.vtensor<[4,1,1],f32>
  %y = torch.aten.mul.Tensor %x, %u2 : !torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[4,1,1],f32> -> !torch.vtensor<[2,4,3,3],f32>
  return %y, %sq : !torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[4],f32>
}

// -----

// An elementwise op reading one squeezed value twice (`m * m`): computed in
// the keepdim shape, the squeeze erased once (a second erase crashed).

// CHECK-LABEL: func.func @fuse_square_of_a_squeezed_mean
// CHECK:         %[[M:.+]] = torch.aten.mean.dim {{.+}} -> !torch.vtensor<[2,4,1],f32>
// CHECK:         %[[SQ:.+]] = torch.aten.mul.Tensor %[[M]], %[[M]] : {{.+}} -> !torch.vtensor<[2,4,1],f32>
// CHECK:         %[[V:.+]] = torch.aten.view %[[SQ]], {{.+}} -> !torch.vtensor<[2,4],f32>
// CHECK:         return %[[V]]
func.func @fuse_square_of_a_squeezed_mean(%x: !torch.vtensor<[2,4,3],f32>) -> !torch.vtensor<[2,4],f32> {
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %none = torch.constant.none
  %dims = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %mean = torch.aten.mean.dim %x, %dims, %false, %none : !torch.vtensor<[2,4,3],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[2,4],f32>
  %sq = torch.aten.mul.Tensor %mean, %mean : !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
  return %sq : !torch.vtensor<[2,4],f32>
}
