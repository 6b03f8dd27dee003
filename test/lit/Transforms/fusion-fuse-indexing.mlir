// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --pass-pipeline='builtin.module(fusion-fuse-vertical)' | filecheck %s

// Indexing and creation ops inside groups (mlirfuse/indexing.py): gathers
// are loads at computed addresses whose table is a group input; creation
// ops load nothing; a scatter ends a `scatter` group whose pointwise
// prologue computes its source. The no_fuse cases name why (legality.py).

// An embedding joins its consumer: the table and the ids are group inputs.

// CHECK-LABEL: func.func @fuse_embedding
// CHECK:         %[[G:.+]] = "fusion.group"(%arg1, %arg0) ({
// CHECK-NEXT:    ^bb0(%[[W:.+]]: !torch.vtensor<[10,4],f32>, %[[I:.+]]: !torch.vtensor<[2,3],si64>):
// CHECK:           %[[E:.+]] = torch.aten.embedding %[[W]], %[[I]]
// CHECK:           %[[M:.+]] = torch.aten.mul.Scalar %[[E]]
// CHECK-NEXT:      "fusion.yield"(%[[M]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_embedding(%arg0: !torch.vtensor<[2,3],si64>, %arg1: !torch.vtensor<[10,4],f32>) -> !torch.vtensor<[2,3,4],f32> {
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %int2 = torch.constant.int 2
  %0 = torch.aten.embedding %arg1, %arg0, %int-1, %false, %false : !torch.vtensor<[10,4],f32>, !torch.vtensor<[2,3],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[2,3,4],f32>
  %1 = torch.aten.mul.Scalar %0, %int2 : !torch.vtensor<[2,3,4],f32>, !torch.int -> !torch.vtensor<[2,3,4],f32>
  return %1 : !torch.vtensor<[2,3,4],f32>
}

// -----

// gather with an index computed in the group (it has the result's layout),
// then index_select and advanced indexing (its list of index tensors joins
// the group; None stays a constant).

// CHECK-LABEL: func.func @fuse_gather_index_select_index
// CHECK:         "fusion.group"(%arg2, %arg0, %arg1) ({
// CHECK:           %[[L:.+]] = torch.prim.ListConstruct %{{.+}}, %{{.+}} : (!torch.none, !torch.vtensor<[2],si64>)
// CHECK-NEXT:      torch.aten.index.Tensor %{{.+}}, %[[L]]
// CHECK:           torch.aten.index_select
// CHECK:           %[[I:.+]] = torch.aten.rsub.Scalar
// CHECK:           torch.aten.gather %{{.+}}, %{{.+}}, %[[I]]
// CHECK:           "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
func.func @fuse_gather_index_select_index(%x: !torch.vtensor<[3,4],f32>, %i: !torch.vtensor<[3,2],si64>, %j: !torch.vtensor<[2],si64>) -> !torch.vtensor<[3,2],f32> {
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %false = torch.constant.bool false
  %none = torch.constant.none
  %0 = torch.aten.rsub.Scalar %i, %int3, %int1 : !torch.vtensor<[3,2],si64>, !torch.int, !torch.int -> !torch.vtensor<[3,2],si64>
  %1 = torch.aten.gather %x, %int1, %0, %false : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[3,2],si64>, !torch.bool -> !torch.vtensor<[3,2],f32>
  %2 = torch.aten.index_select %x, %int1, %j : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[3,2],f32>
  %l = torch.prim.ListConstruct %none, %j : (!torch.none, !torch.vtensor<[2],si64>) -> !torch.list<optional<vtensor>>
  %3 = torch.aten.index.Tensor %x, %l : !torch.vtensor<[3,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[3,2],f32>
  %4 = torch.aten.add.Tensor %1, %2, %int1 : !torch.vtensor<[3,2],f32>, !torch.vtensor<[3,2],f32>, !torch.int -> !torch.vtensor<[3,2],f32>
  %5 = torch.aten.add.Tensor %4, %3, %int1 : !torch.vtensor<[3,2],f32>, !torch.vtensor<[3,2],f32>, !torch.int -> !torch.vtensor<[3,2],f32>
  return %5 : !torch.vtensor<[3,2],f32>
}

// -----

// Creation ops load nothing and fuse anywhere: a causal mask (ones, triu)
// feeds masked_fill and the reduction after it, arange and zeros_like feed
// an add (zeros_like reads %x for its shape only).

// CHECK-LABEL: func.func @fuse_creation
// CHECK:         "fusion.group"(%arg0) ({
// CHECK:           torch.aten.ones
// CHECK:           torch.aten.triu
// CHECK:           torch.aten.masked_fill.Scalar
// CHECK:           torch.aten.amax
// CHECK:         }) {kind = "reduction"}
// CHECK:         "fusion.group"(%arg0) ({
// CHECK-DAG:       torch.aten.arange
// CHECK-DAG:       torch.aten.zeros_like
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
func.func @fuse_creation(%x: !torch.vtensor<[2,4,4],f32>) -> (!torch.vtensor<[2,4,1],f32>, !torch.vtensor<[2,4,4],f32>) {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %int11 = torch.constant.int 11
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %cpu = torch.constant.device "cpu"
  %ninf = torch.constant.float 0xFFF0000000000000
  %s = torch.prim.ListConstruct %int4, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.ones %s, %int11, %none, %cpu, %false : !torch.list<int>, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[4,4],i1>
  %1 = torch.aten.triu %0, %int1 : !torch.vtensor<[4,4],i1>, !torch.int -> !torch.vtensor<[4,4],i1>
  %2 = torch.aten.masked_fill.Scalar %x, %1, %ninf : !torch.vtensor<[2,4,4],f32>, !torch.vtensor<[4,4],i1>, !torch.float -> !torch.vtensor<[2,4,4],f32>
  %d = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.amax %2, %d, %true : !torch.vtensor<[2,4,4],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,4,1],f32>
  %4 = torch.aten.arange %int4, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[4],si64>
  %5 = torch.aten.zeros_like %x, %none, %none, %none, %false, %none : !torch.vtensor<[2,4,4],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[2,4,4],f32>
  %6 = torch.aten.add.Tensor %5, %4, %int1 : !torch.vtensor<[2,4,4],f32>, !torch.vtensor<[4],si64>, !torch.int -> !torch.vtensor<[2,4,4],f32>
  return %3, %6 : !torch.vtensor<[2,4,1],f32>, !torch.vtensor<[2,4,4],f32>
}

// -----

// A scatter ends a `scatter` group: the relu computing its source runs in
// the same kernel, over the index's space; %x is copied into the output.

// CHECK-LABEL: func.func @fuse_scatter_add_source
// CHECK:         %[[G:.+]] = "fusion.group"(%arg2, %arg0, %arg1) ({
// CHECK:           %[[R:.+]] = torch.aten.relu
// CHECK:           %[[S:.+]] = torch.aten.scatter_add %{{.+}}, %{{.+}}, %{{.+}}, %[[R]]
// CHECK-NEXT:      "fusion.yield"(%[[S]])
// CHECK-NEXT:    }) {kind = "scatter"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_scatter_add_source(%x: !torch.vtensor<[3,4],f32>, %i: !torch.vtensor<[3,2],si64>, %s: !torch.vtensor<[3,2],f32>) -> !torch.vtensor<[3,4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.relu %s : !torch.vtensor<[3,2],f32> -> !torch.vtensor<[3,2],f32>
  %1 = torch.aten.scatter_add %x, %int1, %i, %0 : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[3,2],si64>, !torch.vtensor<[3,2],f32> -> !torch.vtensor<[3,4],f32>
  return %1 : !torch.vtensor<[3,4],f32>
}

// -----

// index_put with accumulate: the list of indices joins the scatter group.

// CHECK-LABEL: func.func @fuse_index_put
// CHECK:         "fusion.group"(%arg1, %arg0, %arg2) ({
// CHECK:           %[[L:.+]] = torch.prim.ListConstruct
// CHECK-NEXT:      torch.aten.index_put %{{.+}}, %[[L]]
// CHECK:         }) {kind = "scatter"}
func.func @fuse_index_put(%x: !torch.vtensor<[5,3],f32>, %i: !torch.vtensor<[2],si64>, %v: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[5,3],f32> {
  %true = torch.constant.bool true
  %0 = torch.prim.ListConstruct %i : (!torch.vtensor<[2],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index_put %x, %0, %v, %true : !torch.vtensor<[5,3],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[2,3],f32>, !torch.bool -> !torch.vtensor<[5,3],f32>
  return %1 : !torch.vtensor<[5,3],f32>
}

// -----

// A table computed by the producer: every lane may read any of its elements,
// so it must be a kernel input.

// CHECK-LABEL: func.func @no_fuse_gather_from_computed_table
// CHECK:         fusion.explain = ["producer fusion.group: indexes a computed value (the table must be a kernel input)"]
// CHECK-SAME:    kind = "pointwise"
func.func @no_fuse_gather_from_computed_table(%x: !torch.vtensor<[4,5],f32>, %j: !torch.vtensor<[2],si64>) -> !torch.vtensor<[2,5],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.exp %x : !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %1 = torch.aten.index_select %0, %int0, %j : !torch.vtensor<[4,5],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,5],f32>
  return %1 : !torch.vtensor<[2,5],f32>
}

// -----

// Ids computed by the producer have shape [2,3]; the embedding reads them
// at [2,3,1] of its [2,3,4] result: a view of a computed value.

// CHECK-LABEL: func.func @no_fuse_embedding_of_computed_ids
// CHECK:         fusion.explain = ["producer fusion.group: computed index does not broadcast into the gather's result"]
func.func @no_fuse_embedding_of_computed_ids(%ids: !torch.vtensor<[2,3],si64>, %w: !torch.vtensor<[10,4],f32>) -> !torch.vtensor<[2,3,4],f32> {
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %0 = torch.aten.add.Scalar %ids, %int1, %int1 : !torch.vtensor<[2,3],si64>, !torch.int, !torch.int -> !torch.vtensor<[2,3],si64>
  %1 = torch.aten.embedding %w, %0, %int-1, %false, %false : !torch.vtensor<[10,4],f32>, !torch.vtensor<[2,3],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[2,3,4],f32>
  return %1 : !torch.vtensor<[2,3,4],f32>
}

// -----

// A boolean mask index gives a data-dependent shape: the op stays ATen.

// CHECK-LABEL: func.func @no_fuse_mask_index
// CHECK:         fusion.explain = ["consumer torch.aten.index.Tensor: index is bool (a mask or byte index has a data-dependent shape)"]
// CHECK:         torch.aten.index.Tensor
func.func @no_fuse_mask_index(%x: !torch.vtensor<[5],f32>) -> !torch.vtensor<[?],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.gt.Scalar %x, %int0 : !torch.vtensor<[5],f32>, !torch.int -> !torch.vtensor<[5],i1>
  %l = torch.prim.ListConstruct %0 : (!torch.vtensor<[5],i1>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %x, %l : !torch.vtensor<[5],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  return %1 : !torch.vtensor<[?],f32>
}

// -----

// No op may read a scatter's result in the scatter's own kernel (another
// program may not have written it yet), and the tensor scattered into is
// copied before the launch, so it must be a kernel input.

// CHECK-LABEL: func.func @no_fuse_scatter_neighbours
// CHECK:         fusion.explain = ["producer fusion.group: scatters into a computed value (it must be a kernel input)", "consumer fusion.group: a scatter's result is complete only after its launch"]
// CHECK-SAME:    kind = "scatter"
func.func @no_fuse_scatter_neighbours(%x: !torch.vtensor<[3,4],f32>, %i: !torch.vtensor<[3,2],si64>, %s: !torch.vtensor<[3,2],f32>) -> !torch.vtensor<[3,4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %x : !torch.vtensor<[3,4],f32> -> !torch.vtensor<[3,4],f32>
  %1 = torch.aten.scatter_add %0, %int1, %i, %s : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[3,2],si64>, !torch.vtensor<[3,2],f32> -> !torch.vtensor<[3,4],f32>
  %2 = torch.aten.relu %1 : !torch.vtensor<[3,4],f32> -> !torch.vtensor<[3,4],f32>
  return %2 : !torch.vtensor<[3,4],f32>
}

// -----

// A value read only for its shape (zeros_like) is not worth computing in
// the consumer; bf16 accumulation has no atomics on every target.

// CHECK-LABEL: func.func @no_fuse_shape_only_and_bf16_accumulate
// CHECK:         fusion.explain = ["consumer fusion.group: read only for its shape", "consumer torch.aten.index_put: accumulates bfloat16; atomics are fused for float32, float64, int32, int64"]
func.func @no_fuse_shape_only_and_bf16_accumulate(%x: !torch.vtensor<[5,3],bf16>, %i: !torch.vtensor<[2],si64>, %v: !torch.vtensor<[2,3],bf16>) -> (!torch.vtensor<[5,3],bf16>, !torch.vtensor<[5,3],bf16>) {
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %none = torch.constant.none
  %0 = torch.aten.exp %x : !torch.vtensor<[5,3],bf16> -> !torch.vtensor<[5,3],bf16>
  %1 = torch.aten.zeros_like %0, %none, %none, %none, %false, %none : !torch.vtensor<[5,3],bf16>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[5,3],bf16>
  %l = torch.prim.ListConstruct %i : (!torch.vtensor<[2],si64>) -> !torch.list<optional<vtensor>>
  %2 = torch.aten.index_put %0, %l, %v, %true : !torch.vtensor<[5,3],bf16>, !torch.list<optional<vtensor>>, !torch.vtensor<[2,3],bf16>, !torch.bool -> !torch.vtensor<[5,3],bf16>
  return %1, %2 : !torch.vtensor<[5,3],bf16>, !torch.vtensor<[5,3],bf16>
}

// -----

// slice_scatter / select_scatter read their input where it is and src (a
// kernel input) at computed coordinates inside the slice: the mul before
// and the add after join; a computed src does not.

// CHECK-LABEL: func.func @fuse_slice_scatter
// CHECK:         %[[E:.+]] = "fusion.group"(%arg2) ({
// CHECK:           torch.aten.exp
// CHECK:         "fusion.group"(%arg0, %arg1, %[[E]]) ({
// CHECK:           torch.aten.mul.Scalar
// CHECK:           torch.aten.slice_scatter
// CHECK:           torch.aten.add.Scalar
// CHECK:           torch.aten.select_scatter
// CHECK:         }) {fusion.explain = ["producer fusion.group: indexes a computed value (the table must be a kernel input)"], kind = "pointwise"}
func.func @fuse_slice_scatter(%x: !torch.vtensor<[4,7],f32>, %y: !torch.vtensor<[4,3],f32>, %z: !torch.vtensor<[7],f32>) -> !torch.vtensor<[4,7],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int7 = torch.constant.int 7
  %int-1 = torch.constant.int -1
  %0 = torch.aten.mul.Scalar %x, %int2 : !torch.vtensor<[4,7],f32>, !torch.int -> !torch.vtensor<[4,7],f32>
  %1 = torch.aten.slice_scatter %0, %y, %int1, %int1, %int7, %int2 : !torch.vtensor<[4,7],f32>, !torch.vtensor<[4,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,7],f32>
  %2 = torch.aten.add.Scalar %1, %int1, %int1 : !torch.vtensor<[4,7],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,7],f32>
  %3 = torch.aten.exp %z : !torch.vtensor<[7],f32> -> !torch.vtensor<[7],f32>
  %4 = torch.aten.select_scatter %2, %3, %int0, %int-1 : !torch.vtensor<[4,7],f32>, !torch.vtensor<[7],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,7],f32>
  return %4 : !torch.vtensor<[4,7],f32>
}
