// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --pass-pipeline='builtin.module(fusion-fuse-vertical)' | filecheck %s

// Pools inside groups (mlirfuse/ops/pooling.py): each output element loops over
// its window of the input, which, like a gather's table, is a group input
// (or a view of one); pointwise consumers join as an epilogue. The no_fuse
// cases name why (legality.py, pooling.py).

// max_pool2d with indices and its epilogue: one group yielding both.

// CHECK-LABEL: func.func @fuse_max_pool2d_with_indices_epilogue
// CHECK:         %[[G:.+]]:2 = "fusion.group"(%arg0) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[1,2,5,5],f32>):
// CHECK:           %[[V:.+]], %[[I:.+]] = torch.aten.max_pool2d_with_indices %[[X]],
// CHECK-NEXT:      %[[R:.+]] = torch.aten.relu %[[V]]
// CHECK:           %[[A:.+]] = torch.aten.add.Scalar %[[R]]
// CHECK-NEXT:      "fusion.yield"(%[[A]], %[[I]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]#0, %[[G]]#1
func.func @fuse_max_pool2d_with_indices_epilogue(%arg0: !torch.vtensor<[1,2,5,5],f32>) -> (!torch.vtensor<[1,2,3,3],f32>, !torch.vtensor<[1,2,3,3],si64>) {
  %int3 = torch.constant.int 3
  %0 = torch.prim.ListConstruct %int3, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %int2 = torch.constant.int 2
  %1 = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %int1 = torch.constant.int 1
  %2 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %result0, %result1 = torch.aten.max_pool2d_with_indices %arg0, %0, %1, %2, %3, %false : !torch.vtensor<[1,2,5,5],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,3,3],f32>, !torch.vtensor<[1,2,3,3],si64>
  %4 = torch.aten.relu %result0 : !torch.vtensor<[1,2,3,3],f32> -> !torch.vtensor<[1,2,3,3],f32>
  %5 = torch.aten.add.Scalar %4, %int1, %int1 : !torch.vtensor<[1,2,3,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,2,3,3],f32>
  return %5, %result1 : !torch.vtensor<[1,2,3,3],f32>, !torch.vtensor<[1,2,3,3],si64>
}

// -----

// An adaptive max pool of a permuted input (channels-last seen as NCW): the
// view joins the group and the windows are read through it.

// CHECK-LABEL: func.func @fuse_adaptive_max_pool1d_of_a_view
// CHECK:         "fusion.group"(%arg0) ({
// CHECK:           %[[P:.+]] = torch.aten.permute
// CHECK:           %{{.+}}, %{{.+}} = torch.aten.adaptive_max_pool1d %[[P]],
// CHECK:           torch.aten.mul.Scalar
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
func.func @fuse_adaptive_max_pool1d_of_a_view(%arg0: !torch.vtensor<[2,7,4],f32>) -> !torch.vtensor<[2,4,3],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %p = torch.prim.ListConstruct %int0, %int2, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.permute %arg0, %p : !torch.vtensor<[2,7,4],f32>, !torch.list<int> -> !torch.vtensor<[2,4,7],f32>
  %1 = torch.prim.ListConstruct %int3 : (!torch.int) -> !torch.list<int>
  %result0, %result1 = torch.aten.adaptive_max_pool1d %0, %1 : !torch.vtensor<[2,4,7],f32>, !torch.list<int> -> !torch.vtensor<[2,4,3],f32>, !torch.vtensor<[2,4,3],si64>
  %2 = torch.aten.mul.Scalar %result0, %int2 : !torch.vtensor<[2,4,3],f32>, !torch.int -> !torch.vtensor<[2,4,3],f32>
  return %2 : !torch.vtensor<[2,4,3],f32>
}

// -----

// An elementwise producer read only by the pool is its window prologue:
// one group, exp recomputed at each window position.

// CHECK-LABEL: func.func @fuse_avg_pool2d_window_prologue
// CHECK:         "fusion.group"(%arg0) ({
// CHECK:           %[[E:.+]] = torch.aten.exp
// CHECK:           torch.aten.avg_pool2d %[[E]],
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
func.func @fuse_avg_pool2d_window_prologue(%arg0: !torch.vtensor<[1,2,5,5],f32>) -> !torch.vtensor<[1,2,3,3],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[1,2,5,5],f32> -> !torch.vtensor<[1,2,5,5],f32>
  %int3 = torch.constant.int 3
  %1 = torch.prim.ListConstruct %int3, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %int2 = torch.constant.int 2
  %2 = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %int1 = torch.constant.int 1
  %3 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %none = torch.constant.none
  %4 = torch.aten.avg_pool2d %0, %1, %2, %3, %true, %false, %none : !torch.vtensor<[1,2,5,5],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,2,3,3],f32>
  return %4 : !torch.vtensor<[1,2,3,3],f32>
}

// -----

// A window prologue is recomputed per position, so it is elementwise: a
// pool of a pool is two kernels.

// CHECK-LABEL: func.func @no_fuse_max_pool1d_of_a_pool
// CHECK:         fusion.explain = ["consumer fusion.group: pools a computed value that is not elementwise (torch.aten.avg_pool1d; a window prologue is recomputed per position)"]
// CHECK:         fusion.explain = ["producer fusion.group: pools a computed value that is not elementwise (torch.aten.avg_pool1d; a window prologue is recomputed per position)"]
func.func @no_fuse_max_pool1d_of_a_pool(%arg0: !torch.vtensor<[2,3,8],f32>) -> !torch.vtensor<[2,3,2],f32> {
  %int2 = torch.constant.int 2
  %0 = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %int0 = torch.constant.int 0
  %1 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %int1 = torch.constant.int 1
  %2 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %3 = torch.aten.avg_pool1d %arg0, %0, %0, %1, %false, %true : !torch.vtensor<[2,3,8],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool -> !torch.vtensor<[2,3,4],f32>
  %4 = torch.aten.max_pool1d %3, %0, %0, %1, %2, %false : !torch.vtensor<[2,3,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,3,2],f32>
  return %4 : !torch.vtensor<[2,3,2],f32>
}

// -----

// Pools are read by pointwise kernels only: a reduction of a pool is a kernel of its own.

// CHECK-LABEL: func.func @no_fuse_adaptive_avg_pool2d_into_a_reduction
// CHECK:         fusion.explain = ["consumer fusion.group: pool or upsampling in a reduction group (windows are read by pointwise kernels only)"]
// CHECK-SAME:    kind = "pointwise"
func.func @no_fuse_adaptive_avg_pool2d_into_a_reduction(%arg0: !torch.vtensor<[1,2,5,7],f32>) -> !torch.vtensor<[1,2,2],f32> {
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %0 = torch.prim.ListConstruct %int2, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.adaptive_avg_pool2d %arg0, %0 : !torch.vtensor<[1,2,5,7],f32>, !torch.list<int> -> !torch.vtensor<[1,2,2,3],f32>
  %int-1 = torch.constant.int -1
  %2 = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %3 = torch.aten.sum.dim_IntList %1, %2, %false, %none : !torch.vtensor<[1,2,2,3],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,2,2],f32>
  return %3 : !torch.vtensor<[1,2,2],f32>
}

// -----

// Only static shapes are pooled in kernels (pooling.py: "input or result is
// not a statically shaped tensor"): the op stays ATen, outside any group.

// CHECK-LABEL: func.func @no_fuse_max_pool1d_dynamic_shape
// CHECK-NOT:     fusion.group
// CHECK:         torch.aten.max_pool1d %arg0
// CHECK-NOT:     fusion.group
func.func @no_fuse_max_pool1d_dynamic_shape(%arg0: !torch.vtensor<[?,3,9],f32>) -> !torch.vtensor<[?,3,4],f32> {
  %int3 = torch.constant.int 3
  %0 = torch.prim.ListConstruct %int3 : (!torch.int) -> !torch.list<int>
  %int2 = torch.constant.int 2
  %1 = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %int0 = torch.constant.int 0
  %2 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %int1 = torch.constant.int 1
  %3 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %4 = torch.aten.max_pool1d %arg0, %0, %1, %2, %3, %false : !torch.vtensor<[?,3,9],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,3,4],f32>
  return %4 : !torch.vtensor<[?,3,4],f32>
}

// -----

// Nearest upsampling reads its input at one computed position per output:
// a window prologue (relu) and an epilogue (mul) join it.

// CHECK-LABEL: func.func @fuse_upsample_nearest2d_prologue_epilogue
// CHECK:         "fusion.group"(%arg0) ({
// CHECK:           %[[R:.+]] = torch.aten.relu
// CHECK:           %[[U:.+]] = torch.aten.upsample_nearest2d.vec %[[R]],
// CHECK:           torch.aten.mul.Scalar %[[U]]
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
func.func @fuse_upsample_nearest2d_prologue_epilogue(%arg0: !torch.vtensor<[1,2,3,4],f32>) -> !torch.vtensor<[1,2,6,6],f32> {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[1,2,3,4],f32> -> !torch.vtensor<[1,2,3,4],f32>
  %float2 = torch.constant.float 2.000000e+00
  %float1.5 = torch.constant.float 1.500000e+00
  %1 = torch.prim.ListConstruct %float2, %float1.5 : (!torch.float, !torch.float) -> !torch.list<float>
  %none = torch.constant.none
  %2 = torch.aten.upsample_nearest2d.vec %0, %none, %1 : !torch.vtensor<[1,2,3,4],f32>, !torch.none, !torch.list<float> -> !torch.vtensor<[1,2,6,6],f32>
  %int3 = torch.constant.int 3
  %3 = torch.aten.mul.Scalar %2, %int3 : !torch.vtensor<[1,2,6,6],f32>, !torch.int -> !torch.vtensor<[1,2,6,6],f32>
  return %3 : !torch.vtensor<[1,2,6,6],f32>
}

// -----

// Upsampling joins no reduction group either.

// CHECK-LABEL: func.func @no_fuse_upsample_nearest1d_into_a_reduction
// CHECK:         fusion.explain = ["consumer fusion.group: pool or upsampling in a reduction group (windows are read by pointwise kernels only)"]
func.func @no_fuse_upsample_nearest1d_into_a_reduction(%arg0: !torch.vtensor<[2,3,5],f32>) -> !torch.vtensor<[2,3,1],f32> {
  %int7 = torch.constant.int 7
  %0 = torch.prim.ListConstruct %int7 : (!torch.int) -> !torch.list<int>
  %none = torch.constant.none
  %1 = torch.aten.upsample_nearest1d.vec %arg0, %0, %none : !torch.vtensor<[2,3,5],f32>, !torch.list<int>, !torch.none -> !torch.vtensor<[2,3,7],f32>
  %int-1 = torch.constant.int -1
  %2 = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %3 = torch.aten.sum.dim_IntList %1, %2, %true, %none : !torch.vtensor<[2,3,7],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[2,3,1],f32>
  return %3 : !torch.vtensor<[2,3,1],f32>
}

// -----

// The 1-d pools, as torch.export imports F.avg_pool1d, F.max_pool1d (with and
// without return_indices) and F.adaptive_avg_pool1d: one output space, one group.

// CHECK-LABEL: func.func @fuse_pools_1d
// CHECK:         "fusion.group"(%arg0) ({
// CHECK-DAG:       torch.aten.avg_pool1d
// CHECK-DAG:       torch.aten.max_pool1d_with_indices
// CHECK-DAG:       torch.aten.adaptive_avg_pool1d
// CHECK-DAG:       torch.aten.max_pool1d %
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_pools_1d(%arg0: !torch.vtensor<[1,2,9],f32>) -> (!torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1,2,4],si64>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %k = torch.prim.ListConstruct %int3 : (!torch.int) -> !torch.list<int>
  %s = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %o = torch.prim.ListConstruct %int4 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.avg_pool1d %arg0, %k, %s, %p, %false, %true : !torch.vtensor<[1,2,9],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool -> !torch.vtensor<[1,2,4],f32>
  %1, %2 = torch.aten.max_pool1d_with_indices %arg0, %k, %s, %p, %d, %false : !torch.vtensor<[1,2,9],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1,2,4],si64>
  %3 = torch.aten.adaptive_avg_pool1d %arg0, %o : !torch.vtensor<[1,2,9],f32>, !torch.list<int> -> !torch.vtensor<[1,2,4],f32>
  %4 = torch.aten.max_pool1d %arg0, %k, %s, %p, %d, %false : !torch.vtensor<[1,2,9],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,4],f32>
  %5 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1,2,4],f32>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %6 = torch.aten.add.Tensor %5, %3, %int1 : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1,2,4],f32>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  %7 = torch.aten.add.Tensor %6, %4, %int1 : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1,2,4],f32>, !torch.int -> !torch.vtensor<[1,2,4],f32>
  return %7, %2 : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1,2,4],si64>
}

// -----

// The 2-d pools: max_pool2d without indices (torch.export's F.max_pool2d),
// adaptive_avg_pool2d, adaptive_max_pool2d and _adaptive_avg_pool2d (the
// spelling in torch.compile's graphs): one group.

// CHECK-LABEL: func.func @fuse_pools_2d
// CHECK:         "fusion.group"(%arg0) ({
// CHECK-DAG:       torch.aten.max_pool2d %
// CHECK-DAG:       torch.aten.adaptive_avg_pool2d
// CHECK-DAG:       torch.aten.adaptive_max_pool2d
// CHECK-DAG:       torch.aten._adaptive_avg_pool2d
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_pools_2d(%arg0: !torch.vtensor<[1,2,6,6],f32>) -> !torch.vtensor<[1,2,2,2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %false = torch.constant.bool false
  %k = torch.prim.ListConstruct %int3, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %s = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.max_pool2d %arg0, %k, %s, %p, %d, %false : !torch.vtensor<[1,2,6,6],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,2,2],f32>
  %1 = torch.aten.adaptive_avg_pool2d %arg0, %s : !torch.vtensor<[1,2,6,6],f32>, !torch.list<int> -> !torch.vtensor<[1,2,2,2],f32>
  %2, %3 = torch.aten.adaptive_max_pool2d %arg0, %s : !torch.vtensor<[1,2,6,6],f32>, !torch.list<int> -> !torch.vtensor<[1,2,2,2],f32>, !torch.vtensor<[1,2,2,2],si64>
  %4 = torch.aten._adaptive_avg_pool2d %arg0, %s : !torch.vtensor<[1,2,6,6],f32>, !torch.list<int> -> !torch.vtensor<[1,2,2,2],f32>
  %5 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[1,2,2,2],f32>, !torch.vtensor<[1,2,2,2],f32>, !torch.int -> !torch.vtensor<[1,2,2,2],f32>
  %6 = torch.aten.add.Tensor %5, %2, %int1 : !torch.vtensor<[1,2,2,2],f32>, !torch.vtensor<[1,2,2,2],f32>, !torch.int -> !torch.vtensor<[1,2,2,2],f32>
  %7 = torch.aten.add.Tensor %6, %4, %int1 : !torch.vtensor<[1,2,2,2],f32>, !torch.vtensor<[1,2,2,2],f32>, !torch.int -> !torch.vtensor<[1,2,2,2],f32>
  return %7 : !torch.vtensor<[1,2,2,2],f32>
}

// -----

// The 3-d pools (stride [] means the kernel size, as torch.export gives it).

// CHECK-LABEL: func.func @fuse_pools_3d
// CHECK:         "fusion.group"(%arg0) ({
// CHECK-DAG:       torch.aten.avg_pool3d
// CHECK-DAG:       torch.aten.max_pool3d %
// CHECK-DAG:       torch.aten.max_pool3d_with_indices
// CHECK-DAG:       torch.aten.adaptive_avg_pool3d
// CHECK-DAG:       torch.aten._adaptive_avg_pool3d
// CHECK-DAG:       torch.aten.adaptive_max_pool3d
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_pools_3d(%arg0: !torch.vtensor<[1,2,4,4,4],f32>) -> (!torch.vtensor<[1,2,2,2,2],f32>, !torch.vtensor<[1,2,2,2,2],si64>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %none = torch.constant.none
  %k = torch.prim.ListConstruct %int2, %int2, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %s = torch.prim.ListConstruct  : () -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0, %int0 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.avg_pool3d %arg0, %k, %s, %p, %false, %true, %none : !torch.vtensor<[1,2,4,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,2,2,2,2],f32>
  %1 = torch.aten.max_pool3d %arg0, %k, %s, %p, %d, %false : !torch.vtensor<[1,2,4,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,2,2,2],f32>
  %2, %3 = torch.aten.max_pool3d_with_indices %arg0, %k, %s, %p, %d, %false : !torch.vtensor<[1,2,4,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,2,2,2],f32>, !torch.vtensor<[1,2,2,2,2],si64>
  %4 = torch.aten.adaptive_avg_pool3d %arg0, %k : !torch.vtensor<[1,2,4,4,4],f32>, !torch.list<int> -> !torch.vtensor<[1,2,2,2,2],f32>
  %5 = torch.aten._adaptive_avg_pool3d %arg0, %k : !torch.vtensor<[1,2,4,4,4],f32>, !torch.list<int> -> !torch.vtensor<[1,2,2,2,2],f32>
  %6, %7 = torch.aten.adaptive_max_pool3d %arg0, %k : !torch.vtensor<[1,2,4,4,4],f32>, !torch.list<int> -> !torch.vtensor<[1,2,2,2,2],f32>, !torch.vtensor<[1,2,2,2,2],si64>
  %8 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[1,2,2,2,2],f32>, !torch.vtensor<[1,2,2,2,2],f32>, !torch.int -> !torch.vtensor<[1,2,2,2,2],f32>
  %9 = torch.aten.add.Tensor %8, %2, %int1 : !torch.vtensor<[1,2,2,2,2],f32>, !torch.vtensor<[1,2,2,2,2],f32>, !torch.int -> !torch.vtensor<[1,2,2,2,2],f32>
  %10 = torch.aten.add.Tensor %9, %4, %int1 : !torch.vtensor<[1,2,2,2,2],f32>, !torch.vtensor<[1,2,2,2,2],f32>, !torch.int -> !torch.vtensor<[1,2,2,2,2],f32>
  %11 = torch.aten.add.Tensor %10, %5, %int1 : !torch.vtensor<[1,2,2,2,2],f32>, !torch.vtensor<[1,2,2,2,2],f32>, !torch.int -> !torch.vtensor<[1,2,2,2,2],f32>
  %12 = torch.aten.add.Tensor %11, %6, %int1 : !torch.vtensor<[1,2,2,2,2],f32>, !torch.vtensor<[1,2,2,2,2],f32>, !torch.int -> !torch.vtensor<[1,2,2,2,2],f32>
  return %12, %3 : !torch.vtensor<[1,2,2,2,2],f32>, !torch.vtensor<[1,2,2,2,2],si64>
}

// -----

// Pools need static shapes (their windows are unrolled from the sizes): with
// a dynamic batch each pool stays ATen and the group of its input's
// producer names why.

// CHECK-LABEL: func.func @no_fuse_pools_of_dynamic_shape
// CHECK:         fusion.explain = [
// CHECK-SAME:      "consumer torch.aten.avg_pool1d: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.max_pool1d_with_indices: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.adaptive_avg_pool1d: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.adaptive_max_pool1d: input or result is not a statically shaped tensor"
// CHECK:         fusion.explain = [
// CHECK-SAME:      "consumer torch.aten.avg_pool2d: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.max_pool2d: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.max_pool2d_with_indices: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.adaptive_avg_pool2d: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten._adaptive_avg_pool2d: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.adaptive_max_pool2d: input or result is not a statically shaped tensor"
// CHECK:         fusion.explain = [
// CHECK-SAME:      "consumer torch.aten.avg_pool3d: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.max_pool3d: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.max_pool3d_with_indices: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.adaptive_avg_pool3d: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten._adaptive_avg_pool3d: input or result is not a statically shaped tensor"
// CHECK-SAME:      "consumer torch.aten.adaptive_max_pool3d: input or result is not a statically shaped tensor"
func.func @no_fuse_pools_of_dynamic_shape(%arg0: !torch.vtensor<[?,2,9],f32>, %arg1: !torch.vtensor<[?,2,6,6],f32>, %arg2: !torch.vtensor<[?,2,4,4,4],f32>) -> (!torch.vtensor<[?,2,4],f32>, !torch.vtensor<[?,2,4],f32>, !torch.vtensor<[?,2,4],f32>, !torch.vtensor<[?,2,4],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %none = torch.constant.none
  %o1 = torch.prim.ListConstruct %int4 : (!torch.int) -> !torch.list<int>
  %k1 = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %s1 = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %p1 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %d1 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %k2 = torch.prim.ListConstruct %int3, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %s2 = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %p2 = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %d2 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %k3 = torch.prim.ListConstruct %int2, %int2, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %s3 = torch.prim.ListConstruct %int2, %int2, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %p3 = torch.prim.ListConstruct %int0, %int0, %int0 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %d3 = torch.prim.ListConstruct %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.neg %arg0 : !torch.vtensor<[?,2,9],f32> -> !torch.vtensor<[?,2,9],f32>
  %2 = torch.aten.avg_pool1d %1, %k1, %s1, %p1, %false, %true : !torch.vtensor<[?,2,9],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool -> !torch.vtensor<[?,2,4],f32>
  %3:2 = torch.aten.max_pool1d_with_indices %1, %k1, %s1, %p1, %d1, %false : !torch.vtensor<[?,2,9],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,2,4],f32>, !torch.vtensor<[?,2,4],si64>
  %4 = torch.aten.adaptive_avg_pool1d %1, %o1 : !torch.vtensor<[?,2,9],f32>, !torch.list<int> -> !torch.vtensor<[?,2,4],f32>
  %5:2 = torch.aten.adaptive_max_pool1d %1, %o1 : !torch.vtensor<[?,2,9],f32>, !torch.list<int> -> !torch.vtensor<[?,2,4],f32>, !torch.vtensor<[?,2,4],si64>
  %6 = torch.aten.neg %arg1 : !torch.vtensor<[?,2,6,6],f32> -> !torch.vtensor<[?,2,6,6],f32>
  %7 = torch.aten.avg_pool2d %6, %k2, %s2, %p2, %false, %true, %none : !torch.vtensor<[?,2,6,6],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[?,2,2,2],f32>
  %8 = torch.aten.max_pool2d %6, %k2, %s2, %p2, %d2, %false : !torch.vtensor<[?,2,6,6],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,2,2,2],f32>
  %9:2 = torch.aten.max_pool2d_with_indices %6, %k2, %s2, %p2, %d2, %false : !torch.vtensor<[?,2,6,6],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],si64>
  %10 = torch.aten.adaptive_avg_pool2d %6, %s2 : !torch.vtensor<[?,2,6,6],f32>, !torch.list<int> -> !torch.vtensor<[?,2,2,2],f32>
  %11 = torch.aten._adaptive_avg_pool2d %6, %s2 : !torch.vtensor<[?,2,6,6],f32>, !torch.list<int> -> !torch.vtensor<[?,2,2,2],f32>
  %12:2 = torch.aten.adaptive_max_pool2d %6, %s2 : !torch.vtensor<[?,2,6,6],f32>, !torch.list<int> -> !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],si64>
  %13 = torch.aten.neg %arg2 : !torch.vtensor<[?,2,4,4,4],f32> -> !torch.vtensor<[?,2,4,4,4],f32>
  %14 = torch.aten.avg_pool3d %13, %k3, %s3, %p3, %false, %true, %none : !torch.vtensor<[?,2,4,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[?,2,2,2,2],f32>
  %15 = torch.aten.max_pool3d %13, %k3, %s3, %p3, %d3, %false : !torch.vtensor<[?,2,4,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,2,2,2,2],f32>
  %16:2 = torch.aten.max_pool3d_with_indices %13, %k3, %s3, %p3, %d3, %false : !torch.vtensor<[?,2,4,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],si64>
  %17 = torch.aten.adaptive_avg_pool3d %13, %s3 : !torch.vtensor<[?,2,4,4,4],f32>, !torch.list<int> -> !torch.vtensor<[?,2,2,2,2],f32>
  %18 = torch.aten._adaptive_avg_pool3d %13, %s3 : !torch.vtensor<[?,2,4,4,4],f32>, !torch.list<int> -> !torch.vtensor<[?,2,2,2,2],f32>
  %19:2 = torch.aten.adaptive_max_pool3d %13, %s3 : !torch.vtensor<[?,2,4,4,4],f32>, !torch.list<int> -> !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],si64>
  return %2, %3#0, %4, %5#0, %7, %8, %9#0, %10, %11, %12#0, %14, %15, %16#0, %17, %18, %19#0 : !torch.vtensor<[?,2,4],f32>, !torch.vtensor<[?,2,4],f32>, !torch.vtensor<[?,2,4],f32>, !torch.vtensor<[?,2,4],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>, !torch.vtensor<[?,2,2,2,2],f32>
}
