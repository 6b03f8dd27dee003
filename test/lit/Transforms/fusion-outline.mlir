// RUN: mlirfuse-opt %s --split-input-file --fusion-outline | filecheck %s

// Kernels are inserted at the top of the module, before the functions that
// launch them, so each case checks its kernels before its CHECK-LABEL.

// Two groups that differ only in value names are one structural class: one
// kernel, launched twice.

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-NEXT:      %[[NEG:.+]] = torch.aten.neg %[[EXP]]
// CHECK-NEXT:      "fusion.yield"(%[[NEG]]) : (!torch.vtensor<[8],f32>) -> ()
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_exp_neg_0"} : () -> ()
// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @fuse_identical_groups
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>, %[[B:.+]]: !torch.vtensor<[8],f32>)
// CHECK-NOT:     "fusion.group"
// CHECK-NEXT:    %[[L0:.+]] = "fusion.launch"(%[[A]]) {kernel = @fused_exp_neg_0} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
// CHECK-NEXT:    %[[L1:.+]] = "fusion.launch"(%[[B]]) {kernel = @fused_exp_neg_0} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
// CHECK-NEXT:    return %[[L0]], %[[L1]]
func.func @fuse_identical_groups(%arg0: !torch.vtensor<[8],f32>, %arg1: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    %2 = torch.aten.neg %1 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%2) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %3 = "fusion.group"(%arg1) ({
  ^bb0(%b: !torch.vtensor<[8],f32>):
    %4 = torch.aten.exp %b : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    %5 = torch.aten.neg %4 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%5) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0, %3 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// Identical groups in different functions of one module share a kernel too.

// CHECK:         "fusion.kernel"() ({
// CHECK:         }) {kind = "pointwise", sym_name = "fused_sigmoid_0"} : () -> ()
// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @fuse_across_functions_a
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_sigmoid_0}
// CHECK-LABEL: func.func @fuse_across_functions_b
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_sigmoid_0}
func.func @fuse_across_functions_a(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.sigmoid %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
func.func @fuse_across_functions_b(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.sigmoid %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

// Two different groups: two kernels, named after their ops and numbered in
// the order they were outlined.

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-NEXT:      "fusion.yield"(%[[EXP]])
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_exp_0"} : () -> ()
// CHECK-NEXT:    "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[Y:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:      %[[ADD:.+]] = torch.aten.add.Tensor %[[Y]], %[[Y]], %[[ONE]]
// CHECK-NEXT:      %[[SIG:.+]] = torch.aten.sigmoid %[[ADD]]
// CHECK-NEXT:      "fusion.yield"(%[[SIG]])
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_add_sigmoid_1"} : () -> ()
// CHECK-LABEL: func.func @fuse_different_groups
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>)
// CHECK-NEXT:    %[[L0:.+]] = "fusion.launch"(%[[A]]) {kernel = @fused_exp_0}
// CHECK-NEXT:    %[[L1:.+]] = "fusion.launch"(%[[L0]]) {kernel = @fused_add_sigmoid_1}
// CHECK-NEXT:    return %[[L1]]
func.func @fuse_different_groups(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %2 = "fusion.group"(%0) ({
  ^bb0(%b: !torch.vtensor<[8],f32>):
    %int1 = torch.constant.int 1
    %3 = torch.aten.add.Tensor %b, %b, %int1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[8],f32>
    %4 = torch.aten.sigmoid %3 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%4) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %2 : !torch.vtensor<[8],f32>
}

// -----

// The same ops on a different shape are a different kernel (kernels are
// specialized to their shapes).

// CHECK:         sym_name = "fused_exp_0"
// CHECK:         ^bb0(%{{.+}}: !torch.vtensor<[4],f32>):
// CHECK:         sym_name = "fused_exp_1"
// CHECK-LABEL: func.func @no_fuse_same_ops_different_shapes
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_exp_0} : (!torch.vtensor<[8],f32>)
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_exp_1} : (!torch.vtensor<[4],f32>)
func.func @no_fuse_same_ops_different_shapes(%arg0: !torch.vtensor<[8],f32>, %arg1: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[4],f32>) {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %2 = "fusion.group"(%arg1) ({
  ^bb0(%b: !torch.vtensor<[4],f32>):
    %3 = torch.aten.exp %b : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    "fusion.yield"(%3) : (!torch.vtensor<[4],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  return %0, %2 : !torch.vtensor<[8],f32>, !torch.vtensor<[4],f32>
}

// -----

// Constants are compared by value: x*2 and x*3 are two kernels.

// CHECK:         torch.constant.float 2.000000e+00
// CHECK:         sym_name = "fused_mul_0"
// CHECK:         torch.constant.float 3.000000e+00
// CHECK:         sym_name = "fused_mul_1"
// CHECK-LABEL: func.func @no_fuse_different_constants
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_mul_0}
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_mul_1}
func.func @no_fuse_different_constants(%arg0: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %c = torch.constant.float 2.000000e+00
    %1 = torch.aten.mul.Scalar %a, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %2 = "fusion.group"(%arg0) ({
  ^bb0(%b: !torch.vtensor<[8],f32>):
    %c = torch.constant.float 3.000000e+00
    %3 = torch.aten.mul.Scalar %b, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%3) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0, %2 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// Without groups there is nothing to outline: no kernel appears.

// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @no_fuse_no_groups
// CHECK-NEXT:    torch.aten.exp
func.func @no_fuse_no_groups(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
