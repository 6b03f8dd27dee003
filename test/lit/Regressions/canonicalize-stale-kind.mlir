// RUN: mlirfuse-opt %s --split-input-file --fusion-canonicalize | filecheck %s

// Dropping unused results can erase every reduction (or the cat) a group was
// formed around; the group's kind follows its body, else the lowering finds
// a reduction kernel without a reduction (a concat kernel without a cat).

// CHECK-LABEL: func.func @reduction_result_dropped
// CHECK:         "fusion.group"(%arg0)
// CHECK-NOT:       torch.aten.sum
// CHECK:         }) {kind = "pointwise"}
func.func @reduction_result_dropped(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %0:2 = "fusion.group"(%x) ({
  ^bb0(%a: !torch.vtensor<[4,8],f32>):
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %true = torch.constant.bool true
    %none = torch.constant.none
    %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %s = torch.aten.sum.dim_IntList %a, %dims, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
    %m = torch.aten.mul.Scalar %a, %int2 : !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
    "fusion.yield"(%m, %s) : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32>) -> ()
  }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32>)
  return %0#0 : !torch.vtensor<[4,8],f32>
}

// -----

// CHECK-LABEL: func.func @cat_result_dropped
// CHECK:         "fusion.group"(%arg0)
// CHECK-NOT:       torch.aten.cat
// CHECK:         }) {kind = "pointwise"}
func.func @cat_result_dropped(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %0:2 = "fusion.group"(%x) ({
  ^bb0(%a: !torch.vtensor<[4,8],f32>):
    %int0 = torch.constant.int 0
    %e = torch.aten.exp %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
    %list = torch.prim.ListConstruct %e, %a : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) -> !torch.list<vtensor>
    %c = torch.aten.cat %list, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[8,8],f32>
    "fusion.yield"(%c, %e) : (!torch.vtensor<[8,8],f32>, !torch.vtensor<[4,8],f32>) -> ()
  }) {kind = "concat"} : (!torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[8,8],f32>, !torch.vtensor<[4,8],f32>)
  return %0#1 : !torch.vtensor<[4,8],f32>
}
