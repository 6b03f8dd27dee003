// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-vertical, fusion-fuse-horizontal)' | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-vertical)' | filecheck %s --check-prefix=OFF

// Horizontal (sibling) fusion: independent groups that read the same tensor
// become one multi-output group, so the kernel reads %x once. The mv that
// read the first group's result moves after the merged group.

// CHECK-LABEL: func.func @fuse_siblings
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[8],f32>, %[[W:.+]]: !torch.vtensor<[8,8],f32>)
// CHECK-NEXT:    %[[G:.+]]:2 = "fusion.group"(%[[X]]) ({
// CHECK:           torch.aten.exp
// CHECK:           torch.aten.sin
// CHECK:         }) {kind = "pointwise"}
// CHECK-NEXT:    torch.aten.mv %[[W]], %[[G]]#1
// CHECK-NEXT:    torch.aten.mv %[[W]], %[[G]]#0
// OFF-LABEL: func.func @fuse_siblings
// OFF-COUNT-2: "fusion.group"
func.func @fuse_siblings(%x: !torch.vtensor<[8],f32>, %w: !torch.vtensor<[8,8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = torch.aten.exp %x : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.mv %w, %0 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %2 = torch.aten.sin %x : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %3 = torch.aten.mv %w, %2 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %1, %3 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// The second group depends on the first through mv: merging them would be
// a cycle.

// CHECK-LABEL: func.func @no_fuse_horizontal_dependent
// CHECK-COUNT-2: "fusion.group"(%arg0
// CHECK-NOT:     "fusion.group"
func.func @no_fuse_horizontal_dependent(%x: !torch.vtensor<[8],f32>, %w: !torch.vtensor<[8,8],f32>) -> !torch.vtensor<[8],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %x : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.mv %w, %0 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %2 = torch.aten.add.Tensor %x, %1, %int1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[8],f32>
  return %2 : !torch.vtensor<[8],f32>
}

// -----

// Siblings over different iteration spaces ([8] and [4,8]) stay apart.

// CHECK-LABEL: func.func @no_fuse_horizontal_different_shapes
// CHECK-COUNT-2: "fusion.group"
// CHECK-NOT:     "fusion.group"
func.func @no_fuse_horizontal_different_shapes(%x: !torch.vtensor<[8],f32>, %y: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[4,8],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %x : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.add.Tensor %y, %x, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.mm %y, %y : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  return %0, %1 : !torch.vtensor<[8],f32>, !torch.vtensor<[4,8],f32>
}

// -----

// Groups that share no input gain nothing and stay apart.

// CHECK-LABEL: func.func @no_fuse_horizontal_no_shared_input
// CHECK-COUNT-2: "fusion.group"
// CHECK-NOT:     "fusion.group"
func.func @no_fuse_horizontal_no_shared_input(%x: !torch.vtensor<[8],f32>, %y: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = torch.aten.exp %x : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.exp %y : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0, %1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// An MoE's sorted expert order read twice: a gather of the routing weights
// (pointwise over the index) and the inverse permutation (a scatter over
// it). The scatter takes its pointwise sibling: one kernel over the index,
// storing the gathered weights beside the scattered positions.
// CHECK-LABEL: func.func @fuse_sibling_into_scatter
// CHECK:         %[[G:.+]]:2 = "fusion.group"(%arg0, %arg1) ({
// CHECK:           torch.aten.index.Tensor
// CHECK:           torch.aten.index_put
// CHECK:         }) {kind = "scatter"}
// CHECK-NEXT:    return %[[G]]#0, %[[G]]#1
// OFF-LABEL: func.func @fuse_sibling_into_scatter
// OFF-COUNT-2:   "fusion.group"
func.func @fuse_sibling_into_scatter(%perm: !torch.vtensor<[8],si64>, %w: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],si64>, !torch.vtensor<[8],f32>) {
  %0 = torch.prim.ListConstruct %perm : (!torch.vtensor<[8],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %w, %0 : !torch.vtensor<[8],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[8],f32>
  %int8 = torch.constant.int 8
  %2 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %int4 = torch.constant.int 4
  %int0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %none = torch.constant.none
  %3 = torch.aten.empty.memory_format %2, %int4, %int0, %cpu, %false, %none : !torch.list<int>, !torch.int, !torch.int, !torch.Device, !torch.bool, !torch.none -> !torch.vtensor<[8],si64>
  %4 = torch.aten.arange %int8, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[8],si64>
  %5 = torch.prim.ListConstruct %perm : (!torch.vtensor<[8],si64>) -> !torch.list<optional<vtensor>>
  %6 = torch.aten.index_put %3, %5, %4, %false : !torch.vtensor<[8],si64>, !torch.list<optional<vtensor>>, !torch.vtensor<[8],si64>, !torch.bool -> !torch.vtensor<[8],si64>
  return %6, %1 : !torch.vtensor<[8],si64>, !torch.vtensor<[8],f32>
}

// -----

// A scatter before its pointwise sibling ends its own group: its result is
// complete only after its launch, and the sibling is not its prologue.
// CHECK-LABEL: func.func @no_fuse_scatter_into_later_sibling
// CHECK-COUNT-2: "fusion.group"
func.func @no_fuse_scatter_into_later_sibling(%perm: !torch.vtensor<[8],si64>, %w: !torch.vtensor<[8],f32>, %x: !torch.vtensor<[8],si64>) -> (!torch.vtensor<[8],si64>, !torch.vtensor<[8],f32>) {
  %false = torch.constant.bool false
  %5 = torch.prim.ListConstruct %perm : (!torch.vtensor<[8],si64>) -> !torch.list<optional<vtensor>>
  %6 = torch.aten.index_put %x, %5, %perm, %false : !torch.vtensor<[8],si64>, !torch.list<optional<vtensor>>, !torch.vtensor<[8],si64>, !torch.bool -> !torch.vtensor<[8],si64>
  %0 = torch.prim.ListConstruct %perm : (!torch.vtensor<[8],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %w, %0 : !torch.vtensor<[8],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[8],f32>
  return %6, %1 : !torch.vtensor<[8],si64>, !torch.vtensor<[8],f32>
}
