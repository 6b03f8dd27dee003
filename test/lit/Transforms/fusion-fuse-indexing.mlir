// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --pass-pipeline='builtin.module(fusion-fuse-vertical)' | filecheck %s

// Indexing and creation ops inside groups (mlirfuse/ops/indexing.py): gathers
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

// An inverse permutation, `inv = empty_like(perm); inv[perm] = arange(n)`:
// the empty only the scatter reads joins its group (the kernel's output,
// never copied into), with the arange computing the source.

// CHECK-LABEL: func.func @fuse_index_put_into_empty
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0) ({
// CHECK:           torch.aten.arange
// CHECK:           %[[E:.+]] = torch.aten.empty.memory_format
// CHECK:           torch.aten.index_put %[[E]]
// CHECK:         }) {kind = "scatter"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_index_put_into_empty(%perm: !torch.vtensor<[8],si64>) -> !torch.vtensor<[8],si64> {
  %int8 = torch.constant.int 8
  %0 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %int4 = torch.constant.int 4
  %int0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %none = torch.constant.none
  %1 = torch.aten.empty.memory_format %0, %int4, %int0, %cpu, %false, %none : !torch.list<int>, !torch.int, !torch.int, !torch.Device, !torch.bool, !torch.none -> !torch.vtensor<[8],si64>
  %2 = torch.aten.arange %int8, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[8],si64>
  %3 = torch.prim.ListConstruct %perm : (!torch.vtensor<[8],si64>) -> !torch.list<optional<vtensor>>
  %4 = torch.aten.index_put %1, %3, %2, %false : !torch.vtensor<[8],si64>, !torch.list<optional<vtensor>>, !torch.vtensor<[8],si64>, !torch.bool -> !torch.vtensor<[8],si64>
  return %4 : !torch.vtensor<[8],si64>
}

// -----

// An empty read elsewhere too stays outside (its values, whatever they are,
// are read there): the scatter copies it in, as any input.

// CHECK-LABEL: func.func @no_fuse_index_put_into_empty_read_elsewhere
// CHECK:         %[[E:.+]] = torch.aten.empty.memory_format
// CHECK:         "fusion.group"(%arg0, %[[E]], %arg1) ({
// CHECK:           torch.aten.index_put %arg
// CHECK:         }) {fusion.explain = ["producer torch.aten.empty.memory_format: an empty read elsewhere too (the scatter copies it into its output, as any input)"], kind = "scatter"}
func.func @no_fuse_index_put_into_empty_read_elsewhere(%perm: !torch.vtensor<[8],si64>, %v: !torch.vtensor<[8],si64>) -> (!torch.vtensor<[8],si64>, !torch.vtensor<[8],si64>) {
  %int8 = torch.constant.int 8
  %0 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %int4 = torch.constant.int 4
  %int0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %none = torch.constant.none
  %1 = torch.aten.empty.memory_format %0, %int4, %int0, %cpu, %false, %none : !torch.list<int>, !torch.int, !torch.int, !torch.Device, !torch.bool, !torch.none -> !torch.vtensor<[8],si64>
  %3 = torch.prim.ListConstruct %perm : (!torch.vtensor<[8],si64>) -> !torch.list<optional<vtensor>>
  %4 = torch.aten.index_put %1, %3, %v, %false : !torch.vtensor<[8],si64>, !torch.list<optional<vtensor>>, !torch.vtensor<[8],si64>, !torch.bool -> !torch.vtensor<[8],si64>
  return %4, %1 : !torch.vtensor<[8],si64>, !torch.vtensor<[8],si64>
}

// -----

// A scatter does not absorb the views of its operands: it reads them as
// strided tensors, so the column of an index input stays an ATen view (no
// copy) and explain says so (not "view of a computed value").

// CHECK-LABEL: func.func @no_fuse_view_into_scatter
// CHECK:         %[[COL:.+]] = torch.aten.select.int %arg1
// CHECK:         "fusion.group"(%[[COL]], %arg0, %arg2) ({
// CHECK:           torch.aten.index_put
// CHECK:         fusion.explain = ["producer torch.aten.select.int: a scatter reads the views of its operands as strided tensors (no copy)"]
// CHECK-SAME:    kind = "scatter"
func.func @no_fuse_view_into_scatter(%x: !torch.vtensor<[5,3],f32>, %i: !torch.vtensor<[2,2],si64>, %v: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[5,3],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %0 = torch.aten.select.int %i, %int1, %int0 : !torch.vtensor<[2,2],si64>, !torch.int, !torch.int -> !torch.vtensor<[2],si64>
  %1 = torch.prim.ListConstruct %0 : (!torch.vtensor<[2],si64>) -> !torch.list<optional<vtensor>>
  %2 = torch.aten.index_put %x, %1, %v, %true : !torch.vtensor<[5,3],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[2,3],f32>, !torch.bool -> !torch.vtensor<[5,3],f32>
  return %2 : !torch.vtensor<[5,3],f32>
}

// -----

// A table computed by elementwise ops of inputs (a padding mask cast to
// bool): the pointwise kernel evaluates them at the gathered coordinates,
// one load of each input per gathered element as the stored table's would be.

// CHECK-LABEL: func.func @fuse_gather_from_elementwise_table
// CHECK:         "fusion.group"(%arg0, %arg1)
// CHECK:           torch.aten.exp
// CHECK:           torch.aten.index_select
// CHECK-NEXT:      "fusion.yield"
// CHECK-NOT:     fusion.explain
// CHECK:         return
func.func @fuse_gather_from_elementwise_table(%x: !torch.vtensor<[4,5],f32>, %j: !torch.vtensor<[2],si64>) -> !torch.vtensor<[2,5],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.exp %x : !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %1 = torch.aten.index_select %0, %int0, %j : !torch.vtensor<[4,5],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,5],f32>
  return %1 : !torch.vtensor<[2,5],f32>
}

// -----

// A table computed by a reduction: every lane may read any of its rows, so
// it is stored by a kernel of its own and the gather reads it.

// CHECK-LABEL: func.func @no_fuse_gather_from_reduced_table
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         "fusion.group"
// CHECK-NEXT:    ^bb0
// CHECK:           torch.aten.index_select
// CHECK:         fusion.explain = ["producer fusion.group: indexes a computed value (the table must be a kernel input)"]
func.func @no_fuse_gather_from_reduced_table(%x: !torch.vtensor<[4,5],f32>, %j: !torch.vtensor<[2],si64>) -> !torch.vtensor<[2,1],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %l = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.sum.dim_IntList %x, %l, %true, %none : !torch.vtensor<[4,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %1 = torch.aten.index_select %0, %int0, %j : !torch.vtensor<[4,1],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,1],f32>
  return %1 : !torch.vtensor<[2,1],f32>
}

// -----

// Ids computed by the producer have shape [2,3]; the embedding reads them
// at [2,3,1] of its [2,3,4] result: a view of a computed value.

// CHECK-LABEL: func.func @no_fuse_embedding_of_computed_ids
// CHECK:           torch.aten.add.Scalar
// CHECK:         "fusion.group"
// CHECK-NEXT:    ^bb0
// CHECK:           torch.aten.embedding
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
// CHECK:           torch.aten.exp
// CHECK:         "fusion.group"
// CHECK-NEXT:    ^bb0
// CHECK:           torch.aten.scatter_add
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
// -----

// eye.m, tril, full, full_like, ones_like, zeros, arange.start and
// arange.start_step (as the importer spells torch.eye(3, 4), torch.full,
// torch.arange(1, 5), ...) compute their values from the coordinates: one
// group with the adds reading them.

// CHECK-LABEL: func.func @fuse_creation_ops_from_coordinates
// CHECK:         "fusion.group"(%arg0) ({
// CHECK-DAG:       torch.aten.eye.m
// CHECK-DAG:       torch.aten.tril
// CHECK-DAG:       torch.aten.full %
// CHECK-DAG:       torch.aten.full_like
// CHECK-DAG:       torch.aten.ones_like
// CHECK-DAG:       torch.aten.zeros %
// CHECK-DAG:       torch.aten.arange.start %
// CHECK-DAG:       torch.aten.arange.start_step
// CHECK:           "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_creation_ops_from_coordinates(%arg0: !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[3,4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int5 = torch.constant.int 5
  %int8 = torch.constant.int 8
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %float2.500000e00 = torch.constant.float 2.500000e+00
  %0 = torch.aten.eye.m %int3, %int4, %none, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[3,4],f32>
  %1 = torch.aten.tril %arg0, %int0 : !torch.vtensor<[3,4],f32>, !torch.int -> !torch.vtensor<[3,4],f32>
  %s = torch.prim.ListConstruct %int3, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.full %s, %float2.500000e00, %none, %none, %cpu, %false : !torch.list<int>, !torch.float, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[3,4],f32>
  %3 = torch.aten.full_like %arg0, %float2.500000e00, %none, %none, %none, %false, %none : !torch.vtensor<[3,4],f32>, !torch.float, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[3,4],f32>
  %4 = torch.aten.ones_like %arg0, %none, %none, %none, %false, %none : !torch.vtensor<[3,4],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[3,4],f32>
  %5 = torch.aten.zeros %s, %none, %none, %cpu, %false : !torch.list<int>, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[3,4],f32>
  %6 = torch.aten.arange.start %int1, %int5, %none, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[4],si64>
  %7 = torch.aten.arange.start_step %int0, %int8, %int2, %none, %none, %cpu, %false : !torch.int, !torch.int, !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[4],si64>
  %8 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>, !torch.int -> !torch.vtensor<[3,4],f32>
  %9 = torch.aten.add.Tensor %8, %2, %int1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>, !torch.int -> !torch.vtensor<[3,4],f32>
  %10 = torch.aten.add.Tensor %9, %3, %int1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>, !torch.int -> !torch.vtensor<[3,4],f32>
  %11 = torch.aten.add.Tensor %10, %4, %int1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>, !torch.int -> !torch.vtensor<[3,4],f32>
  %12 = torch.aten.add.Tensor %11, %5, %int1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>, !torch.int -> !torch.vtensor<[3,4],f32>
  %13 = torch.aten.add.Tensor %12, %6, %int1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[4],si64>, !torch.int -> !torch.vtensor<[3,4],f32>
  %14 = torch.aten.add.Tensor %13, %7, %int1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[4],si64>, !torch.int -> !torch.vtensor<[3,4],f32>
  return %14 : !torch.vtensor<[3,4],f32>
}

// -----

// torch.eye(3) and a fill_ (fill.Scalar) in one group. The fill reads the
// value it overwrites for its shape only, so the mul producing it is not
// computed in the fill's kernel.

// CHECK-LABEL: func.func @fuse_eye_and_fill
// CHECK:         %[[M:.+]] = "fusion.group"(%arg0) ({
// CHECK:           torch.aten.mul.Scalar
// CHECK:         }) {fusion.explain = ["consumer fusion.group: read only for its shape"], kind = "pointwise"}
// CHECK:         "fusion.group"(%[[M]]) ({
// CHECK-DAG:       torch.aten.eye %
// CHECK-DAG:       torch.aten.fill.Scalar
// CHECK:         }) {fusion.explain = ["producer fusion.group: read only for its shape"], kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_eye_and_fill(%arg0: !torch.vtensor<[3,3],f32>) -> !torch.vtensor<[3,3],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %float3.000000e00 = torch.constant.float 3.000000e+00
  %0 = torch.aten.mul.Scalar %arg0, %int2 : !torch.vtensor<[3,3],f32>, !torch.int -> !torch.vtensor<[3,3],f32>
  %1 = torch.aten.fill.Scalar %0, %float3.000000e00 : !torch.vtensor<[3,3],f32>, !torch.float -> !torch.vtensor<[3,3],f32>
  %2 = torch.aten.eye %int3, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[3,3],f32>
  %3 = torch.aten.add.Tensor %1, %2, %int1 : !torch.vtensor<[3,3],f32>, !torch.vtensor<[3,3],f32>, !torch.int -> !torch.vtensor<[3,3],f32>
  return %3 : !torch.vtensor<[3,3],f32>
}

// -----

// masked_fill with a tensor value and where, by masks computed from the
// coordinates (a tril / triu of ones): nothing is loaded for the masks.

// CHECK-LABEL: func.func @fuse_masked_fill_and_where_with_index_masks
// CHECK:         "fusion.group"(%arg0, %arg1) ({
// CHECK-DAG:       torch.aten.ones
// CHECK-DAG:       torch.aten.tril
// CHECK-DAG:       torch.aten.triu
// CHECK:           torch.aten.masked_fill.Tensor
// CHECK:           torch.aten.where.self
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_masked_fill_and_where_with_index_masks(%x: !torch.vtensor<[4,4],f32>, %v: !torch.vtensor<[],f32>) -> !torch.vtensor<[4,4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %int11 = torch.constant.int 11
  %none = torch.constant.none
  %false = torch.constant.bool false
  %cpu = torch.constant.device "cpu"
  %s = torch.prim.ListConstruct %int4, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.ones %s, %int11, %none, %cpu, %false : !torch.list<int>, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[4,4],i1>
  %1 = torch.aten.tril %0, %int0 : !torch.vtensor<[4,4],i1>, !torch.int -> !torch.vtensor<[4,4],i1>
  %2 = torch.aten.triu %0, %int1 : !torch.vtensor<[4,4],i1>, !torch.int -> !torch.vtensor<[4,4],i1>
  %3 = torch.aten.masked_fill.Tensor %x, %1, %v : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],i1>, !torch.vtensor<[],f32> -> !torch.vtensor<[4,4],f32>
  %4 = torch.aten.where.self %2, %x, %3 : !torch.vtensor<[4,4],i1>, !torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  return %4 : !torch.vtensor<[4,4],f32>
}

// -----

// scatter of a computed source (its relu joins the scatter group) and of a
// constant value: two scatter groups.

// CHECK-LABEL: func.func @fuse_scatter_src_and_value
// CHECK:         "fusion.group"(%arg2, %arg0, %arg1) ({
// CHECK:           %[[R:.+]] = torch.aten.relu
// CHECK:           torch.aten.scatter.src %{{.+}}, %{{.+}}, %{{.+}}, %[[R]]
// CHECK:         }) {kind = "scatter"}
// CHECK:         "fusion.group"(%arg0, %arg1) ({
// CHECK:           torch.aten.scatter.value
// CHECK:         }) {kind = "scatter"}
func.func @fuse_scatter_src_and_value(%x: !torch.vtensor<[3,4],f32>, %i: !torch.vtensor<[3,2],si64>, %s: !torch.vtensor<[3,2],f32>) -> (!torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>) {
  %int1 = torch.constant.int 1
  %float2.000000e00 = torch.constant.float 2.000000e+00
  %0 = torch.aten.relu %s : !torch.vtensor<[3,2],f32> -> !torch.vtensor<[3,2],f32>
  %1 = torch.aten.scatter.src %x, %int1, %i, %0 : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[3,2],si64>, !torch.vtensor<[3,2],f32> -> !torch.vtensor<[3,4],f32>
  %2 = torch.aten.scatter.value %x, %int1, %i, %float2.000000e00 : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[3,2],si64>, !torch.float -> !torch.vtensor<[3,4],f32>
  return %1, %2 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>
}

// -----

// take_along_dim as it reaches the fuser (torch.compile's graphs; the
// torch.operator torch.export gives is expanded alike by fusion-decompose):
// a gather of the indices wrapped by remainder, broadcast by an expand view
// (the table's expand to its own shape too).

// CHECK-LABEL: func.func @fuse_take_along_dim
// CHECK:         "fusion.group"(%arg1, %arg0) ({
// CHECK:           torch.aten.expand
// CHECK:           %[[W:.+]] = torch.aten.remainder.Scalar
// CHECK:           torch.aten.gather %{{.+}}, %{{.+}}, %[[W]]
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_take_along_dim(%x: !torch.vtensor<[3,4],f32>, %i: !torch.vtensor<[1,2],si64>) -> !torch.vtensor<[3,2],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %false = torch.constant.bool false
  %s = torch.prim.ListConstruct %int3, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.expand %i, %s, %false : !torch.vtensor<[1,2],si64>, !torch.list<int>, !torch.bool -> !torch.vtensor<[3,2],si64>
  %t = torch.prim.ListConstruct %int3, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.expand %x, %t, %false : !torch.vtensor<[3,4],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[3,4],f32>
  %2 = torch.aten.remainder.Scalar %0, %int4 : !torch.vtensor<[3,2],si64>, !torch.int -> !torch.vtensor<[3,2],si64>
  %3 = torch.aten.gather %1, %int1, %2, %false : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[3,2],si64>, !torch.bool -> !torch.vtensor<[3,2],f32>
  return %3 : !torch.vtensor<[3,2],f32>
}

// -----

// Sizes known only at run time (torch.export with dynamic_shapes): creation
// ops, tril/triu, fill, gathers, slice_scatter / select_scatter and scatters
// need static shapes; each stays ATen and the neighbouring group names why.

// CHECK-LABEL: func.func @no_fuse_indexing_and_creation_of_dynamic_sizes
// CHECK:         torch.aten.zeros
// CHECK:         fusion.explain = ["producer torch.aten.zeros: result is not a statically shaped tensor of a supported dtype"]
// CHECK:         torch.aten.eye.m
// CHECK:         fusion.explain = ["producer torch.aten.eye.m: result is not a statically shaped tensor of a supported dtype"]
// CHECK:         fusion.explain = ["consumer torch.aten.gather: indexed tensor is not a statically shaped tensor"]
// CHECK:         torch.aten.gather
// CHECK:         fusion.explain = ["consumer torch.aten.slice_scatter: result is not a statically shaped tensor of a supported dtype"]
// CHECK:         torch.aten.slice_scatter
// CHECK:         torch.aten.scatter.value
// CHECK:         fusion.explain = ["producer torch.aten.scatter.value: result is not a statically shaped tensor of a supported dtype"]
// CHECK:         fusion.explain = ["consumer torch.aten.select_scatter: result is not a statically shaped tensor of a supported dtype"]
// CHECK:         torch.aten.select_scatter
// CHECK:         torch.aten.arange
// CHECK:         fusion.explain = ["producer torch.aten.arange: result is not a statically shaped tensor of a supported dtype"]
// CHECK:         torch.aten.tril
// CHECK:         torch.aten.ones_like
// CHECK:         fusion.explain = ["producer torch.aten.ones_like: result is not a statically shaped tensor of a supported dtype", "producer torch.aten.tril: result is not a statically shaped tensor of a supported dtype"]
// CHECK:         torch.aten.eye %
// CHECK:         torch.aten.arange.start %
// CHECK:         fusion.explain = ["producer torch.aten.eye: result is not a statically shaped tensor of a supported dtype", "consumer fusion.group: different iteration space"]
// CHECK:         fusion.explain = ["producer torch.aten.arange.start: result is not a statically shaped tensor of a supported dtype", "consumer fusion.group: different iteration space"]
// CHECK:         fusion.explain = ["producer torch.aten.ones: result is not a statically shaped tensor of a supported dtype", "producer torch.aten.full: result is not a statically shaped tensor of a supported dtype", "producer torch.aten.zeros_like: result is not a statically shaped tensor of a supported dtype", "producer torch.aten.full_like: result is not a statically shaped tensor of a supported dtype", "producer torch.aten.triu: result is not a statically shaped tensor of a supported dtype", "producer torch.aten.fill.Scalar: result is not a statically shaped tensor of a supported dtype",
// CHECK:         fusion.explain = ["producer torch.aten.gather: indexed tensor is not a statically shaped tensor", "consumer torch.aten.scatter.src: result is not a statically shaped tensor of a supported dtype"]
// CHECK:         torch.aten.scatter.src
func.func @no_fuse_indexing_and_creation_of_dynamic_sizes(%arg0: !torch.vtensor<[?,4],f32>, %arg1: !torch.vtensor<[?,2],si64>, %arg2: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,2],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?],si64>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %float2.000000e00 = torch.constant.float 2.000000e+00
  %0 = torch.aten.size.int %arg1, %int0 : !torch.vtensor<[?,2],si64>, !torch.int -> !torch.int
  %1 = torch.prim.ListConstruct %0, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.zeros %1, %none, %none, %cpu, %false : !torch.list<int>, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?,4],f32>
  %3 = torch.aten.add.Tensor %arg0, %2, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %4 = torch.aten.eye.m %0, %int4, %none, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?,4],f32>
  %5 = torch.aten.mul.Tensor %4, %arg0 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32> -> !torch.vtensor<[?,4],f32>
  %6 = torch.aten.add.Scalar %arg1, %int1, %int1 : !torch.vtensor<[?,2],si64>, !torch.int, !torch.int -> !torch.vtensor<[?,2],si64>
  %7 = torch.aten.gather %arg0, %int1, %6, %false : !torch.vtensor<[?,4],f32>, !torch.int, !torch.vtensor<[?,2],si64>, !torch.bool -> !torch.vtensor<[?,2],f32>
  %8 = torch.aten.mul.Scalar %arg0, %int2 : !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %9 = torch.aten.slice_scatter %8, %7, %int1, %int0, %int2, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,2],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,4],f32>
  %10 = torch.aten.scatter.value %arg0, %int1, %arg1, %float2.000000e00 : !torch.vtensor<[?,4],f32>, !torch.int, !torch.vtensor<[?,2],si64>, !torch.float -> !torch.vtensor<[?,4],f32>
  %11 = torch.aten.add.Scalar %10, %int1, %int1 : !torch.vtensor<[?,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,4],f32>
  %12 = torch.aten.exp %arg2 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %13 = torch.aten.select_scatter %arg0, %12, %int0, %int0 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,4],f32>
  %14 = torch.aten.arange %0, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
  %15 = torch.aten.add.Scalar %14, %int1, %int1 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  %16 = torch.aten.tril %arg0, %int0 : !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %17 = torch.aten.ones_like %16, %none, %none, %none, %false, %none : !torch.vtensor<[?,4],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,4],f32>
  %18 = torch.aten.sub.Tensor %17, %16, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %19 = torch.aten.ones %1, %none, %none, %cpu, %false : !torch.list<int>, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?,4],f32>
  %20 = torch.aten.full %1, %float2.000000e00, %none, %none, %cpu, %false : !torch.list<int>, !torch.float, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?,4],f32>
  %21 = torch.aten.zeros_like %arg0, %none, %none, %none, %false, %none : !torch.vtensor<[?,4],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,4],f32>
  %22 = torch.aten.full_like %arg0, %float2.000000e00, %none, %none, %none, %false, %none : !torch.vtensor<[?,4],f32>, !torch.float, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,4],f32>
  %23 = torch.aten.triu %arg0, %int1 : !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %24 = torch.aten.fill.Scalar %arg0, %float2.000000e00 : !torch.vtensor<[?,4],f32>, !torch.float -> !torch.vtensor<[?,4],f32>
  %25 = torch.aten.eye %0, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?,?],f32>
  %26 = torch.aten.arange.start %int1, %0, %none, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
  %27 = torch.aten.add.Tensor %19, %20, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %28 = torch.aten.add.Tensor %27, %21, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %29 = torch.aten.add.Tensor %28, %22, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %30 = torch.aten.add.Tensor %29, %23, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %31 = torch.aten.add.Tensor %30, %24, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %32 = torch.aten.sum.dim_IntList %25, %none, %false, %none : !torch.vtensor<[?,?],f32>, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[],f32>
  %33 = torch.aten.add.Tensor %31, %32, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
  %34 = torch.aten.sum.dim_IntList %26, %none, %false, %none : !torch.vtensor<[?],si64>, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[],si64>
  %35 = torch.aten.add.Tensor %33, %34, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[?,4],f32>
  %36 = torch.aten.relu %7 : !torch.vtensor<[?,2],f32> -> !torch.vtensor<[?,2],f32>
  %37 = torch.aten.scatter.src %arg0, %int1, %arg1, %36 : !torch.vtensor<[?,4],f32>, !torch.int, !torch.vtensor<[?,2],si64>, !torch.vtensor<[?,2],f32> -> !torch.vtensor<[?,4],f32>
  return %3, %5, %7, %9, %11, %13, %15, %18, %35, %37 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,2],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?],si64>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>
}

// -----

// A reduction kernel loads its tables (it has no places to evaluate one at):
// the gather of a computed table stays a pointwise group of its own.

// CHECK-LABEL: func.func @no_fuse_gather_of_computed_table_into_reduction
// CHECK:         "fusion.group"(%arg0, %arg1)
// CHECK:           torch.aten.exp
// CHECK:           torch.aten.index_select
// CHECK:         fusion.explain = ["consumer fusion.group: gather of a computed table or reshaped index in a reduction group (read by pointwise kernels only)"]
// CHECK-SAME:    kind = "pointwise"
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         kind = "reduction"
func.func @no_fuse_gather_of_computed_table_into_reduction(%x: !torch.vtensor<[4,5],f32>, %j: !torch.vtensor<[2],si64>) -> !torch.vtensor<[2,1],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %0 = torch.aten.exp %x : !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %1 = torch.aten.index_select %0, %int0, %j : !torch.vtensor<[4,5],f32>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2,5],f32>
  %l = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %2 = torch.aten.sum.dim_IntList %1, %l, %true, %none : !torch.vtensor<[2,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[2,1],f32>
  return %2 : !torch.vtensor<[2,1],f32>
}

// -----

// Position ids from an arange, embedded: the index is read at [1,8,1] of the
// [1,8,4] result, and it reads no input, so the kernel evaluates it there
// (the ids computed from an input above stay a kernel of their own).

// CHECK-LABEL: func.func @fuse_embedding_of_position_ids
// CHECK:         "fusion.group"(%arg0)
// CHECK:           torch.aten.arange
// CHECK:           torch.aten.add.Scalar
// CHECK:           torch.aten.unsqueeze
// CHECK:           torch.aten.embedding
// CHECK-NEXT:      "fusion.yield"
// CHECK-NOT:     fusion.explain
// CHECK:         return
func.func @fuse_embedding_of_position_ids(%w: !torch.vtensor<[10,4],f32>) -> !torch.vtensor<[1,8,4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %int8 = torch.constant.int 8
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %0 = torch.aten.arange %int8, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[8],si64>
  %1 = torch.aten.add.Scalar %0, %int1, %int1 : !torch.vtensor<[8],si64>, !torch.int, !torch.int -> !torch.vtensor<[8],si64>
  %2 = torch.aten.unsqueeze %1, %int0 : !torch.vtensor<[8],si64>, !torch.int -> !torch.vtensor<[1,8],si64>
  %3 = torch.aten.embedding %w, %2, %int-1, %false, %false : !torch.vtensor<[10,4],f32>, !torch.vtensor<[1,8],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,8,4],f32>
  return %3 : !torch.vtensor<[1,8,4],f32>
}

// -----

// A reduction kernel loads its gathers' indices where they broadcast: the
// embedding joins the sum, the position ids are a kernel of their own.

// CHECK-LABEL: func.func @no_fuse_embedding_of_position_ids_into_reduction
// CHECK:         "fusion.group"()
// CHECK:           torch.aten.arange
// CHECK:         fusion.explain = ["consumer fusion.group: view of a computed value"]
// CHECK:           torch.aten.embedding
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         fusion.explain = ["producer fusion.group: view of a computed value"], kind = "reduction"
func.func @no_fuse_embedding_of_position_ids_into_reduction(%w: !torch.vtensor<[10,4],f32>) -> !torch.vtensor<[1,8,1],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-1 = torch.constant.int -1
  %int8 = torch.constant.int 8
  %true = torch.constant.bool true
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %0 = torch.aten.arange %int8, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[8],si64>
  %1 = torch.aten.unsqueeze %0, %int0 : !torch.vtensor<[8],si64>, !torch.int -> !torch.vtensor<[1,8],si64>
  %2 = torch.aten.embedding %w, %1, %int-1, %false, %false : !torch.vtensor<[10,4],f32>, !torch.vtensor<[1,8],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,8,4],f32>
  %l = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.sum.dim_IntList %2, %l, %true, %none : !torch.vtensor<[1,8,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,8,1],f32>
  return %3 : !torch.vtensor<[1,8,1],f32>
}
