// RUN: mlirfuse-opt %s --split-input-file --fusion-extern-operands | filecheck %s

// An unfused op and the view chains feeding it become one extern group: one
// ATen call reading strided operands (attention's q @ k^T).

// CHECK-LABEL: func.func @extern_matmul_of_views
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0, %arg1) ({
// CHECK-NEXT:    ^bb0(%[[Q:.+]]: !torch.vtensor<[2,8,16],f32>, %[[K:.+]]: !torch.vtensor<[2,8,16],f32>):
// CHECK:           %[[QV:.+]] = torch.aten.view %[[Q]]
// CHECK-NEXT:      %[[QT:.+]] = torch.aten.transpose.int %[[QV]]
// CHECK-NEXT:      %[[KV:.+]] = torch.aten.view %[[K]]
// CHECK-NEXT:      %[[KT:.+]] = torch.aten.transpose.int %[[KV]]
// CHECK-NEXT:      %[[KT2:.+]] = torch.aten.transpose.int %[[KT]]
// CHECK-NEXT:      %[[MM:.+]] = torch.aten.matmul %[[QT]], %[[KT2]]
// CHECK-NEXT:      "fusion.yield"(%[[MM]])
// CHECK-NEXT:    }) {kind = "extern"} : (!torch.vtensor<[2,8,16],f32>, !torch.vtensor<[2,8,16],f32>) -> !torch.vtensor<[2,2,8,8],f32>
// CHECK-NEXT:    return %[[G]]
func.func @extern_matmul_of_views(%q: !torch.vtensor<[2,8,16],f32>, %k: !torch.vtensor<[2,8,16],f32>) -> !torch.vtensor<[2,2,8,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int8 = torch.constant.int 8
  %int-2 = torch.constant.int -2
  %int-1 = torch.constant.int -1
  %s = torch.prim.ListConstruct %int2, %int8, %int2, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %q, %s : !torch.vtensor<[2,8,16],f32>, !torch.list<int> -> !torch.vtensor<[2,8,2,8],f32>
  %1 = torch.aten.transpose.int %0, %int1, %int2 : !torch.vtensor<[2,8,2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,2,8,8],f32>
  %2 = torch.aten.view %k, %s : !torch.vtensor<[2,8,16],f32>, !torch.list<int> -> !torch.vtensor<[2,8,2,8],f32>
  %3 = torch.aten.transpose.int %2, %int1, %int2 : !torch.vtensor<[2,8,2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,2,8,8],f32>
  %4 = torch.aten.transpose.int %3, %int-2, %int-1 : !torch.vtensor<[2,2,8,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,2,8,8],f32>
  %5 = torch.aten.matmul %1, %4 : !torch.vtensor<[2,2,8,8],f32>, !torch.vtensor<[2,2,8,8],f32> -> !torch.vtensor<[2,2,8,8],f32>
  return %5 : !torch.vtensor<[2,2,8,8],f32>
}

// -----

// A view read by two extern calls: each group clones it, the original
// (now unread) is erased.

// CHECK-LABEL: func.func @extern_shared_view
// CHECK-NOT:     torch.aten.t
// CHECK:         "fusion.group"(%arg0, %arg1) ({
// CHECK:           torch.aten.t
// CHECK-NEXT:      torch.aten.mm
// CHECK:         }) {kind = "extern"}
// CHECK-NOT:     torch.aten.t
// CHECK:         "fusion.group"(%arg0, %arg2) ({
// CHECK:           torch.aten.t
// CHECK-NEXT:      torch.aten.mm
// CHECK:         }) {kind = "extern"}
func.func @extern_shared_view(%w: !torch.vtensor<[4,8],f32>, %x: !torch.vtensor<[2,8],f32>, %y: !torch.vtensor<[3,8],f32>) -> (!torch.vtensor<[2,4],f32>, !torch.vtensor<[3,4],f32>) {
  %0 = torch.aten.t %w : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[8,4],f32>
  %1 = torch.aten.mm %x, %0 : !torch.vtensor<[2,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[2,4],f32>
  %2 = torch.aten.mm %y, %0 : !torch.vtensor<[3,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[3,4],f32>
  return %1, %2 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[3,4],f32>
}

// -----

// No view among the operands: the op stays as it is.

// CHECK-LABEL: func.func @no_extern_without_views
// CHECK-NOT:     "fusion.group"
// CHECK:         torch.aten.mm %arg0, %arg1
func.func @no_extern_without_views(%a: !torch.vtensor<[2,8],f32>, %b: !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[2,4],f32> {
  %0 = torch.aten.mm %a, %b : !torch.vtensor<[2,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[2,4],f32>
  return %0 : !torch.vtensor<[2,4],f32>
}

// -----

// Fusible ops are the fuser's business, not extern calls; a view whose size
// is computed at run time is not folded.

// CHECK-LABEL: func.func @no_extern_fusible_or_dynamic
// CHECK-NOT:     "fusion.group"
// CHECK:         %[[T:.+]] = torch.aten.t %arg0
// CHECK-NEXT:    torch.aten.exp %[[T]]
// CHECK:         %[[V:.+]] = torch.aten.view %arg1
// CHECK-NEXT:    torch.aten.mm %[[V]]
func.func @no_extern_fusible_or_dynamic(%a: !torch.vtensor<[8,2],f32>, %b: !torch.vtensor<[16],f32>, %n: !torch.int, %c: !torch.vtensor<[8,4],f32>) -> (!torch.vtensor<[2,8],f32>, !torch.vtensor<[2,4],f32>) {
  %int8 = torch.constant.int 8
  %0 = torch.aten.t %a : !torch.vtensor<[8,2],f32> -> !torch.vtensor<[2,8],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
  %s = torch.prim.ListConstruct %n, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.view %b, %s : !torch.vtensor<[16],f32>, !torch.list<int> -> !torch.vtensor<[2,8],f32>
  %3 = torch.aten.mm %2, %c : !torch.vtensor<[2,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[2,4],f32>
  return %1, %3 : !torch.vtensor<[2,8],f32>, !torch.vtensor<[2,4],f32>
}
