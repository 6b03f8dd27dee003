// RUN: mlirfuse-opt %s --split-input-file --verify-analyses --test-shapes | filecheck %s
// RUN: not mlirfuse-opt %s --split-input-file --verify-analyses --pass-pipeline='builtin.module(test-shapes{corrupt=true})' 2>&1 | filecheck %s --check-prefix=CORRUPT

// Static shapes: equal shapes are one iteration space wherever the values
// come from; [1,8] broadcasts against [4,8], [8,4] does not.

// CHECK-LABEL: func.func @static_shapes
// CHECK:         torch.aten.exp {{.*}}{test.broadcasts = "b, c", test.dtype = "float32", test.same_space = "b", test.shape = "[4,8]", test.size_only = false, test.tag = "a"}
// CHECK:         torch.aten.neg {{.*}}{test.broadcasts = "a, c", test.dtype = "float32", test.same_space = "a", test.shape = "[4,8]", test.size_only = false, test.tag = "b"}
// CHECK:         torch.aten.sum.dim_IntList {{.*}}{test.broadcasts = "a, b", test.dtype = "float32", test.same_space = "", test.shape = "[1,8]", test.size_only = false, test.tag = "c"}
// CHECK:         torch.aten.transpose.int {{.*}}{test.broadcasts = "", test.dtype = "float32", test.same_space = "", test.shape = "[8,4]", test.size_only = false, test.tag = "d"}
func.func @static_shapes(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[1,8],f32>, !torch.vtensor<[8,4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %0 = torch.aten.exp %arg0 {test.tag = "a"} : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.neg %arg1 {test.tag = "b"} : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %2 = torch.aten.sum.dim_IntList %0, %dims, %true, %none {test.tag = "c"} : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,8],f32>
  %3 = torch.aten.transpose.int %arg1, %int0, %int1 {test.tag = "d"} : !torch.vtensor<[4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  return %1, %2, %3 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[1,8],f32>, !torch.vtensor<[8,4],f32>
}

// corrupt=true makes the first tagged result (a) [?,?] behind the
// analysis's back: --verify-analyses reports the stale shape (the exp of a
// [4,8] argument still provably iterates [4,8]).

// CORRUPT: error: --verify-analyses: after 'test-shapes' the maintained analyses differ from recomputed ones:
// CORRUPT-NEXT: shapes: 'torch.aten.exp' #4: [4,8] float32 in the maintained analysis, [?,?] float32, shaped [4,8] in the IR

// -----

// Dynamic sizes are equal only where provably so: along one-tensor
// elementwise ops (abs, exp), copies, and into a fusion.group result
// computed elementwise from its input. Another [?,8] argument (c), or the
// result of a binary op (d), may differ; [1,8] still broadcasts.

// CHECK-LABEL: func.func @dynamic_shapes
// CHECK:         torch.aten.abs {{.*}}{test.broadcasts = "b, g, e", test.dtype = "float32", test.same_space = "b, g", test.shape = "[?,8]", test.size_only = false, test.tag = "a"}
// CHECK:         torch.aten.exp {{.*}}{test.broadcasts = "a, g, e", test.dtype = "float32", test.same_space = "a, g", test.shape = "[?,8]", test.size_only = false, test.tag = "b"}
// CHECK:         torch.aten.exp {{.*}}{test.broadcasts = "e", test.dtype = "float32", test.same_space = "", test.shape = "[?,8]", test.size_only = false, test.tag = "c"}
// CHECK:         torch.aten.add.Tensor {{.*}}{test.broadcasts = "e", test.dtype = "float32", test.same_space = "", test.shape = "[?,8]", test.size_only = false, test.tag = "d"}
// CHECK:         "fusion.group"
// CHECK:         }) {kind = "pointwise", test.broadcasts = "a, b, e", test.dtype = "float32", test.same_space = "a, b", test.shape = "[?,8]", test.size_only = false, test.tag = "g"}
// CHECK:         torch.vtensor.literal{{.*}}{test.broadcasts = "a, b, c, d, g", test.dtype = "float32", test.same_space = "", test.shape = "[1,8]", test.size_only = false, test.tag = "e"}
func.func @dynamic_shapes(%arg0: !torch.vtensor<[?,8],f32>, %arg1: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.vtensor<[1,8],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.abs %arg0 {test.tag = "a"} : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
  %1 = torch.aten.exp %0 {test.tag = "b"} : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
  %2 = torch.aten.exp %arg1 {test.tag = "c"} : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
  %3 = torch.aten.add.Tensor %1, %2, %int1 {test.tag = "d"} : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
  %4 = "fusion.group"(%1) ({
  ^bb0(%x: !torch.vtensor<[?,8],f32>):
    %5 = torch.aten.sigmoid %x : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    "fusion.yield"(%5) : (!torch.vtensor<[?,8],f32>) -> ()
  }) {kind = "pointwise", test.tag = "g"} : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
  %6 = torch.vtensor.literal(dense<1.0> : tensor<1x8xf32>) {test.tag = "e"} : !torch.vtensor<[1,8],f32>
  return %3, %4, %6 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.vtensor<[1,8],f32>
}

// -----

// Read only for its sizes, rank or dtype (x), or also for its values (y),
// or not at all (z). A non-value tensor has a shape too; a cast to
// !torch.vtensor forgets it, but the cast keeps the iteration space.

// CHECK-LABEL: func.func @size_only_and_unranked
// CHECK:         torch.aten.exp {{.*}}test.shape = "[4]", test.size_only = true, test.tag = "x"}
// CHECK:         torch.aten.neg {{.*}}test.shape = "[4]", test.size_only = false, test.tag = "y"}
// CHECK:         torch.aten.sin {{.*}}test.shape = "[4]", test.size_only = false, test.tag = "z"}
// CHECK:         torch.copy.to_tensor {{.*}}{test.broadcasts = "x, y, z, cast", test.dtype = "float32", test.same_space = "x, y, z, cast", test.shape = "[4]", test.size_only = false, test.tag = "buf"}
// CHECK:         torch.tensor_static_info_cast {{.*}}{test.broadcasts = "x, y, z, buf", test.dtype = "?", test.same_space = "x, y, z, buf", test.shape = "*", test.size_only = false, test.tag = "cast"}
func.func @size_only_and_unranked(%arg0: !torch.vtensor<[4],f32>) -> (!torch.int, !torch.int, !torch.int, !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>, !torch.vtensor) {
  %int0 = torch.constant.int 0
  %0 = torch.aten.exp %arg0 {test.tag = "x"} : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %1 = torch.aten.size.int %0, %int0 : !torch.vtensor<[4],f32>, !torch.int -> !torch.int
  %2 = torch.prim.dtype %0 : !torch.vtensor<[4],f32> -> !torch.int
  %3 = torch.aten.neg %arg0 {test.tag = "y"} : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %4 = torch.aten.dim %3 : !torch.vtensor<[4],f32> -> !torch.int
  %5 = torch.aten.sin %arg0 {test.tag = "z"} : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %6 = torch.copy.to_tensor %arg0 {test.tag = "buf"} : !torch.tensor<[4],f32>
  %7 = torch.tensor_static_info_cast %arg0 {test.tag = "cast"} : !torch.vtensor<[4],f32> to !torch.vtensor
  return %1, %2, %4, %3, %6, %7 : !torch.int, !torch.int, !torch.int, !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>, !torch.vtensor
}
