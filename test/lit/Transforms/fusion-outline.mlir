// RUN: mlirfuse-opt %s --split-input-file --fusion-outline | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --fusion-outline=lift-constants=false | filecheck %s --check-prefix=OFF
// RUN: mlirfuse-opt %s --split-input-file --fusion-outline | filecheck %s --check-prefix=VIEWS
// RUN: mlirfuse-opt %s --split-input-file --fusion-outline=hoist-views=false | filecheck %s --check-prefix=NOVIEWS

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

// Groups differing only in float constants the lowering prints as plain
// operands share one kernel (lift-constants, on by default): the constant
// whose value differs (x * 2 vs x * 3) becomes the kernel's scalar argument
// #0 and each launch passes its own value; the one they agree on (+ 0.1)
// stays a literal. With the option off, constants are compared by value:
// two kernels.

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[C:.+]] = torch.constant.float 2.000000e+00 {fusion.scalar = 0 : i64}
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Scalar %[[X]], %[[C]]
// CHECK-NEXT:      %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:      %[[D:.+]] = torch.constant.float 1.000000e-01{{$}}
// CHECK-NEXT:      %[[ADD:.+]] = torch.aten.add.Scalar %[[MUL]], %[[D]], %[[ONE]]
// CHECK-NEXT:      "fusion.yield"(%[[ADD]])
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_mul_add_0"} : () -> ()
// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @fuse_modulo_constants
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_mul_add_0, scalars = array<f64: 2.000000e+00>}
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_mul_add_0, scalars = array<f64: 3.000000e+00>}

// OFF:           torch.constant.float 2.000000e+00{{$}}
// OFF:           sym_name = "fused_mul_add_0"
// OFF:           torch.constant.float 3.000000e+00{{$}}
// OFF:           sym_name = "fused_mul_add_1"
// OFF-LABEL:   func.func @fuse_modulo_constants
// OFF-NEXT:      "fusion.launch"(%{{.+}}) {kernel = @fused_mul_add_0} :
// OFF-NEXT:      "fusion.launch"(%{{.+}}) {kernel = @fused_mul_add_1} :
func.func @fuse_modulo_constants(%arg0: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %c = torch.constant.float 2.000000e+00
    %1 = torch.aten.mul.Scalar %a, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    %int1 = torch.constant.int 1
    %d = torch.constant.float 1.000000e-01
    %2 = torch.aten.add.Scalar %1, %d, %int1 : !torch.vtensor<[8],f32>, !torch.float, !torch.int -> !torch.vtensor<[8],f32>
    "fusion.yield"(%2) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %3 = "fusion.group"(%arg0) ({
  ^bb0(%b: !torch.vtensor<[8],f32>):
    %c = torch.constant.float 3.000000e+00
    %4 = torch.aten.mul.Scalar %b, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    %int1 = torch.constant.int 1
    %d = torch.constant.float 1.000000e-01
    %5 = torch.aten.add.Scalar %4, %d, %int1 : !torch.vtensor<[8],f32>, !torch.float, !torch.int -> !torch.vtensor<[8],f32>
    "fusion.yield"(%5) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0, %3 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// The next two cases are one program: the second renames every SSA value
// and swaps the two normalizations, which differ in eps and scale. Both
// print the same kernels, line for line: the shared kernel holds the
// smallest of the value vectors (not the first group's), and each launch
// keeps its own values.

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-NEXT:      "fusion.yield"(%[[EXP]])
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_exp_0"} : () -> ()
// CHECK-NEXT:    "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[Y:.+]]: !torch.vtensor<[4,16],f32>):
// CHECK-NEXT:      %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:      %[[DIMS:.+]] = torch.prim.ListConstruct %[[ONE]]
// CHECK-NEXT:      %[[TRUE:.+]] = torch.constant.bool true
// CHECK-NEXT:      %[[NONE:.+]] = torch.constant.none
// CHECK-NEXT:      %[[MEAN:.+]] = torch.aten.mean.dim %[[Y]], %[[DIMS]], %[[TRUE]], %[[NONE]]
// CHECK-NEXT:      %[[EPS:.+]] = torch.constant.float 9.9999999999999995E-7 {fusion.scalar = 0 : i64}
// CHECK-NEXT:      %[[VAR:.+]] = torch.aten.add.Scalar %[[MEAN]], %[[EPS]], %[[ONE]]
// CHECK-NEXT:      %[[R:.+]] = torch.aten.rsqrt %[[VAR]]
// CHECK-NEXT:      %[[N:.+]] = torch.aten.mul.Tensor %[[Y]], %[[R]]
// CHECK-NEXT:      %[[SCALE:.+]] = torch.constant.float 2.500000e-01 {fusion.scalar = 1 : i64}
// CHECK-NEXT:      %[[OUT:.+]] = torch.aten.mul.Scalar %[[N]], %[[SCALE]]
// CHECK-NEXT:      "fusion.yield"(%[[OUT]])
// CHECK-NEXT:    }) {kind = "persistent-reduction", sym_name = "fused_mean_add_rsqrt_mul_1"} : () -> ()
// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @fuse_modulo_constants_in_order
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,16],f32>, %[[B:.+]]: !torch.vtensor<[4,16],f32>)
// CHECK-NEXT:    "fusion.launch"(%[[A]]) {kernel = @fused_exp_0}
// CHECK-NEXT:    "fusion.launch"(%[[A]]) {kernel = @fused_mean_add_rsqrt_mul_1, scalars = array<f64: 1.000000e-05, 5.000000e-01>}
// CHECK-NEXT:    "fusion.launch"(%[[B]]) {kernel = @fused_mean_add_rsqrt_mul_1, scalars = array<f64: 9.9999999999999995E-7, 2.500000e-01>}
func.func @fuse_modulo_constants_in_order(%x: !torch.vtensor<[4,16],f32>, %y: !torch.vtensor<[4,16],f32>) -> (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>) {
  %0 = "fusion.group"(%x) ({
  ^bb0(%a: !torch.vtensor<[4,16],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[4,16],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
  %2 = "fusion.group"(%x) ({
  ^bb0(%a: !torch.vtensor<[4,16],f32>):
    %int1 = torch.constant.int 1
    %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %true = torch.constant.bool true
    %none = torch.constant.none
    %m = torch.aten.mean.dim %a, %dims, %true, %none : !torch.vtensor<[4,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
    %eps = torch.constant.float 1.000000e-05
    %v = torch.aten.add.Scalar %m, %eps, %int1 : !torch.vtensor<[4,1],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,1],f32>
    %r = torch.aten.rsqrt %v : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
    %n = torch.aten.mul.Tensor %a, %r : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,16],f32>
    %half = torch.constant.float 5.000000e-01
    %s = torch.aten.mul.Scalar %n, %half : !torch.vtensor<[4,16],f32>, !torch.float -> !torch.vtensor<[4,16],f32>
    "fusion.yield"(%s) : (!torch.vtensor<[4,16],f32>) -> ()
  }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
  %3 = "fusion.group"(%y) ({
  ^bb0(%a: !torch.vtensor<[4,16],f32>):
    %int1 = torch.constant.int 1
    %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %true = torch.constant.bool true
    %none = torch.constant.none
    %m = torch.aten.mean.dim %a, %dims, %true, %none : !torch.vtensor<[4,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
    %eps = torch.constant.float 1.000000e-06
    %v = torch.aten.add.Scalar %m, %eps, %int1 : !torch.vtensor<[4,1],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,1],f32>
    %r = torch.aten.rsqrt %v : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
    %n = torch.aten.mul.Tensor %a, %r : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,16],f32>
    %q = torch.constant.float 2.500000e-01
    %s = torch.aten.mul.Scalar %n, %q : !torch.vtensor<[4,16],f32>, !torch.float -> !torch.vtensor<[4,16],f32>
    "fusion.yield"(%s) : (!torch.vtensor<[4,16],f32>) -> ()
  }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
  return %0, %2, %3 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>
}

// -----

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-NEXT:      "fusion.yield"(%[[EXP]])
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_exp_0"} : () -> ()
// CHECK-NEXT:    "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[Y:.+]]: !torch.vtensor<[4,16],f32>):
// CHECK-NEXT:      %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:      %[[DIMS:.+]] = torch.prim.ListConstruct %[[ONE]]
// CHECK-NEXT:      %[[TRUE:.+]] = torch.constant.bool true
// CHECK-NEXT:      %[[NONE:.+]] = torch.constant.none
// CHECK-NEXT:      %[[MEAN:.+]] = torch.aten.mean.dim %[[Y]], %[[DIMS]], %[[TRUE]], %[[NONE]]
// CHECK-NEXT:      %[[EPS:.+]] = torch.constant.float 9.9999999999999995E-7 {fusion.scalar = 0 : i64}
// CHECK-NEXT:      %[[VAR:.+]] = torch.aten.add.Scalar %[[MEAN]], %[[EPS]], %[[ONE]]
// CHECK-NEXT:      %[[R:.+]] = torch.aten.rsqrt %[[VAR]]
// CHECK-NEXT:      %[[N:.+]] = torch.aten.mul.Tensor %[[Y]], %[[R]]
// CHECK-NEXT:      %[[SCALE:.+]] = torch.constant.float 2.500000e-01 {fusion.scalar = 1 : i64}
// CHECK-NEXT:      %[[OUT:.+]] = torch.aten.mul.Scalar %[[N]], %[[SCALE]]
// CHECK-NEXT:      "fusion.yield"(%[[OUT]])
// CHECK-NEXT:    }) {kind = "persistent-reduction", sym_name = "fused_mean_add_rsqrt_mul_1"} : () -> ()
// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @fuse_modulo_constants_renamed_and_reordered
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,16],f32>, %[[B:.+]]: !torch.vtensor<[4,16],f32>)
// CHECK-NEXT:    "fusion.launch"(%[[A]]) {kernel = @fused_exp_0}
// CHECK-NEXT:    "fusion.launch"(%[[B]]) {kernel = @fused_mean_add_rsqrt_mul_1, scalars = array<f64: 9.9999999999999995E-7, 2.500000e-01>}
// CHECK-NEXT:    "fusion.launch"(%[[A]]) {kernel = @fused_mean_add_rsqrt_mul_1, scalars = array<f64: 1.000000e-05, 5.000000e-01>}
func.func @fuse_modulo_constants_renamed_and_reordered(%p0: !torch.vtensor<[4,16],f32>, %p1: !torch.vtensor<[4,16],f32>) -> (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>) {
  %e = "fusion.group"(%p0) ({
  ^bb0(%in: !torch.vtensor<[4,16],f32>):
    %ex = torch.aten.exp %in : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
    "fusion.yield"(%ex) : (!torch.vtensor<[4,16],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
  %second = "fusion.group"(%p1) ({
  ^bb0(%t: !torch.vtensor<[4,16],f32>):
    %one = torch.constant.int 1
    %l = torch.prim.ListConstruct %one : (!torch.int) -> !torch.list<int>
    %keep = torch.constant.bool true
    %nodtype = torch.constant.none
    %mu = torch.aten.mean.dim %t, %l, %keep, %nodtype : !torch.vtensor<[4,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
    %epsilon = torch.constant.float 1.000000e-06
    %plus = torch.aten.add.Scalar %mu, %epsilon, %one : !torch.vtensor<[4,1],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,1],f32>
    %inv = torch.aten.rsqrt %plus : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
    %normed = torch.aten.mul.Tensor %t, %inv : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,16],f32>
    %quarter = torch.constant.float 2.500000e-01
    %scaled = torch.aten.mul.Scalar %normed, %quarter : !torch.vtensor<[4,16],f32>, !torch.float -> !torch.vtensor<[4,16],f32>
    "fusion.yield"(%scaled) : (!torch.vtensor<[4,16],f32>) -> ()
  }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
  %first = "fusion.group"(%p0) ({
  ^bb0(%t: !torch.vtensor<[4,16],f32>):
    %one = torch.constant.int 1
    %l = torch.prim.ListConstruct %one : (!torch.int) -> !torch.list<int>
    %keep = torch.constant.bool true
    %nodtype = torch.constant.none
    %mu = torch.aten.mean.dim %t, %l, %keep, %nodtype : !torch.vtensor<[4,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
    %epsilon = torch.constant.float 1.000000e-05
    %plus = torch.aten.add.Scalar %mu, %epsilon, %one : !torch.vtensor<[4,1],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,1],f32>
    %inv = torch.aten.rsqrt %plus : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
    %normed = torch.aten.mul.Tensor %t, %inv : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,16],f32>
    %halve = torch.constant.float 5.000000e-01
    %scaled = torch.aten.mul.Scalar %normed, %halve : !torch.vtensor<[4,16],f32>, !torch.float -> !torch.vtensor<[4,16],f32>
    "fusion.yield"(%scaled) : (!torch.vtensor<[4,16],f32>) -> ()
  }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
  return %e, %first, %second : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>
}

// -----

// Each use of a constant is a value of its own: a group reading one 0.5 for
// both mul and clamp_max shares a kernel with one reading 0.25 and 0.7.

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[S:.+]] = torch.constant.float 2.500000e-01 {fusion.scalar = 0 : i64}
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Scalar %[[X]], %[[S]]
// CHECK-NEXT:      %[[B:.+]] = torch.constant.float 0.69999999999999996 {fusion.scalar = 1 : i64}
// CHECK-NEXT:      %[[MAX:.+]] = torch.aten.clamp_max %[[MUL]], %[[B]]
// CHECK-NEXT:      "fusion.yield"(%[[MAX]])
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_mul_clamp_max_0"} : () -> ()
// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @fuse_modulo_constants_shared_differently
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_mul_clamp_max_0, scalars = array<f64: 5.000000e-01, 5.000000e-01>}
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_mul_clamp_max_0, scalars = array<f64: 2.500000e-01, 0.69999999999999996>}
func.func @fuse_modulo_constants_shared_differently(%x: !torch.vtensor<[8],f32>, %y: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = "fusion.group"(%x) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %c = torch.constant.float 5.000000e-01
    %1 = torch.aten.mul.Scalar %a, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    %2 = torch.aten.clamp_max %1, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%2) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %3 = "fusion.group"(%y) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %c = torch.constant.float 2.500000e-01
    %d = torch.constant.float 7.000000e-01
    %4 = torch.aten.mul.Scalar %a, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    %5 = torch.aten.clamp_max %4, %d : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%5) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0, %3 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// A constant that picks the formula stays part of the kernel: pow's exponent
// selects x * x or x * x * x, so pow(x, 2) * 0.5 and pow(x, 3) * 0.5 are two
// kernels. pow(x, 2) * 0.25 shares the first one, taking 0.25 and 0.5 as its
// scalar argument; the exponent stays a literal.

// CHECK:         "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[TWO:.+]] = torch.constant.float 2.000000e+00{{$}}
// CHECK-NEXT:      %[[POW:.+]] = torch.aten.pow.Tensor_Scalar %[[X]], %[[TWO]]
// CHECK-NEXT:      %[[C:.+]] = torch.constant.float 2.500000e-01 {fusion.scalar = 0 : i64}
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Scalar %[[POW]], %[[C]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL]])
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_pow_mul_0"} : () -> ()
// CHECK-NEXT:    "fusion.kernel"() ({
// CHECK-NEXT:    ^bb0(%[[Y:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[THREE:.+]] = torch.constant.float 3.000000e+00{{$}}
// CHECK-NEXT:      %[[POW3:.+]] = torch.aten.pow.Tensor_Scalar %[[Y]], %[[THREE]]
// CHECK-NEXT:      %[[HALF:.+]] = torch.constant.float 5.000000e-01{{$}}
// CHECK-NEXT:      %[[MUL3:.+]] = torch.aten.mul.Scalar %[[POW3]], %[[HALF]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL3]])
// CHECK-NEXT:    }) {kind = "pointwise", sym_name = "fused_pow_mul_1"} : () -> ()
// CHECK-NOT:     "fusion.kernel"
// CHECK-LABEL: func.func @no_fuse_formula_constants
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_pow_mul_0, scalars = array<f64: 5.000000e-01>}
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_pow_mul_1} :
// CHECK-NEXT:    "fusion.launch"(%{{.+}}) {kernel = @fused_pow_mul_0, scalars = array<f64: 2.500000e-01>}
func.func @no_fuse_formula_constants(%arg0: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %e = torch.constant.float 2.000000e+00
    %1 = torch.aten.pow.Tensor_Scalar %a, %e : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    %c = torch.constant.float 5.000000e-01
    %2 = torch.aten.mul.Scalar %1, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%2) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %3 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %e = torch.constant.float 3.000000e+00
    %4 = torch.aten.pow.Tensor_Scalar %a, %e : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    %c = torch.constant.float 5.000000e-01
    %5 = torch.aten.mul.Scalar %4, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%5) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %6 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %e = torch.constant.float 2.000000e+00
    %7 = torch.aten.pow.Tensor_Scalar %a, %e : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    %c = torch.constant.float 2.500000e-01
    %8 = torch.aten.mul.Scalar %7, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%8) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0, %3, %6 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// A constant used both as a plain operand and as pow's exponent is not lifted
// (x * 2 ** 2 and x * 3 ** 3: two kernels), nor are infinities (eager's
// special cases) or a constant of an f64 op (Triton passes a float argument
// as f32, where the literal was exact).

// CHECK:         sym_name = "fused_pow_mul_0"
// CHECK:         sym_name = "fused_pow_mul_1"
// CHECK:         sym_name = "fused_masked_fill_2"
// CHECK:         sym_name = "fused_masked_fill_3"
// CHECK:         sym_name = "fused_mul_4"
// CHECK:         sym_name = "fused_mul_5"
// CHECK-LABEL: func.func @no_fuse_constants_kept
// CHECK-NOT:     scalars
// CHECK:         return
func.func @no_fuse_constants_kept(%x: !torch.vtensor<[8],f32>, %m: !torch.vtensor<[8],i1>, %d: !torch.vtensor<[8],f64>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f64>, !torch.vtensor<[8],f64>) {
  %0 = "fusion.group"(%x) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %c = torch.constant.float 2.000000e+00
    %1 = torch.aten.pow.Tensor_Scalar %a, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    %2 = torch.aten.mul.Scalar %1, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%2) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %3 = "fusion.group"(%x) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %c = torch.constant.float 3.000000e+00
    %4 = torch.aten.pow.Tensor_Scalar %a, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    %5 = torch.aten.mul.Scalar %4, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%5) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  %6 = "fusion.group"(%x, %m) ({
  ^bb0(%a: !torch.vtensor<[8],f32>, %b: !torch.vtensor<[8],i1>):
    %c = torch.constant.float 0xFFF0000000000000
    %7 = torch.aten.masked_fill.Scalar %a, %b, %c : !torch.vtensor<[8],f32>, !torch.vtensor<[8],i1>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%7) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],i1>) -> !torch.vtensor<[8],f32>
  %8 = "fusion.group"(%x, %m) ({
  ^bb0(%a: !torch.vtensor<[8],f32>, %b: !torch.vtensor<[8],i1>):
    %c = torch.constant.float -1.000000e+09
    %9 = torch.aten.masked_fill.Scalar %a, %b, %c : !torch.vtensor<[8],f32>, !torch.vtensor<[8],i1>, !torch.float -> !torch.vtensor<[8],f32>
    "fusion.yield"(%9) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],i1>) -> !torch.vtensor<[8],f32>
  %10 = "fusion.group"(%d) ({
  ^bb0(%a: !torch.vtensor<[8],f64>):
    %c = torch.constant.float 5.000000e-01
    %11 = torch.aten.mul.Scalar %a, %c : !torch.vtensor<[8],f64>, !torch.float -> !torch.vtensor<[8],f64>
    "fusion.yield"(%11) : (!torch.vtensor<[8],f64>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f64>) -> !torch.vtensor<[8],f64>
  %12 = "fusion.group"(%d) ({
  ^bb0(%a: !torch.vtensor<[8],f64>):
    %c = torch.constant.float 2.500000e-01
    %13 = torch.aten.mul.Scalar %a, %c : !torch.vtensor<[8],f64>, !torch.float -> !torch.vtensor<[8],f64>
    "fusion.yield"(%13) : (!torch.vtensor<[8],f64>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f64>) -> !torch.vtensor<[8],f64>
  return %0, %3, %6, %8, %10, %12 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f64>, !torch.vtensor<[8],f64>
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

// -----

// Groups differing only in which piece of an operand they read (the steps
// of an unrolled RNN reading x[t]) share one kernel (hoist-views, on by
// default): the select moves out of the kernel to before each launch, the
// kernel reads the piece as its argument and x itself no longer. The slice
// both groups take alike stays in the kernel. With the option off: two
// kernels, each selecting its own row.

// VIEWS:         ^bb0(%[[W:.+]]: !torch.vtensor<[8],f32>, %[[ROW:.+]]: !torch.vtensor<[4],f32>):
// VIEWS-NEXT:      %[[ZERO:.+]] = torch.constant.int 0
// VIEWS-NEXT:      %[[FOUR:.+]] = torch.constant.int 4
// VIEWS-NEXT:      %[[ONE:.+]] = torch.constant.int 1
// VIEWS-NEXT:      %[[HALF:.+]] = torch.aten.slice.Tensor %[[W]], %[[ZERO]], %[[ZERO]], %[[FOUR]], %[[ONE]]
// VIEWS-NEXT:      %[[SUM:.+]] = torch.aten.add.Tensor %[[ROW]], %[[HALF]], %[[ONE]]
// VIEWS-NEXT:      %[[TANH:.+]] = torch.aten.tanh %[[SUM]]
// VIEWS-NEXT:      "fusion.yield"(%[[TANH]])
// VIEWS-NEXT:    }) {kind = "pointwise", sym_name = "fused_slice_add_tanh_0"} : () -> ()
// VIEWS-NOT:     "fusion.kernel"
// VIEWS-LABEL: func.func @steps_share_a_kernel
// VIEWS:         %[[ROW0:.+]] = torch.aten.select.int %arg0, %{{.+}}, %{{.+}} : !torch.vtensor<[3,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
// VIEWS-NEXT:    %[[H0:.+]] = "fusion.launch"(%arg1, %[[ROW0]]) {kernel = @fused_slice_add_tanh_0}
// VIEWS:         %[[ROW2:.+]] = torch.aten.select.int %arg0, %{{.+}}, %{{.+}} : !torch.vtensor<[3,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
// VIEWS-NEXT:    "fusion.launch"(%arg1, %[[ROW2]]) {kernel = @fused_slice_add_tanh_0}

// NOVIEWS:       sym_name = "fused_select_slice_add_tanh_0"
// NOVIEWS:       sym_name = "fused_select_slice_add_tanh_1"
// NOVIEWS-LABEL: func.func @steps_share_a_kernel
// NOVIEWS-NOT:   torch.aten.select.int
// NOVIEWS:       "fusion.launch"(%arg0, %arg1) {kernel = @fused_select_slice_add_tanh_0}
// NOVIEWS-NEXT:  "fusion.launch"(%arg0, %arg1) {kernel = @fused_select_slice_add_tanh_1}
func.func @steps_share_a_kernel(%arg0: !torch.vtensor<[3,4],f32>, %arg1: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %0 = "fusion.group"(%arg0, %arg1) ({
  ^bb0(%x: !torch.vtensor<[3,4],f32>, %w: !torch.vtensor<[8],f32>):
    %int0 = torch.constant.int 0
    %int4 = torch.constant.int 4
    %int1 = torch.constant.int 1
    %row = torch.aten.select.int %x, %int0, %int0 : !torch.vtensor<[3,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
    %half = torch.aten.slice.Tensor %w, %int0, %int0, %int4, %int1 : !torch.vtensor<[8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
    %sum = torch.aten.add.Tensor %row, %half, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
    %t = torch.aten.tanh %sum : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    "fusion.yield"(%t) : (!torch.vtensor<[4],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[3,4],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[4],f32>
  %1 = "fusion.group"(%arg0, %arg1) ({
  ^bb0(%x: !torch.vtensor<[3,4],f32>, %w: !torch.vtensor<[8],f32>):
    %int0 = torch.constant.int 0
    %int2 = torch.constant.int 2
    %int4 = torch.constant.int 4
    %int1 = torch.constant.int 1
    %row = torch.aten.select.int %x, %int0, %int2 : !torch.vtensor<[3,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
    %half = torch.aten.slice.Tensor %w, %int0, %int0, %int4, %int1 : !torch.vtensor<[8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
    %sum = torch.aten.add.Tensor %row, %half, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
    %t = torch.aten.tanh %sum : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    "fusion.yield"(%t) : (!torch.vtensor<[4],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[3,4],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[4],f32>
  return %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}
