// RUN: mlirfuse-opt %s --split-input-file --fusion-fuse-elementwise | filecheck %s

// Dead fusible ops are erased before fusion: merged beside live code on the
// same input, a dead reduction (or cat) made a reduction (concat) group that
// canonicalize later stripped bare, leaving a kernel of the wrong kind.

// CHECK-LABEL: func.func @no_fuse_dead_reduction
// CHECK-NOT:     torch.aten.sum
// CHECK:         "fusion.group"(%arg0)
// CHECK:           torch.aten.mul.Scalar
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten.sum
func.func @no_fuse_dead_reduction(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int2 = torch.constant.int 2
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.exp %x : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.sum.dim_IntList %0, %dims, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %2 = torch.aten.mul.Scalar %x, %int2 : !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  return %2 : !torch.vtensor<[4,8],f32>
}

// -----

// CHECK-LABEL: func.func @no_fuse_dead_cat
// CHECK-NOT:     torch.aten.cat
// CHECK:         "fusion.group"(%arg0)
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten.cat
func.func @no_fuse_dead_cat(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %0 = torch.aten.exp %x : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.neg %x : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %list = torch.prim.ListConstruct %0, %1 : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) -> !torch.list<vtensor>
  %2 = torch.aten.cat %list, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[8,8],f32>
  %3 = torch.aten.mul.Scalar %x, %int2 : !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  return %3 : !torch.vtensor<[4,8],f32>
}
