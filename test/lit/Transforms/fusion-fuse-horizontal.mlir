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

// -----

// A batch norm's `num_batches_tracked + 1`: a group of 0-d values reading
// nothing the reduction computes joins the reduction's kernel, which
// stores it once (row 0). Without horizontal fusion it is a kernel of its own.

// CHECK-LABEL: func.func @fuse_scalar_store_into_reduction
// CHECK-SAME:    (%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[N:[^:]+]]: !torch.vtensor<[],si64>)
// CHECK-NEXT:    %[[G:.+]]:2 = "fusion.group"(%[[N]], %[[X]]) ({
// CHECK:           torch.aten.add.Scalar {{.+}} -> !torch.vtensor<[],si64>
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         }) {kind = "reduction"}
// CHECK-NEXT:    return %[[G]]#0, %[[G]]#1
// OFF-LABEL: func.func @fuse_scalar_store_into_reduction
// OFF-COUNT-2: "fusion.group"
func.func @fuse_scalar_store_into_reduction(%x: !torch.vtensor<[4,8],f32>, %n: !torch.vtensor<[],si64>) -> (!torch.vtensor<[4,1],f32>, !torch.vtensor<[],si64>) {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %next = torch.aten.add.Scalar %n, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %sum = torch.aten.sum.dim_IntList %x, %dims, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  return %sum, %next : !torch.vtensor<[4,1],f32>, !torch.vtensor<[],si64>
}

// -----

// Limit: a 0-d group reading a reduction's result (the product of a
// full sum of it) cannot store beside it: one reads the other. The counter
// beside it joins the first reduction.

// CHECK-LABEL: func.func @no_fuse_scalar_store_reading_the_host
// CHECK:         %[[R:.+]]:2 = "fusion.group"
// CHECK:           torch.aten.add.Scalar
// CHECK:         }) {kind = "reduction"}
// CHECK-NEXT:    %[[T:.+]] = "fusion.group"(%[[R]]#1)
// CHECK:           torch.aten.sum %
// CHECK:         }) {kind = "reduction"}
// CHECK-NEXT:    %[[M:.+]] = "fusion.group"(%[[T]], %{{.+}})
// CHECK:           torch.aten.mul.Tensor
// CHECK:         }) {kind = "pointwise"}
func.func @no_fuse_scalar_store_reading_the_host(%x: !torch.vtensor<[4,8],f32>, %n: !torch.vtensor<[],si64>, %t: !torch.vtensor<[],f32>) -> (!torch.vtensor<[4,1],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si64>) {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %sum = torch.aten.sum.dim_IntList %x, %dims, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %total = torch.aten.sum %sum, %none : !torch.vtensor<[4,1],f32>, !torch.none -> !torch.vtensor<[],f32>
  %scaled = torch.aten.mul.Tensor %total, %t : !torch.vtensor<[],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[],f32>
  %next = torch.aten.add.Scalar %n, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
  return %sum, %scaled, %next : !torch.vtensor<[4,1],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si64>
}

// -----

// Limit: a pointwise group is no host (a store of row 0 is a reduction
// kernel's): the counter stays a kernel of its own.

// CHECK-LABEL: func.func @no_fuse_scalar_store_into_pointwise
// CHECK:         "fusion.group"
// CHECK:           torch.aten.exp
// CHECK:         }) {kind = "pointwise"}
// CHECK-NEXT:    "fusion.group"
// CHECK:           torch.aten.add.Scalar
// CHECK:         }) {kind = "pointwise"}
func.func @no_fuse_scalar_store_into_pointwise(%x: !torch.vtensor<[4,8],f32>, %n: !torch.vtensor<[],si64>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[],si64>) {
  %int1 = torch.constant.int 1
  %e = torch.aten.exp %x : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %next = torch.aten.add.Scalar %n, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
  return %e, %next : !torch.vtensor<[4,8],f32>, !torch.vtensor<[],si64>
}
