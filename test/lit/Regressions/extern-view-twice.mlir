// RUN: mlirfuse-opt %s --split-input-file --fusion-extern-operands | filecheck %s

// One view feeding two operands of an unfused op: the view is cloned into the
// extern group once and the original erased once (erasing it twice was a
// use-after-free that segfaulted).

// CHECK-LABEL: func.func @extern_view_feeds_two_operands
// CHECK-NOT:     torch.aten.t
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,4],f32>):
// CHECK-NEXT:      %[[T:.+]] = torch.aten.t %[[X]]
// CHECK-NEXT:      %[[A:.+]] = torch.aten.mm %[[T]], %[[T]]
// CHECK-NEXT:      "fusion.yield"(%[[A]])
// CHECK-NEXT:    }) {kind = "extern"}
// CHECK-NEXT:    return %[[G]]
func.func @extern_view_feeds_two_operands(%x: !torch.vtensor<[4,4],f32>) -> !torch.vtensor<[4,4],f32> {
  %0 = torch.aten.t %x : !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  %1 = torch.aten.mm %0, %0 : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  return %1 : !torch.vtensor<[4,4],f32>
}

// -----

// Two chains sharing their first view (t, then two views of it) feeding one
// op: every view is erased once, the shared one after both readers.

// CHECK-LABEL: func.func @extern_chains_share_a_view
// CHECK-NOT:     torch.aten.t
// CHECK:         "fusion.group"(%arg0) ({
// CHECK:           torch.aten.t
// CHECK-COUNT-2:   torch.aten.unsqueeze
// CHECK-NEXT:      torch.aten.matmul
// CHECK:         }) {kind = "extern"}
// CHECK-NOT:     torch.aten.unsqueeze
func.func @extern_chains_share_a_view(%x: !torch.vtensor<[4,4],f32>) -> !torch.vtensor<[4,4,4],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %0 = torch.aten.t %x : !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  %1 = torch.aten.unsqueeze %0, %int0 : !torch.vtensor<[4,4],f32>, !torch.int -> !torch.vtensor<[1,4,4],f32>
  %2 = torch.aten.unsqueeze %0, %int2 : !torch.vtensor<[4,4],f32>, !torch.int -> !torch.vtensor<[4,4,1],f32>
  %3 = torch.aten.matmul %2, %1 : !torch.vtensor<[4,4,1],f32>, !torch.vtensor<[1,4,4],f32> -> !torch.vtensor<[4,4,4],f32>
  return %3 : !torch.vtensor<[4,4,4],f32>
}
