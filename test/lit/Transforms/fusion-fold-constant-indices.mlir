// RUN: mlirfuse-opt %s --split-input-file --fusion-fold-constant-indices | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --mlirfuse-pipeline | filecheck %s --check-prefix=PIPE

// Falcon's fused qkv: key and value are `qkv[:, :, :, [-2]]` and `[-1]`,
// index tensors torch.export lifts and copies (the importer inlines them as
// literals). The clones fold away and each index becomes a slice of the
// head dim: a view, read through strides, with no gather and no clone left.

// CHECK-LABEL: func.func @fuse_index_by_constant_as_slice
// CHECK-SAME:    (%[[QKV:[^:]+]]: !torch.vtensor<[2,8,2,4,8],f32>)
// CHECK-NEXT:    %[[D0:.+]] = torch.constant.int 3
// CHECK-NEXT:    %[[S0:.+]] = torch.constant.int 2
// CHECK-NEXT:    %[[E0:.+]] = torch.constant.int 3
// CHECK-NEXT:    %[[ST0:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[K:.+]] = torch.aten.slice.Tensor %[[QKV]], %[[D0]], %[[S0]], %[[E0]], %[[ST0]] : !torch.vtensor<[2,8,2,4,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,8,2,1,8],f32>
// CHECK-NEXT:    %[[D1:.+]] = torch.constant.int 3
// CHECK-NEXT:    %[[S1:.+]] = torch.constant.int 3
// CHECK-NEXT:    %[[E1:.+]] = torch.constant.int 4
// CHECK-NEXT:    %[[ST1:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[V:.+]] = torch.aten.slice.Tensor %[[QKV]], %[[D1]], %[[S1]], %[[E1]], %[[ST1]] : {{.+}} -> !torch.vtensor<[2,8,2,1,8],f32>
// CHECK-NEXT:    return %[[K]], %[[V]]

// The whole pipeline launches nothing: the slices are views of the argument.
// PIPE-LABEL: func.func @fuse_index_by_constant_as_slice
// PIPE-NOT:     fusion.launch
// PIPE:         torch.aten.slice.Tensor
// PIPE-NOT:     fusion.launch
// PIPE:         return
func.func @fuse_index_by_constant_as_slice(%qkv: !torch.vtensor<[2,8,2,4,8],f32>) -> (!torch.vtensor<[2,8,2,1,8],f32>, !torch.vtensor<[2,8,2,1,8],f32>) {
  %c0 = torch.vtensor.literal(dense<-2> : tensor<1xsi64>) : !torch.vtensor<[1],si64>
  %c1 = torch.vtensor.literal(dense<-1> : tensor<1xsi64>) : !torch.vtensor<[1],si64>
  %none = torch.constant.none
  %0 = torch.aten.clone %c0, %none : !torch.vtensor<[1],si64>, !torch.none -> !torch.vtensor<[1],si64>
  %1 = torch.prim.ListConstruct %none, %none, %none, %0 : (!torch.none, !torch.none, !torch.none, !torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %2 = torch.aten.index.Tensor %qkv, %1 : !torch.vtensor<[2,8,2,4,8],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,8,2,1,8],f32>
  %3 = torch.aten.clone %c1, %none : !torch.vtensor<[1],si64>, !torch.none -> !torch.vtensor<[1],si64>
  %4 = torch.prim.ListConstruct %none, %none, %none, %3 : (!torch.none, !torch.none, !torch.none, !torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %5 = torch.aten.index.Tensor %qkv, %4 : !torch.vtensor<[2,8,2,4,8],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,8,2,1,8],f32>
  return %2, %5 : !torch.vtensor<[2,8,2,1,8],f32>, !torch.vtensor<[2,8,2,1,8],f32>
}

// -----

// A 0-d index drops the dim: a select.

// CHECK-LABEL: func.func @fuse_index_by_0d_constant_as_select
// CHECK:         torch.aten.select.int %arg0, %{{.+}}, %{{.+}} : !torch.vtensor<[4,6],f32>, !torch.int, !torch.int -> !torch.vtensor<[6],f32>
// CHECK-NOT:     torch.aten.index.Tensor
func.func @fuse_index_by_0d_constant_as_select(%x: !torch.vtensor<[4,6],f32>) -> !torch.vtensor<[6],f32> {
  %c = torch.vtensor.literal(dense<1> : tensor<si64>) : !torch.vtensor<[],si64>
  %0 = torch.prim.ListConstruct %c : (!torch.vtensor<[],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %x, %0 : !torch.vtensor<[4,6],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[6],f32>
  return %1 : !torch.vtensor<[6],f32>
}

// -----

// An index past the dim's end raises in eager: it stays a gather (whose launch checks it).

// CHECK-LABEL: func.func @no_fuse_index_out_of_range
// CHECK:         torch.aten.index.Tensor
// PIPE-LABEL:  func.func @no_fuse_index_out_of_range
// PIPE:          "fusion.launch"(%{{.+}}, %arg0) {kernel = @fused_index_0}
func.func @no_fuse_index_out_of_range(%x: !torch.vtensor<[4,6],f32>) -> !torch.vtensor<[1,6],f32> {
  %c = torch.vtensor.literal(dense<4> : tensor<1xsi64>) : !torch.vtensor<[1],si64>
  %0 = torch.prim.ListConstruct %c : (!torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %x, %0 : !torch.vtensor<[4,6],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[1,6],f32>
  return %1 : !torch.vtensor<[1,6],f32>
}

// -----

// Two elements are a gather of two rows, not a slice.

// CHECK-LABEL: func.func @no_fuse_index_by_two_elements
// CHECK:         torch.aten.index.Tensor
func.func @no_fuse_index_by_two_elements(%x: !torch.vtensor<[4,6],f32>) -> !torch.vtensor<[2,6],f32> {
  %c = torch.vtensor.literal(dense<[3, 0]> : tensor<2xsi64>) : !torch.vtensor<[2],si64>
  %0 = torch.prim.ListConstruct %c : (!torch.vtensor<[2],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %x, %0 : !torch.vtensor<[4,6],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,6],f32>
  return %1 : !torch.vtensor<[2,6],f32>
}

// -----

// A bool index is a mask: left alone.

// CHECK-LABEL: func.func @no_fuse_index_by_bool
// CHECK:         torch.aten.index.Tensor
func.func @no_fuse_index_by_bool(%x: !torch.vtensor<[1,6],f32>) -> !torch.vtensor<[1,6],f32> {
  %c = torch.vtensor.literal(dense<true> : tensor<1xi1>) : !torch.vtensor<[1],i1>
  %0 = torch.prim.ListConstruct %c : (!torch.vtensor<[1],i1>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %x, %0 : !torch.vtensor<[1,6],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[1,6],f32>
  return %1 : !torch.vtensor<[1,6],f32>
}

// -----

// An index tensor computed at run time (a function argument) is a gather.

// CHECK-LABEL: func.func @no_fuse_index_by_argument
// CHECK:         torch.aten.index.Tensor
func.func @no_fuse_index_by_argument(%x: !torch.vtensor<[4,6],f32>, %i: !torch.vtensor<[1],si64>) -> !torch.vtensor<[1,6],f32> {
  %none = torch.constant.none
  %c = torch.aten.clone %i, %none : !torch.vtensor<[1],si64>, !torch.none -> !torch.vtensor<[1],si64>
  %0 = torch.prim.ListConstruct %c : (!torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %x, %0 : !torch.vtensor<[4,6],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[1,6],f32>
  return %1 : !torch.vtensor<[1,6],f32>
}
