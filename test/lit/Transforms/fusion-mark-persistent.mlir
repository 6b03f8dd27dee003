// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-vertical, fusion-mark-persistent)' | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-vertical, fusion-mark-persistent{persistent-max=4})' | filecheck %s --check-prefix=LOOPED

// A reduction group whose rows fit persistent-max elements keeps each row in
// registers (persistent-reduction); a longer row loops (reduction stays).

// CHECK-LABEL: func.func @fuse_persistent_row
// CHECK:         "fusion.group"
// CHECK:         kind = "persistent-reduction"
// LOOPED-LABEL: func.func @fuse_persistent_row
// LOOPED:         "fusion.group"
// LOOPED:         kind = "reduction"
// LOOPED-NOT:     persistent-reduction
func.func @fuse_persistent_row(%a: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.exp %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.sum.dim_IntList %0, %dims, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  return %1 : !torch.vtensor<[4,1],f32>
}
