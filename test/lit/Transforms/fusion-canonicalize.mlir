// RUN: mlirfuse-opt %s --split-input-file --fusion-canonicalize | filecheck %s

// Ops in a body that nothing yields are erased, transitively.

// CHECK-LABEL: func.func @fuse_dead_op_removed
// CHECK:         "fusion.group"
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NOT:       torch.aten.sin
// CHECK-NOT:       torch.aten.cos
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-NEXT:      "fusion.yield"(%[[EXP]])
// CHECK-NEXT:    }) {kind = "pointwise"}
func.func @fuse_dead_op_removed(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    %2 = torch.aten.sin %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    %3 = torch.aten.cos %2 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

// Two identical exps in a body become one.

// CHECK-LABEL: func.func @fuse_cse_in_body
// CHECK:         ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-NOT:       torch.aten.exp
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Tensor %[[EXP]], %[[EXP]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL]])
func.func @fuse_cse_in_body(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    %2 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    %3 = torch.aten.mul.Tensor %1, %2 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%3) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

// The same value passed twice becomes one operand and one block argument.

// CHECK-LABEL: func.func @fuse_duplicate_inputs
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>)
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Tensor %[[X]], %[[X]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL]])
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_duplicate_inputs(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.group"(%arg0, %arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>, %b: !torch.vtensor<[8],f32>):
    %1 = torch.aten.mul.Tensor %a, %b : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

// Result #1 is never read: it is dropped from the group and its yield; the
// exp that computed it stays because result #0 still needs it.

// CHECK-LABEL: func.func @fuse_unused_result_dropped
// CHECK:         %[[G:.+]] = "fusion.group"(%{{.+}}) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-NEXT:      %[[NEG:.+]] = torch.aten.neg %[[EXP]]
// CHECK-NEXT:      "fusion.yield"(%[[NEG]]) : (!torch.vtensor<[8],f32>) -> ()
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
// CHECK-NEXT:    return %[[G]] : !torch.vtensor<[8],f32>
func.func @fuse_unused_result_dropped(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0:2 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    %2 = torch.aten.neg %1 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%2, %1) : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>)
  return %0#0 : !torch.vtensor<[8],f32>
}

// -----

// A scalar constant passed in as an operand is cloned into the body and the
// operand removed: two groups differing only in how they got the constant
// then print the same.

// CHECK-LABEL: func.func @fuse_constant_operand_inlined
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>)
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[C:.+]] = torch.constant.float 2.500000e+00
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Scalar %[[X]], %[[C]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL]])
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_constant_operand_inlined(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %float = torch.constant.float 2.500000e+00
  %0 = "fusion.group"(%arg0, %float) ({
  ^bb0(%a: !torch.vtensor<[8],f32>, %s: !torch.float):
    %1 = torch.aten.mul.Scalar %a, %s : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>, !torch.float) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

// A group whose results nobody reads is erased.

// CHECK-LABEL: func.func @fuse_unused_group_erased
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>)
// CHECK-NOT:     fusion.group
// CHECK-NEXT:    return %[[A]]
func.func @fuse_unused_group_erased(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %arg0 : !torch.vtensor<[8],f32>
}

// -----

// A group already in canonical form is left exactly as it was: both
// operands stay, even though they have the same type.

// CHECK-LABEL: func.func @no_fuse_already_canonical
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>, %[[B:.+]]: !torch.vtensor<[8],f32>)
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]], %[[B]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>, %[[Y:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Tensor %[[X]], %[[Y]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]
func.func @no_fuse_already_canonical(%arg0: !torch.vtensor<[8],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.group"(%arg0, %arg1) ({
  ^bb0(%a: !torch.vtensor<[8],f32>, %b: !torch.vtensor<[8],f32>):
    %1 = torch.aten.mul.Tensor %a, %b : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

// Ops outside groups are not this pass's business: even a dead torch op
// outside a group stays.

// CHECK-LABEL: func.func @no_fuse_outside_groups
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>)
// CHECK-NEXT:    %{{.+}} = torch.aten.exp %[[A]]
// CHECK-NEXT:    %[[NEG:.+]] = torch.aten.neg %[[A]]
// CHECK-NEXT:    return %[[NEG]]
func.func @no_fuse_outside_groups(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.neg %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %1 : !torch.vtensor<[8],f32>
}

// -----

// Two results yielding the same value: users of the second read the first,
// and the second result is dropped.

// CHECK-LABEL: func.func @fuse_duplicate_results
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0)
// CHECK:           "fusion.yield"(%{{.+}}) : (!torch.vtensor<[8],f32>) -> ()
// CHECK:         return %[[G]], %[[G]]
func.func @fuse_duplicate_results(%arg0: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0:2 = "fusion.group"(%arg0) ({
  ^bb0(%x: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %x : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1, %1) : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>)
  return %0#0, %0#1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// Result #1 is read only for its sizes, rank and dtype: the static type
// answers them, so it loses its uses and is dropped, and the neg computing
// it goes with it.

// CHECK-LABEL: func.func @fuse_size_only_result_dropped
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,8],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-NEXT:      "fusion.yield"(%[[EXP]]) : (!torch.vtensor<[4,8],f32>) -> ()
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[SIZE:.+]] = torch.constant.int 8
// CHECK-NEXT:    %[[DTYPE:.+]] = torch.constant.int 6
// CHECK-NEXT:    %[[RANK:.+]] = torch.constant.int 2
// CHECK-NEXT:    %[[D0:.+]] = torch.constant.int 4
// CHECK-NEXT:    %[[D1:.+]] = torch.constant.int 8
// CHECK-NEXT:    %[[SIZES:.+]] = torch.prim.ListConstruct %[[D0]], %[[D1]]
// CHECK-NEXT:    %[[NUMEL:.+]] = torch.constant.int 32
// CHECK-NEXT:    return %[[G]], %[[SIZE]], %[[DTYPE]], %[[RANK]], %[[SIZES]], %[[NUMEL]]
// CHECK-NOT:     torch.aten.neg
func.func @fuse_size_only_result_dropped(%arg0: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.int, !torch.int, !torch.int, !torch.list<int>, !torch.int) {
  %int-1 = torch.constant.int -1
  %0:2 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[4,8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
    %2 = torch.aten.neg %1 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
    "fusion.yield"(%1, %2) : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>)
  %3 = torch.aten.size.int %0#1, %int-1 : !torch.vtensor<[4,8],f32>, !torch.int -> !torch.int
  %4 = torch.prim.dtype %0#1 : !torch.vtensor<[4,8],f32> -> !torch.int
  %5 = torch.aten.dim %0#1 : !torch.vtensor<[4,8],f32> -> !torch.int
  %6 = torch.aten.size %0#1 : !torch.vtensor<[4,8],f32> -> !torch.list<int>
  %7 = torch.aten.numel %0#1 : !torch.vtensor<[4,8],f32> -> !torch.int
  return %0#0, %3, %4, %5, %6, %7 : !torch.vtensor<[4,8],f32>, !torch.int, !torch.int, !torch.int, !torch.list<int>, !torch.int
}

// -----

// A dynamic size: the group's result is an elementwise function of its
// input, so it has the input's shape; the query asks the input, and the
// group, now unread, is erased. The static size is a constant.

// CHECK-LABEL: func.func @fuse_size_only_dynamic_from_input
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[?,8],f32>)
// CHECK-NEXT:    %[[ZERO:.+]] = torch.constant.int 0
// CHECK-NEXT:    %[[N:.+]] = torch.aten.size.int %[[A]], %[[ZERO]] : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
// CHECK-NEXT:    %[[EIGHT:.+]] = torch.constant.int 8
// CHECK-NEXT:    return %[[N]], %[[EIGHT]]
// CHECK-NOT:     fusion.group
func.func @fuse_size_only_dynamic_from_input(%arg0: !torch.vtensor<[?,8],f32>) -> (!torch.int, !torch.int) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[?,8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    %2 = torch.aten.sigmoid %1 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    "fusion.yield"(%2) : (!torch.vtensor<[?,8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
  %3 = torch.aten.size.int %0, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
  %4 = torch.aten.size.int %0, %int1 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
  return %3, %4 : !torch.int, !torch.int
}

// -----

// A dynamic size, but the result is the product of two [?,8] inputs that may
// differ (one may broadcast): no input provably has its shape, so the
// query and the group stay.

// CHECK-LABEL: func.func @no_fuse_size_only_dynamic_without_same_shape_input
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1)
// CHECK:         torch.aten.size.int %[[G]], %{{.+}} : !torch.vtensor<[?,8],f32>
func.func @no_fuse_size_only_dynamic_without_same_shape_input(%arg0: !torch.vtensor<[?,8],f32>, %arg1: !torch.vtensor<[?,8],f32>) -> !torch.int {
  %int0 = torch.constant.int 0
  %0 = "fusion.group"(%arg0, %arg1) ({
  ^bb0(%a: !torch.vtensor<[?,8],f32>, %b: !torch.vtensor<[?,8],f32>):
    %1 = torch.aten.mul.Tensor %a, %b : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[?,8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
  %2 = torch.aten.size.int %0, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
  return %2 : !torch.int
}

// -----

// Read for its size and for its values: the group must compute it anyway,
// so the size query is left as it is.

// CHECK-LABEL: func.func @no_fuse_size_and_value_uses
// CHECK:         %[[G:.+]] = "fusion.group"
// CHECK:         %[[S:.+]] = torch.aten.size.int %[[G]]
// CHECK-NEXT:    return %[[G]], %[[S]]
func.func @no_fuse_size_and_value_uses(%arg0: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.int) {
  %int0 = torch.constant.int 0
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[4],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[4],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  %2 = torch.aten.size.int %0, %int0 : !torch.vtensor<[4],f32>, !torch.int -> !torch.int
  return %0, %2 : !torch.vtensor<[4],f32>, !torch.int
}
