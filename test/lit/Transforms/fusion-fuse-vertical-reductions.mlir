// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-decompose, fusion-fuse-elementwise)' | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-decompose, fusion-fuse-elementwise{persistent-max=4})' | filecheck %s --check-prefix=LOOPED

// Reductions fused with their pointwise prologue and epilogue. Composite ops
// go through fusion-decompose first, as in the default pipeline.

// softmax: amax, sub, exp, sum and div are one group; its 8-element rows fit
// the default persistent-max (4096), so the kind is persistent-reduction.

// CHECK-LABEL: func.func @fuse_softmax
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,8],f32>):
// CHECK:           %[[MAX:.+]] = torch.aten.amax %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:           %[[SUB:.+]] = torch.aten.sub.Tensor %[[X]], %[[MAX]]
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[SUB]]
// CHECK:           %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[EXP]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:      %[[DIV:.+]] = torch.aten.div.Tensor %[[EXP]], %[[SUM]]
// CHECK-NEXT:      "fusion.yield"(%[[DIV]]) : (!torch.vtensor<[4,8],f32>) -> ()
// CHECK-NEXT:    }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_softmax(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %0 = torch.aten.softmax.int %arg0, %int-1, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}

// -----

// layer_norm: the mean and the variance (a reduction of values computed from
// the mean) reduce the same axes, so both are in one group with the
// weight/bias epilogue; weight and bias are [8] operands.

// CHECK-LABEL: func.func @fuse_layer_norm_mean_var
// CHECK-SAME:    (%[[A:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[W:[^:]+]]: !torch.vtensor<[8],f32>, %[[B:[^:]+]]: !torch.vtensor<[8],f32>)
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%[[A]], %[[W]], %[[B]]) ({
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[GW:[^:]+]]: !torch.vtensor<[8],f32>, %[[GB:[^:]+]]: !torch.vtensor<[8],f32>):
// CHECK:           %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:           %[[XC:.+]] = torch.aten.sub.Tensor %[[X]], %[[MEAN]]
// CHECK-NEXT:      %[[SQ:.+]] = torch.aten.mul.Tensor %[[XC]], %[[XC]]
// CHECK:           %[[VAR:.+]] = torch.aten.mean.dim %[[SQ]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:           %[[VEPS:.+]] = torch.aten.add.Scalar %[[VAR]]
// CHECK-NEXT:      %[[RSTD:.+]] = torch.aten.rsqrt %[[VEPS]]
// CHECK-NEXT:      %[[NORM:.+]] = torch.aten.mul.Tensor %[[XC]], %[[RSTD]]
// CHECK-NEXT:      %[[SCALED:.+]] = torch.aten.mul.Tensor %[[NORM]], %[[GW]]
// CHECK:           %[[OUT:.+]] = torch.aten.add.Tensor %[[SCALED]], %[[GB]]
// CHECK-NEXT:      "fusion.yield"(%[[OUT]]) : (!torch.vtensor<[4,8],f32>) -> ()
// CHECK-NEXT:    }) {kind = "persistent-reduction"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_layer_norm_mean_var(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[8],f32>, %arg2: !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int8 = torch.constant.int 8
  %0 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %float1.000000e-05 = torch.constant.float 1.000000e-05
  %false = torch.constant.bool false
  %1 = torch.aten.layer_norm %arg0, %0, %arg1, %arg2, %float1.000000e-05, %false : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.float, !torch.bool -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// rms_norm: the x * x prologue, the mean, the rsqrt on the row and the
// weight epilogue are one group.

// CHECK-LABEL: func.func @fuse_rms_norm
// CHECK-SAME:    (%[[A:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[W:[^:]+]]: !torch.vtensor<[8],f32>)
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%[[A]], %[[W]]) ({
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[GW:[^:]+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[SQ:.+]] = torch.aten.mul.Tensor %[[X]], %[[X]]
// CHECK:           %[[MS:.+]] = torch.aten.mean.dim %[[SQ]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:           %[[MSEPS:.+]] = torch.aten.add.Scalar %[[MS]]
// CHECK-NEXT:      %[[RSTD:.+]] = torch.aten.rsqrt %[[MSEPS]]
// CHECK-NEXT:      %[[NORM:.+]] = torch.aten.mul.Tensor %[[X]], %[[RSTD]]
// CHECK-NEXT:      %[[OUT:.+]] = torch.aten.mul.Tensor %[[NORM]], %[[GW]]
// CHECK-NEXT:      "fusion.yield"(%[[OUT]])
// CHECK-NEXT:    }) {kind = "persistent-reduction"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_rms_norm(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int8 = torch.constant.int 8
  %0 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %float9.999990e-07 = torch.constant.float 9.9999999999999995E-7
  %1 = torch.aten.rms_norm %arg0, %0, %arg1, %float9.999990e-07 : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// Pointwise ops feeding a sum (one of them broadcasting a [8] operand) are
// its prologue: the group yields only the [4,1] sums.

// CHECK-LABEL: func.func @fuse_reduction_prologue
// CHECK-SAME:    (%[[A:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[S:[^:]+]]: !torch.vtensor<[8],f32>)
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%[[A]], %[[S]]) ({
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[Y:[^:]+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Tensor %[[X]], %[[Y]]
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[MUL]]
// CHECK:           %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[EXP]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:      "fusion.yield"(%[[SUM]]) : (!torch.vtensor<[4,1],f32>) -> ()
// CHECK-NEXT:    }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_reduction_prologue(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.mul.Tensor %arg0, %arg1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %2 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %none = torch.constant.none
  %3 = torch.aten.sum.dim_IntList %1, %2, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  return %3 : !torch.vtensor<[4,1],f32>
}

// -----

// rsqrt on the keepdim [4,1] result is a row epilogue: computed once per row
// in the same group.

// CHECK-LABEL: func.func @fuse_reduction_epilogue_row
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,8],f32>):
// CHECK:           %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:      %[[RSQRT:.+]] = torch.aten.rsqrt %[[MEAN]] : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:      "fusion.yield"(%[[RSQRT]]) : (!torch.vtensor<[4,1],f32>) -> ()
// CHECK-NEXT:    }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_reduction_epilogue_row(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %none = torch.constant.none
  %1 = torch.aten.mean.dim %arg0, %0, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %2 = torch.aten.rsqrt %1 : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
  return %2 : !torch.vtensor<[4,1],f32>
}

// -----

// The same softmax with persistent-max=4: 8-element rows no longer fit one
// block, so the group (the same five ops) is a looped "reduction".

// CHECK-LABEL:  func.func @fuse_looped_reduction
// CHECK:          }) {kind = "persistent-reduction"}

// LOOPED-LABEL: func.func @fuse_looped_reduction
// LOOPED-SAME:    (%[[A:.+]]: !torch.vtensor<[4,8],f32>)
// LOOPED-NEXT:    %[[G:.+]] = "fusion.group"(%[[A]]) ({
// LOOPED-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,8],f32>):
// LOOPED:           %[[MAX:.+]] = torch.aten.amax %[[X]]
// LOOPED:           %[[SUB:.+]] = torch.aten.sub.Tensor %[[X]], %[[MAX]]
// LOOPED-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[SUB]]
// LOOPED:           %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[EXP]]
// LOOPED-NEXT:      %[[DIV:.+]] = torch.aten.div.Tensor %[[EXP]], %[[SUM]]
// LOOPED-NEXT:      "fusion.yield"(%[[DIV]])
// LOOPED-NEXT:    }) {kind = "reduction"} : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
// LOOPED-NEXT:    return %[[G]]
func.func @fuse_looped_reduction(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.softmax.int %arg0, %int1, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}

// -----

// persistent-max is inclusive: rows of exactly 4 elements stay persistent.

// LOOPED-LABEL: func.func @fuse_persistent_at_limit
// LOOPED:         torch.aten.sum.dim_IntList %{{.+}} -> !torch.vtensor<[8,1],f32>
// LOOPED:         }) {kind = "persistent-reduction"} : (!torch.vtensor<[8,4],f32>) -> !torch.vtensor<[8,1],f32>
func.func @fuse_persistent_at_limit(%arg0: !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[8,1],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %none = torch.constant.none
  %1 = torch.aten.sum.dim_IntList %arg0, %0, %true, %none : !torch.vtensor<[8,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8,1],f32>
  return %1 : !torch.vtensor<[8,1],f32>
}

// -----

// Sums over dim 0 and over dim 1 of the same exp: one kernel cannot tile
// both, so they stay in two groups. exp joins the first (exported for the
// second); the mul of the [1,8] and [4,1] results joins the second.

// CHECK-LABEL: func.func @no_fuse_reductions_different_axes
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NEXT:    %[[G0:.+]]:2 = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,8],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK:           %[[COLS:.+]] = torch.aten.sum.dim_IntList %[[EXP]], %{{.+}} -> !torch.vtensor<[1,8],f32>
// CHECK-NOT:       torch.aten.sum.dim_IntList
// CHECK:           "fusion.yield"(%[[COLS]], %[[EXP]])
// CHECK-NEXT:    }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[1,8],f32>, !torch.vtensor<[4,8],f32>)
// CHECK-NEXT:    %[[G1:.+]] = "fusion.group"(%[[G0]]#1, %[[G0]]#0) ({
// CHECK-NEXT:    ^bb0(%[[E:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[C:[^:]+]]: !torch.vtensor<[1,8],f32>):
// CHECK-NOT:       torch.aten.exp
// CHECK:           %[[ROWS:.+]] = torch.aten.sum.dim_IntList %[[E]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Tensor %[[C]], %[[ROWS]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL]])
// CHECK-NEXT:    }) {kind = "persistent-reduction"}
// CHECK-NEXT:    return %[[G1]]
func.func @no_fuse_reductions_different_axes(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %2 = torch.aten.sum.dim_IntList %0, %1, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,8],f32>
  %3 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %4 = torch.aten.sum.dim_IntList %0, %3, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %5 = torch.aten.mul.Tensor %2, %4 : !torch.vtensor<[1,8],f32>, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,8],f32>
  return %5 : !torch.vtensor<[4,8],f32>
}

// -----

// x.sum(1) without keepdim is [4]: in the kernel's [4,8] space it would
// broadcast along the last axis, not along the rows it was reduced from, so
// it may only leave the group; the mul reading it is a pointwise group.

// CHECK-LABEL: func.func @no_fuse_keepdim_false_result_used
// CHECK-SAME:    (%[[A:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[S:[^:]+]]: !torch.vtensor<[4],f32>)
// CHECK-NEXT:    %[[RED:.+]] = "fusion.group"(%[[A]]) ({
// CHECK:           %[[SUM:.+]] = torch.aten.sum.dim_IntList %{{.+}} -> !torch.vtensor<[4],f32>
// CHECK-NEXT:      "fusion.yield"(%[[SUM]]) : (!torch.vtensor<[4],f32>) -> ()
// CHECK-NEXT:    }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    %[[PW:.+]] = "fusion.group"(%[[RED]], %[[S]]) ({
// CHECK-NEXT:    ^bb0(%[[R:[^:]+]]: !torch.vtensor<[4],f32>, %[[Y:[^:]+]]: !torch.vtensor<[4],f32>):
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Tensor %[[R]], %[[Y]]
// CHECK-NEXT:      "fusion.yield"(%[[MUL]])
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    return %[[PW]]
func.func @no_fuse_keepdim_false_result_used(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %1 = torch.aten.sum.dim_IntList %arg0, %0, %false, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4],f32>
  %2 = torch.aten.mul.Tensor %1, %arg1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %2 : !torch.vtensor<[4],f32>
}

// -----

// The sum reaches add both directly and through mm: a group holding both
// would have to run before and after mm.

// CHECK-LABEL: func.func @no_fuse_reduction_cycle
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8,8],f32>)
// CHECK-NEXT:    %[[RED:.+]] = "fusion.group"(%[[A]]) ({
// CHECK:           %[[SUM:.+]] = torch.aten.sum.dim_IntList
// CHECK-NEXT:      "fusion.yield"(%[[SUM]])
// CHECK-NEXT:    }) {kind = "persistent-reduction"} : (!torch.vtensor<[8,8],f32>) -> !torch.vtensor<[8,1],f32>
// CHECK-NEXT:    %[[MM:.+]] = torch.aten.mm %[[A]], %[[RED]]
// CHECK-NEXT:    %[[ADD:.+]] = "fusion.group"(%[[RED]], %[[MM]]) ({
// CHECK-NOT:       torch.aten.sum.dim_IntList
// CHECK:           torch.aten.add.Tensor
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[ADD]]
func.func @no_fuse_reduction_cycle(%arg0: !torch.vtensor<[8,8],f32>) -> !torch.vtensor<[8,1],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %none = torch.constant.none
  %1 = torch.aten.sum.dim_IntList %arg0, %0, %true, %none : !torch.vtensor<[8,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8,1],f32>
  %2 = torch.aten.mm %arg0, %1 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8,1],f32> -> !torch.vtensor<[8,1],f32>
  %3 = torch.aten.add.Tensor %1, %2, %int1 : !torch.vtensor<[8,1],f32>, !torch.vtensor<[8,1],f32>, !torch.int -> !torch.vtensor<[8,1],f32>
  return %3 : !torch.vtensor<[8,1],f32>
}

// -----

// The add broadcasts the [4,1] sums up to [3,4,1], a shape that does not
// broadcast into the reduced input's [4,8]: it has its own iteration space.

// CHECK-LABEL: func.func @no_fuse_broadcast_bigger
// CHECK-SAME:    (%[[A:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[S:[^:]+]]: !torch.vtensor<[3,4,1],f32>)
// CHECK-NEXT:    %[[RED:.+]] = "fusion.group"(%[[A]]) ({
// CHECK:           %[[SUM:.+]] = torch.aten.sum.dim_IntList
// CHECK-NEXT:      "fusion.yield"(%[[SUM]])
// CHECK-NEXT:    }) {kind = "persistent-reduction"} : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[PW:.+]] = "fusion.group"(%[[RED]], %[[S]]) ({
// CHECK-NOT:       torch.aten.sum.dim_IntList
// CHECK:           torch.aten.add.Tensor %{{.+}} -> !torch.vtensor<[3,4,1],f32>
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[4,1],f32>, !torch.vtensor<[3,4,1],f32>) -> !torch.vtensor<[3,4,1],f32>
// CHECK-NEXT:    return %[[PW]]
func.func @no_fuse_broadcast_bigger(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[3,4,1],f32>) -> !torch.vtensor<[3,4,1],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %none = torch.constant.none
  %1 = torch.aten.sum.dim_IntList %arg0, %0, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %2 = torch.aten.add.Tensor %1, %arg1, %int1 : !torch.vtensor<[4,1],f32>, !torch.vtensor<[3,4,1],f32>, !torch.int -> !torch.vtensor<[3,4,1],f32>
  return %2 : !torch.vtensor<[3,4,1],f32>
}
