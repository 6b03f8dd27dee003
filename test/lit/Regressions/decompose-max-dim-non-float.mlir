// RUN: mlirfuse-opt %s --split-input-file --fusion-decompose | filecheck %s

// max.dim/min.dim of a non-float tensor stay one ATen call: their amax/argmax
// would not fuse (reductions.py fuses max/argmax on floats only), and ATen has
// no argmax/argmin on bool.

// CHECK-LABEL: func.func @no_decompose_max_dim_bool
// CHECK-NOT:     torch.aten.argmax
// CHECK:         torch.aten.max.dim
func.func @no_decompose_max_dim_bool(%x: !torch.vtensor<[4,5],i1>) -> (!torch.vtensor<[4],i1>, !torch.vtensor<[4],si64>) {
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %values, %indices = torch.aten.max.dim %x, %int1, %false : !torch.vtensor<[4,5],i1>, !torch.int, !torch.bool -> !torch.vtensor<[4],i1>, !torch.vtensor<[4],si64>
  return %values, %indices : !torch.vtensor<[4],i1>, !torch.vtensor<[4],si64>
}

// -----

// CHECK-LABEL: func.func @no_decompose_min_dim_int
// CHECK-NOT:     torch.aten.argmin
// CHECK:         torch.aten.min.dim
func.func @no_decompose_min_dim_int(%x: !torch.vtensor<[4,5],si32>) -> (!torch.vtensor<[4,1],si32>, !torch.vtensor<[4,1],si64>) {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %values, %indices = torch.aten.min.dim %x, %int1, %true : !torch.vtensor<[4,5],si32>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],si32>, !torch.vtensor<[4,1],si64>
  return %values, %indices : !torch.vtensor<[4,1],si32>, !torch.vtensor<[4,1],si64>
}

// -----

// A float max.dim still decomposes.

// CHECK-LABEL: func.func @decompose_max_dim_f32
// CHECK:         torch.aten.amax
// CHECK:         torch.aten.argmax
// CHECK-NOT:     torch.aten.max.dim
func.func @decompose_max_dim_f32(%x: !torch.vtensor<[4,5],f32>) -> (!torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],si64>) {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %values, %indices = torch.aten.max.dim %x, %int1, %true : !torch.vtensor<[4,5],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],si64>
  return %values, %indices : !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],si64>
}
