// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --fusion-fuse-elementwise | filecheck %s

// A pad of a group input joins the group: the kernel reads the input at
// shifted coordinates (masked with the pad value, mirrored or clamped), so
// no padded copy is made; a cat of group inputs likewise (at the end of the
// file). A pad of a value computed by elementwise ops joins its producer.
// A pad of a reduction result or of a creation op, a pad or cat next to a
// reduction and a pad by non-constant sizes stay outside, with the reason.

// CHECK-LABEL: func.func @fuse_pad_with_consumer
// CHECK:         "fusion.group"(%arg0, %arg1)
// CHECK:           torch.aten.pad
// CHECK:           torch.aten.mul.Tensor
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_pad_with_consumer(%arg0: !torch.vtensor<[3,5],f32>, %arg1: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int0 = torch.constant.int 0
  %0 = torch.prim.ListConstruct %int1, %int2, %int0, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "constant"
  %float5.000000e-01 = torch.constant.float 5.000000e-01
  %1 = torch.aten.pad %arg0, %0, %str, %float5.000000e-01 : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.str, !torch.float -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.mul.Tensor %1, %arg1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  return %2 : !torch.vtensor<[4,8],f32>
}

// -----

// CHECK-LABEL: func.func @fuse_constant_pad_nd_of_a_view
// CHECK:         "fusion.group"(%arg0)
// CHECK:           torch.aten.transpose.int
// CHECK:           torch.aten.constant_pad_nd
// CHECK:           torch.aten.exp
// CHECK:         }) {kind = "pointwise"}
func.func @fuse_constant_pad_nd_of_a_view(%arg0: !torch.vtensor<[5,3],f32>) -> !torch.vtensor<[5,7],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %0 = torch.aten.transpose.int %arg0, %int0, %int1 : !torch.vtensor<[5,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3,5],f32>
  %1 = torch.prim.ListConstruct %int2, %int0, %int1, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %float = torch.constant.float 2.500000e-01
  %2 = torch.aten.constant_pad_nd %0, %1, %float : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[5,7],f32>
  %3 = torch.aten.exp %2 : !torch.vtensor<[5,7],f32> -> !torch.vtensor<[5,7],f32>
  return %3 : !torch.vtensor<[5,7],f32>
}

// -----

// A pad of a computed value joins its producer: the kernel evaluates exp at
// the pad's (mirrored) coordinates.

// CHECK-LABEL: func.func @fuse_pad_of_computed
// CHECK:         "fusion.group"(%arg0)
// CHECK:           torch.aten.exp
// CHECK:           torch.aten.pad
// CHECK:           torch.aten.mul.Tensor
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     fusion.group
// CHECK:         return
func.func @fuse_pad_of_computed(%arg0: !torch.vtensor<[3,5],f32>) -> !torch.vtensor<[3,7],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[3,5],f32> -> !torch.vtensor<[3,5],f32>
  %int1 = torch.constant.int 1
  %1 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "reflect"
  %none = torch.constant.none
  %2 = torch.aten.pad %0, %1, %str, %none : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[3,7],f32>
  %3 = torch.aten.mul.Tensor %2, %2 : !torch.vtensor<[3,7],f32>, !torch.vtensor<[3,7],f32> -> !torch.vtensor<[3,7],f32>
  return %3 : !torch.vtensor<[3,7],f32>
}

// -----

// The producer is also read in its own iteration space: a copy of it joins
// the pad's group (recomputed there), the original stays with the other reader.

// CHECK-LABEL: func.func @fuse_pad_of_computed_read_twice
// CHECK:         %[[A:.+]] = "fusion.group"(%arg0)
// CHECK:           torch.aten.exp
// CHECK:           torch.aten.constant_pad_nd
// CHECK:         }) {kind = "pointwise"}
// CHECK:         %[[B:.+]] = "fusion.group"(%arg0)
// CHECK:           torch.aten.exp
// CHECK:           torch.aten.neg
// CHECK:         }) {kind = "pointwise"}
// CHECK:         return %[[A]], %[[B]]
func.func @fuse_pad_of_computed_read_twice(%arg0: !torch.vtensor<[3,5],f32>) -> (!torch.vtensor<[3,7],f32>, !torch.vtensor<[3,5],f32>) {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[3,5],f32> -> !torch.vtensor<[3,5],f32>
  %int1 = torch.constant.int 1
  %1 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %float = torch.constant.float 0.000000e+00
  %2 = torch.aten.constant_pad_nd %0, %1, %float : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[3,7],f32>
  %3 = torch.aten.neg %0 : !torch.vtensor<[3,5],f32> -> !torch.vtensor<[3,5],f32>
  return %2, %3 : !torch.vtensor<[3,7],f32>, !torch.vtensor<[3,5],f32>
}

// -----

// CHECK-LABEL: func.func @no_fuse_pad_of_reduction_result
// CHECK:         %[[SUM:.+]] = "fusion.group"(%arg0)
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         fusion.explain = ["consumer fusion.group: pad of a reduction result"]
// CHECK:         "fusion.group"(%[[SUM]])
// CHECK:           torch.aten.constant_pad_nd
func.func @no_fuse_pad_of_reduction_result(%arg0: !torch.vtensor<[3,5],f32>) -> !torch.vtensor<[3,3],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.sum.dim_IntList %arg0, %0, %true, %none : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[3,1],f32>
  %2 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %float = torch.constant.float 0.000000e+00
  %3 = torch.aten.constant_pad_nd %1, %2, %float : !torch.vtensor<[3,1],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[3,3],f32>
  return %3 : !torch.vtensor<[3,3],f32>
}

// -----

// An arange computes from coordinates, so it is evaluated at the pad's
// (shifted) ones like an elementwise op: one group.

// CHECK-LABEL: func.func @fuse_pad_of_creation_op
// CHECK:         "fusion.group"(%arg0)
// CHECK:           torch.aten.arange.start_step
// CHECK:           torch.aten.add.Tensor
// CHECK:           torch.aten.constant_pad_nd
// CHECK-NEXT:      "fusion.yield"
// CHECK-NOT:     fusion.explain
// CHECK:         return
func.func @fuse_pad_of_creation_op(%arg0: !torch.vtensor<[5],f32>) -> !torch.vtensor<[7],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int5 = torch.constant.int 5
  %int6 = torch.constant.int 6
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %0 = torch.aten.arange.start_step %int0, %int5, %int1, %int6, %none, %cpu, %false : !torch.int, !torch.int, !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[5],f32>
  %1 = torch.aten.add.Tensor %0, %arg0, %int1 : !torch.vtensor<[5],f32>, !torch.vtensor<[5],f32>, !torch.int -> !torch.vtensor<[5],f32>
  %2 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %float = torch.constant.float 0.000000e+00
  %3 = torch.aten.constant_pad_nd %1, %2, %float : !torch.vtensor<[5],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[7],f32>
  return %3 : !torch.vtensor<[7],f32>
}

// -----

// CHECK-LABEL: func.func @no_fuse_pad_into_reduction
// CHECK:         "fusion.group"(%arg0)
// CHECK:           torch.aten.pad
// CHECK:         fusion.explain = ["consumer fusion.group: pad or cat in a reduction group (read by pointwise kernels only)"]
// CHECK:         "fusion.group"
// CHECK:           torch.aten.sum.dim_IntList
func.func @no_fuse_pad_into_reduction(%arg0: !torch.vtensor<[3,5],f32>) -> !torch.vtensor<[3,1],f32> {
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %str = torch.constant.str "replicate"
  %0 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.pad %arg0, %0, %str, %none : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[3,7],f32>
  %2 = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.sum.dim_IntList %1, %2, %true, %none : !torch.vtensor<[3,7],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[3,1],f32>
  return %3 : !torch.vtensor<[3,1],f32>
}

// -----

// CHECK-LABEL: func.func @no_fuse_pad_by_runtime_sizes
// CHECK:         fusion.explain = ["consumer torch.aten.constant_pad_nd: pad by non-constant or dynamic sizes"]
func.func @no_fuse_pad_by_runtime_sizes(%arg0: !torch.vtensor<[3,5],f32>, %n: !torch.int) -> !torch.vtensor<[3,7],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[3,5],f32> -> !torch.vtensor<[3,5],f32>
  %1 = torch.prim.ListConstruct %n, %n : (!torch.int, !torch.int) -> !torch.list<int>
  %float = torch.constant.float 0.000000e+00
  %2 = torch.aten.constant_pad_nd %0, %1, %float : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[3,7],f32>
  return %2 : !torch.vtensor<[3,7],f32>
}

// -----

// A cat of group inputs (pieces of different sizes, one through a view) is
// read the same way: each piece is a pad of itself to the cat's shape, and
// the kernel picks the piece whose range holds the coordinate.

// CHECK-LABEL: func.func @fuse_cat_of_inputs_with_consumer
// CHECK:         "fusion.group"
// CHECK:           torch.aten.transpose.int
// CHECK:           torch.prim.ListConstruct
// CHECK:           torch.aten.cat
// CHECK:           torch.aten.exp
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_cat_of_inputs_with_consumer(%arg0: !torch.vtensor<[3,5],f32>, %arg1: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[3,7],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.transpose.int %arg1, %int0, %int1 : !torch.vtensor<[2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3,2],f32>
  %1 = torch.prim.ListConstruct %arg0, %0 : (!torch.vtensor<[3,5],f32>, !torch.vtensor<[3,2],f32>) -> !torch.list<vtensor>
  %2 = torch.aten.cat %1, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[3,7],f32>
  %3 = torch.aten.exp %2 : !torch.vtensor<[3,7],f32> -> !torch.vtensor<[3,7],f32>
  return %3 : !torch.vtensor<[3,7],f32>
}

// -----

// CHECK-LABEL: func.func @no_fuse_cat_of_inputs_into_reduction
// CHECK:         "fusion.group"(%arg0, %arg1)
// CHECK:           torch.aten.cat
// CHECK:         fusion.explain = ["consumer fusion.group: pad or cat in a reduction group (read by pointwise kernels only)"]
// CHECK:           torch.aten.sum.dim_IntList
func.func @no_fuse_cat_of_inputs_into_reduction(%arg0: !torch.vtensor<[3,5],f32>, %arg1: !torch.vtensor<[3,2],f32>) -> !torch.vtensor<[3,1],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %0 = torch.prim.ListConstruct %arg0, %arg1 : (!torch.vtensor<[3,5],f32>, !torch.vtensor<[3,2],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %0, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[3,7],f32>
  %2 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.sum.dim_IntList %1, %2, %true, %none : !torch.vtensor<[3,7],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[3,1],f32>
  return %3 : !torch.vtensor<[3,1],f32>
}

// -----

// A cat of computed pieces read by an elementwise op joins that op's group,
// and so do the pieces' producers (along a middle dim, with an input piece).

// CHECK-LABEL: func.func @fuse_cat_of_computed
// CHECK:         "fusion.group"(%arg0, %arg1)
// CHECK-DAG:       torch.aten.sin
// CHECK-DAG:       torch.aten.cos
// CHECK:           torch.aten.cat
// CHECK:           torch.aten.add.Scalar
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     fusion.group
// CHECK:         return
func.func @fuse_cat_of_computed(%arg0: !torch.vtensor<[2,3,4],f32>, %arg1: !torch.vtensor<[2,1,4],f32>) -> !torch.vtensor<[2,7,4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.sin %arg0 : !torch.vtensor<[2,3,4],f32> -> !torch.vtensor<[2,3,4],f32>
  %1 = torch.aten.cos %arg0 : !torch.vtensor<[2,3,4],f32> -> !torch.vtensor<[2,3,4],f32>
  %2 = torch.prim.ListConstruct %0, %arg1, %1 : (!torch.vtensor<[2,3,4],f32>, !torch.vtensor<[2,1,4],f32>, !torch.vtensor<[2,3,4],f32>) -> !torch.list<vtensor>
  %3 = torch.aten.cat %2, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,7,4],f32>
  %4 = torch.aten.add.Scalar %3, %int1, %int1 : !torch.vtensor<[2,7,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,7,4],f32>
  return %4 : !torch.vtensor<[2,7,4],f32>
}

// -----

// A cat of computed pieces that nothing fusible reads is a concat exit
// (fusion-fuse-concat: each piece stored into its slice), not a read.

// CHECK-LABEL: func.func @fuse_cat_of_computed_only_returned_as_concat_exit
// CHECK:         "fusion.group"(%arg0)
// CHECK:           torch.aten.sin
// CHECK:           torch.aten.cat
// CHECK:         }) {kind = "concat"}
func.func @fuse_cat_of_computed_only_returned_as_concat_exit(%arg0: !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[6,4],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.sin %arg0 : !torch.vtensor<[3,4],f32> -> !torch.vtensor<[3,4],f32>
  %1 = torch.prim.ListConstruct %0, %arg0 : (!torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>) -> !torch.list<vtensor>
  %2 = torch.aten.cat %1, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[6,4],f32>
  return %2 : !torch.vtensor<[6,4],f32>
}

// -----

// reflection_pad*d and replication_pad*d (the spellings torch.compile's
// graphs give F.pad(mode="reflect" / "replicate"); torch.export gives
// aten.pad) of a group input join the group reading them.

// CHECK-LABEL: func.func @fuse_reflection_and_replication_pads
// CHECK:         "fusion.group"(%arg0)
// CHECK-DAG:       torch.aten.reflection_pad1d
// CHECK-DAG:       torch.aten.replication_pad1d
// CHECK:         }) {kind = "pointwise"}
// CHECK:         "fusion.group"(%arg1)
// CHECK-DAG:       torch.aten.reflection_pad2d
// CHECK-DAG:       torch.aten.replication_pad2d
// CHECK:         }) {kind = "pointwise"}
// CHECK:         "fusion.group"(%arg2)
// CHECK-DAG:       torch.aten.reflection_pad3d
// CHECK-DAG:       torch.aten.replication_pad3d
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_reflection_and_replication_pads(%arg0: !torch.vtensor<[2,3,5],f32>, %arg1: !torch.vtensor<[1,2,4,5],f32>, %arg2: !torch.vtensor<[1,2,3,4,5],f32>) -> (!torch.vtensor<[2,3,8],f32>, !torch.vtensor<[1,2,6,8],f32>, !torch.vtensor<[1,2,5,6,7],f32>) {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %0 = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.reflection_pad1d %arg0, %0 : !torch.vtensor<[2,3,5],f32>, !torch.list<int> -> !torch.vtensor<[2,3,8],f32>
  %2 = torch.aten.replication_pad1d %arg0, %0 : !torch.vtensor<[2,3,5],f32>, !torch.list<int> -> !torch.vtensor<[2,3,8],f32>
  %3 = torch.aten.add.Tensor %1, %2, %int1 : !torch.vtensor<[2,3,8],f32>, !torch.vtensor<[2,3,8],f32>, !torch.int -> !torch.vtensor<[2,3,8],f32>
  %4 = torch.prim.ListConstruct %int2, %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %5 = torch.aten.reflection_pad2d %arg1, %4 : !torch.vtensor<[1,2,4,5],f32>, !torch.list<int> -> !torch.vtensor<[1,2,6,8],f32>
  %6 = torch.aten.replication_pad2d %arg1, %4 : !torch.vtensor<[1,2,4,5],f32>, !torch.list<int> -> !torch.vtensor<[1,2,6,8],f32>
  %7 = torch.aten.add.Tensor %5, %6, %int1 : !torch.vtensor<[1,2,6,8],f32>, !torch.vtensor<[1,2,6,8],f32>, !torch.int -> !torch.vtensor<[1,2,6,8],f32>
  %8 = torch.prim.ListConstruct %int1, %int1, %int1, %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %9 = torch.aten.reflection_pad3d %arg2, %8 : !torch.vtensor<[1,2,3,4,5],f32>, !torch.list<int> -> !torch.vtensor<[1,2,5,6,7],f32>
  %10 = torch.aten.replication_pad3d %arg2, %8 : !torch.vtensor<[1,2,3,4,5],f32>, !torch.list<int> -> !torch.vtensor<[1,2,5,6,7],f32>
  %11 = torch.aten.add.Tensor %9, %10, %int1 : !torch.vtensor<[1,2,5,6,7],f32>, !torch.vtensor<[1,2,5,6,7],f32>, !torch.int -> !torch.vtensor<[1,2,5,6,7],f32>
  return %3, %7, %11 : !torch.vtensor<[2,3,8],f32>, !torch.vtensor<[1,2,6,8],f32>, !torch.vtensor<[1,2,5,6,7],f32>
}

// -----

// A reflect or replicate pad of a dynamic size reads coordinates it cannot
// mirror or clamp without the size: it stays ATen.

// CHECK-LABEL: func.func @no_fuse_reflection_and_replication_pads_of_dynamic_shape
// CHECK:         fusion.explain = [
// CHECK-SAME:      "consumer torch.aten.reflection_pad1d: pad by non-constant or dynamic sizes"
// CHECK-SAME:      "consumer torch.aten.replication_pad1d: pad by non-constant or dynamic sizes"
// CHECK-SAME:      "consumer torch.aten.reflection_pad2d: pad by non-constant or dynamic sizes"
// CHECK-SAME:      "consumer torch.aten.replication_pad2d: pad by non-constant or dynamic sizes"
// CHECK:         torch.aten.reflection_pad1d
// CHECK:         torch.aten.replication_pad1d
// CHECK:         torch.aten.reflection_pad2d
// CHECK:         torch.aten.replication_pad2d
// CHECK:         fusion.explain = [
// CHECK-SAME:      "consumer torch.aten.reflection_pad3d: pad by non-constant or dynamic sizes"
// CHECK-SAME:      "consumer torch.aten.replication_pad3d: pad by non-constant or dynamic sizes"
// CHECK:         torch.aten.reflection_pad3d
// CHECK:         torch.aten.replication_pad3d
func.func @no_fuse_reflection_and_replication_pads_of_dynamic_shape(%arg0: !torch.vtensor<[?,3,5],f32>, %arg1: !torch.vtensor<[?,3,4,5],f32>) -> (!torch.vtensor<[?,3,8],f32>, !torch.vtensor<[?,3,8],f32>, !torch.vtensor<[?,5,8],f32>, !torch.vtensor<[?,5,8],f32>, !torch.vtensor<[?,5,6,7],f32>, !torch.vtensor<[?,5,6,7],f32>) {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %0 = torch.aten.neg %arg0 : !torch.vtensor<[?,3,5],f32> -> !torch.vtensor<[?,3,5],f32>
  %1 = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.reflection_pad1d %0, %1 : !torch.vtensor<[?,3,5],f32>, !torch.list<int> -> !torch.vtensor<[?,3,8],f32>
  %3 = torch.aten.replication_pad1d %0, %1 : !torch.vtensor<[?,3,5],f32>, !torch.list<int> -> !torch.vtensor<[?,3,8],f32>
  %4 = torch.prim.ListConstruct %int2, %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %5 = torch.aten.reflection_pad2d %0, %4 : !torch.vtensor<[?,3,5],f32>, !torch.list<int> -> !torch.vtensor<[?,5,8],f32>
  %6 = torch.aten.replication_pad2d %0, %4 : !torch.vtensor<[?,3,5],f32>, !torch.list<int> -> !torch.vtensor<[?,5,8],f32>
  %7 = torch.aten.neg %arg1 : !torch.vtensor<[?,3,4,5],f32> -> !torch.vtensor<[?,3,4,5],f32>
  %8 = torch.prim.ListConstruct %int1, %int1, %int1, %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %9 = torch.aten.reflection_pad3d %7, %8 : !torch.vtensor<[?,3,4,5],f32>, !torch.list<int> -> !torch.vtensor<[?,5,6,7],f32>
  %10 = torch.aten.replication_pad3d %7, %8 : !torch.vtensor<[?,3,4,5],f32>, !torch.list<int> -> !torch.vtensor<[?,5,6,7],f32>
  return %2, %3, %5, %6, %9, %10 : !torch.vtensor<[?,3,8],f32>, !torch.vtensor<[?,3,8],f32>, !torch.vtensor<[?,5,8],f32>, !torch.vtensor<[?,5,8],f32>, !torch.vtensor<[?,5,6,7],f32>, !torch.vtensor<[?,5,6,7],f32>
}

// -----

// A gather reads its table at the kernel's own coordinates: a gathered value
// is not evaluated at a pad's.

// CHECK-LABEL: func.func @no_fuse_pad_of_gather
// CHECK:         fusion.explain = ["consumer fusion.group: pad of a value computed by torch.aten.index_select (only elementwise ops are evaluated at a pad's coordinates)"]
// CHECK:         torch.aten.constant_pad_nd
func.func @no_fuse_pad_of_gather(%arg0: !torch.vtensor<[5],f32>, %arg1: !torch.vtensor<[5],si64>) -> !torch.vtensor<[7],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.index_select %arg0, %int0, %arg1 : !torch.vtensor<[5],f32>, !torch.int, !torch.vtensor<[5],si64> -> !torch.vtensor<[5],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[5],f32> -> !torch.vtensor<[5],f32>
  %2 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %float = torch.constant.float 0.000000e+00
  %3 = torch.aten.constant_pad_nd %1, %2, %float : !torch.vtensor<[5],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[7],f32>
  return %3 : !torch.vtensor<[7],f32>
}
