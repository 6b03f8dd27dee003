// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --pass-pipeline='builtin.module(fusion-fuse-vertical, fusion-fuse-horizontal, fusion-sink-exit-reshapes, fusion-mark-persistent)' | filecheck %s

// fusion-sink-exit-reshapes: a row-major reshape of a group's result read
// outside any group is stored by the group; other views of computed values
// stay outside (and fusion-explain-unfused says why).

// A reshape of a pointwise result read outside any group is an exit of the
// group: the value is stored row-major, the reshape is that buffer.

// CHECK-LABEL: func.func @fuse_exit_reshape
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0) ({
// CHECK:           %[[R:.+]] = torch.aten.relu
// CHECK:           %[[V:.+]] = torch.aten.view %[[R]]
// CHECK-NEXT:      "fusion.yield"(%[[V]])
// CHECK:         return %[[G]]

func.func @fuse_exit_reshape(%a: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[32],f32> {
  %int32 = torch.constant.int 32
  %0 = torch.aten.relu %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %l = torch.prim.ListConstruct %int32 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[4,8],f32>, !torch.list<int> -> !torch.vtensor<[32],f32>
  return %1 : !torch.vtensor<[32],f32>
}

// -----

// A result read unreshaped too stays the group's one result: stored twice
// it would be two buffers of the same bytes (a backward's gradient feeding a
// matmul as [256,512] and a bias sum as [4,64,512] held 2x its memory).

// CHECK-LABEL: func.func @no_fuse_exit_reshape_of_a_result_read_too
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0)
// CHECK:           "fusion.yield"(%{{.+}}) :
// CHECK:         fusion.explain = ["consumer torch.aten.view: the result is read unreshaped too (the group would store it twice; the view shares the buffer)"]
// CHECK:         %[[V:.+]] = torch.aten.view %[[G]]
// CHECK:         return %[[V]], %[[G]]

func.func @no_fuse_exit_reshape_of_a_result_read_too(%a: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[32],f32>, !torch.vtensor<[4,8],f32>) {
  %int32 = torch.constant.int 32
  %0 = torch.aten.relu %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %l = torch.prim.ListConstruct %int32 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %l : !torch.vtensor<[4,8],f32>, !torch.list<int> -> !torch.vtensor<[32],f32>
  return %1, %0 : !torch.vtensor<[32],f32>, !torch.vtensor<[4,8],f32>
}

// -----

// Only reshapes leave a group as stored outputs: a transposed result stays
// a view outside.

// CHECK-LABEL: func.func @no_fuse_exit_transpose
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0)
// CHECK:         fusion.explain = ["consumer torch.aten.transpose.int: view of a computed value (only reshapes of results are stored)"]
// CHECK-NEXT:    torch.aten.transpose.int %[[G]]

func.func @no_fuse_exit_transpose(%a: !torch.vtensor<[4,8],f32>, %b: !torch.vtensor<[4,4],f32>) -> !torch.vtensor<[8,4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.relu %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.transpose.int %0, %int0, %int1 : !torch.vtensor<[4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  %2 = torch.aten.mm %1, %b : !torch.vtensor<[8,4],f32>, !torch.vtensor<[4,4],f32> -> !torch.vtensor<[8,4],f32>
  return %2 : !torch.vtensor<[8,4],f32>
}

// -----

// A reduction group stores its row values one per row: dropping the kept
// dim is a reshape of that buffer, an exit of the group.

// CHECK-LABEL: func.func @fuse_exit_reshape_of_reduction
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0) ({
// CHECK:           %[[S:.+]] = torch.aten.sum.dim_IntList
// CHECK:           %[[V:.+]] = torch.aten.view %[[S]]
// CHECK-NEXT:      "fusion.yield"(%[[V]])
// CHECK-NEXT:    }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_exit_reshape_of_reduction(%a: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4],f32> {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %true = torch.constant.bool true
  %none = torch.constant.none
  %l = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.sum.dim_IntList %a, %l, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %s = torch.prim.ListConstruct %int4 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.view %0, %s : !torch.vtensor<[4,1],f32>, !torch.list<int> -> !torch.vtensor<[4],f32>
  return %1 : !torch.vtensor<[4],f32>
}
