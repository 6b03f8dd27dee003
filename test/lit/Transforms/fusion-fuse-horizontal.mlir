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
