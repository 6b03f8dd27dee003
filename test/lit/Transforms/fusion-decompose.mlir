// RUN: mlirfuse-opt %s --split-input-file --fusion-decompose | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --mlirfuse-pipeline | filecheck %s --check-prefix=PIPE

// Inputs are spelled as torch-mlir's FX importer emits them (through
// mlirfuse.frontend's export with `run_decompositions({})`): composite ops
// arrive whole and leave as keepdim reductions plus elementwise ops.

// softmax over dim -1: the dim is normalized to 1 and every reduction keeps
// its dim, so amax and sum broadcast back over the row.

// CHECK-LABEL: func.func @decompose_softmax
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NOT:     torch.aten.softmax.int
// CHECK:         %[[D0:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[DIMS0:.+]] = torch.prim.ListConstruct %[[D0]] : (!torch.int) -> !torch.list<int>
// CHECK-NEXT:    %[[KEEP0:.+]] = torch.constant.bool true
// CHECK-NEXT:    %[[MAX:.+]] = torch.aten.amax %[[X]], %[[DIMS0]], %[[KEEP0]] : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[SUB:.+]] = torch.aten.sub.Tensor %[[X]], %[[MAX]], %{{.+}} : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[EXP:.+]] = torch.aten.exp %[[SUB]] : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[D1:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[DIMS1:.+]] = torch.prim.ListConstruct %[[D1]] : (!torch.int) -> !torch.list<int>
// CHECK-NEXT:    %[[KEEP1:.+]] = torch.constant.bool true
// CHECK-NEXT:    %[[NONE:.+]] = torch.constant.none
// CHECK-NEXT:    %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[EXP]], %[[DIMS1]], %[[KEEP1]], %[[NONE]] : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[DIV:.+]] = torch.aten.div.Tensor %[[EXP]], %[[SUM]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    return %[[DIV]] : !torch.vtensor<[4,8],f32>
func.func @decompose_softmax(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %0 = torch.aten.softmax.int %arg0, %int-1, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}

// -----

// log_softmax = (x - amax) - log(sum(exp(x - amax))): the shifted x is
// reused, the log is taken on the [4,1] row sums only.

// CHECK-LABEL: func.func @decompose_log_softmax
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NOT:     torch.aten.log_softmax.int
// CHECK:         %[[MAX:.+]] = torch.aten.amax %[[X]], %{{.+}}, %{{.+}} : {{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[SUB:.+]] = torch.aten.sub.Tensor %[[X]], %[[MAX]], %{{.+}} -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[EXP:.+]] = torch.aten.exp %[[SUB]]
// CHECK:         %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[EXP]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[LOG:.+]] = torch.aten.log %[[SUM]] : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[ALPHA:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[OUT:.+]] = torch.aten.sub.Tensor %[[SUB]], %[[LOG]], %[[ALPHA]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    return %[[OUT]]
func.func @decompose_log_softmax(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.log_softmax.int %arg0, %int1, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}

// -----

// softmax(x.half(), 1, dtype=torch.float32): the input is converted to the
// result dtype (6 = f32) first, and everything after runs in f32.

// CHECK-LABEL: func.func @decompose_softmax_dtype
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f16>)
// CHECK-NOT:     torch.aten.softmax.int
// CHECK:         %[[F32:.+]] = torch.constant.int 6
// CHECK-NEXT:    %[[UP:.+]] = torch.prims.convert_element_type %[[X]], %[[F32]] : !torch.vtensor<[4,8],f16>, !torch.int -> !torch.vtensor<[4,8],f32>
// CHECK:         %[[MAX:.+]] = torch.aten.amax %[[UP]], %{{.+}}, %{{.+}} : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[SUB:.+]] = torch.aten.sub.Tensor %[[UP]], %[[MAX]]
// CHECK-NEXT:    %[[EXP:.+]] = torch.aten.exp %[[SUB]]
// CHECK:         %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[EXP]]
// CHECK-NEXT:    %[[DIV:.+]] = torch.aten.div.Tensor %[[EXP]], %[[SUM]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    return %[[DIV]]
func.func @decompose_softmax_dtype(%arg0: !torch.vtensor<[4,8],f16>) -> !torch.vtensor<[4,8],f32> {
  %int1 = torch.constant.int 1
  %int6 = torch.constant.int 6
  %0 = torch.aten.softmax.int %arg0, %int1, %int6 : !torch.vtensor<[4,8],f16>, !torch.int, !torch.int -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}

// -----

// The `_` variants take half_to_float instead of a dtype; the result type
// (f32 for an f16 input) says the same, and the input is converted first.

// CHECK-LABEL: func.func @decompose__log_softmax_half_to_float
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f16>)
// CHECK-NOT:     torch.aten._log_softmax
// CHECK:         %[[F32:.+]] = torch.constant.int 6
// CHECK-NEXT:    %[[UP:.+]] = torch.prims.convert_element_type %[[X]], %[[F32]] : !torch.vtensor<[4,8],f16>, !torch.int -> !torch.vtensor<[4,8],f32>
// CHECK:         %[[MAX:.+]] = torch.aten.amax %[[UP]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[SUB:.+]] = torch.aten.sub.Tensor %[[UP]], %[[MAX]]
// CHECK-NEXT:    %[[EXP:.+]] = torch.aten.exp %[[SUB]]
// CHECK:         %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[EXP]]
// CHECK-NEXT:    %[[LOG:.+]] = torch.aten.log %[[SUM]]
// CHECK:         %[[OUT:.+]] = torch.aten.sub.Tensor %[[SUB]], %[[LOG]], %{{.+}} -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    return %[[OUT]]
func.func @decompose__log_softmax_half_to_float(%arg0: !torch.vtensor<[4,8],f16>) -> !torch.vtensor<[4,8],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %0 = torch.aten._log_softmax %arg0, %int1, %true : !torch.vtensor<[4,8],f16>, !torch.int, !torch.bool -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}

// -----

// layer_norm over the last dim: two-pass variance (mean, then the mean of
// squared deviations), then weight and bias broadcast from [8].

// CHECK-LABEL: func.func @decompose_layer_norm
// CHECK-SAME:    (%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[W:[^:]+]]: !torch.vtensor<[8],f32>, %[[B:[^:]+]]: !torch.vtensor<[8],f32>)
// CHECK-NOT:     torch.aten.layer_norm
// CHECK:         %[[D0:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[DIMS0:.+]] = torch.prim.ListConstruct %[[D0]] : (!torch.int) -> !torch.list<int>
// CHECK-NEXT:    %[[KEEP0:.+]] = torch.constant.bool true
// CHECK-NEXT:    %[[NONE0:.+]] = torch.constant.none
// CHECK-NEXT:    %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %[[DIMS0]], %[[KEEP0]], %[[NONE0]] : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[XC:.+]] = torch.aten.sub.Tensor %[[X]], %[[MEAN]], %{{.+}} -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[SQ:.+]] = torch.aten.mul.Tensor %[[XC]], %[[XC]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
// CHECK:         %[[VAR:.+]] = torch.aten.mean.dim %[[SQ]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[EPS:.+]] = torch.constant.float 1.000000e-05
// CHECK-NEXT:    %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[VEPS:.+]] = torch.aten.add.Scalar %[[VAR]], %[[EPS]], %[[ONE]] : !torch.vtensor<[4,1],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[RSTD:.+]] = torch.aten.rsqrt %[[VEPS]] : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[NORM:.+]] = torch.aten.mul.Tensor %[[XC]], %[[RSTD]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[SCALED:.+]] = torch.aten.mul.Tensor %[[NORM]], %[[W]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[ALPHA:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[OUT:.+]] = torch.aten.add.Tensor %[[SCALED]], %[[B]], %[[ALPHA]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    return %[[OUT]]
func.func @decompose_layer_norm(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[8],f32>, %arg2: !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int8 = torch.constant.int 8
  %0 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %float1.000000e-05 = torch.constant.float 1.000000e-05
  %false = torch.constant.bool false
  %1 = torch.aten.layer_norm %arg0, %0, %arg1, %arg2, %float1.000000e-05, %false : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.float, !torch.bool -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// native_layer_norm's three results are (y, mean, rstd), both statistics
// keepdim [4,1]: the mean and the rsqrt computed for y are returned as is.

// CHECK-LABEL: func.func @decompose_native_layer_norm
// CHECK-SAME:    (%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[W:[^:]+]]: !torch.vtensor<[8],f32>, %[[B:[^:]+]]: !torch.vtensor<[8],f32>)
// CHECK-NOT:     torch.aten.native_layer_norm
// CHECK:         %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[XC:.+]] = torch.aten.sub.Tensor %[[X]], %[[MEAN]]
// CHECK-NEXT:    %[[SQ:.+]] = torch.aten.mul.Tensor %[[XC]], %[[XC]]
// CHECK:         %[[VAR:.+]] = torch.aten.mean.dim %[[SQ]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[VEPS:.+]] = torch.aten.add.Scalar %[[VAR]]
// CHECK-NEXT:    %[[RSTD:.+]] = torch.aten.rsqrt %[[VEPS]]
// CHECK-NEXT:    %[[NORM:.+]] = torch.aten.mul.Tensor %[[XC]], %[[RSTD]]
// CHECK-NEXT:    %[[SCALED:.+]] = torch.aten.mul.Tensor %[[NORM]], %[[W]]
// CHECK:         %[[OUT:.+]] = torch.aten.add.Tensor %[[SCALED]], %[[B]]
// CHECK-NEXT:    return %[[OUT]], %[[MEAN]], %[[RSTD]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
func.func @decompose_native_layer_norm(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[8],f32>, %arg2: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>) {
  %int8 = torch.constant.int 8
  %0 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %float1.000000e-05 = torch.constant.float 1.000000e-05
  %result0, %result1, %result2 = torch.aten.native_layer_norm %arg0, %0, %arg1, %arg2, %float1.000000e-05 : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
  return %result0, %result1, %result2 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
}

// -----

// rms_norm = x * rsqrt(mean(x * x) + eps) * w: no centering, one reduction.

// CHECK-LABEL: func.func @decompose_rms_norm
// CHECK-SAME:    (%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[W:[^:]+]]: !torch.vtensor<[8],f32>)
// CHECK-NOT:     torch.aten.rms_norm
// CHECK:         %[[SQ:.+]] = torch.aten.mul.Tensor %[[X]], %[[X]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[D:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[DIMS:.+]] = torch.prim.ListConstruct %[[D]] : (!torch.int) -> !torch.list<int>
// CHECK-NEXT:    %[[KEEP:.+]] = torch.constant.bool true
// CHECK-NEXT:    %[[NONE:.+]] = torch.constant.none
// CHECK-NEXT:    %[[MS:.+]] = torch.aten.mean.dim %[[SQ]], %[[DIMS]], %[[KEEP]], %[[NONE]] : {{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[EPS:.+]] = torch.constant.float 9.9999999999999995E-7
// CHECK-NEXT:    %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[MSEPS:.+]] = torch.aten.add.Scalar %[[MS]], %[[EPS]], %[[ONE]]
// CHECK-NEXT:    %[[RSTD:.+]] = torch.aten.rsqrt %[[MSEPS]] : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[NORM:.+]] = torch.aten.mul.Tensor %[[X]], %[[RSTD]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[OUT:.+]] = torch.aten.mul.Tensor %[[NORM]], %[[W]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    return %[[OUT]]
func.func @decompose_rms_norm(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int8 = torch.constant.int 8
  %0 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %float9.999990e-07 = torch.constant.float 9.9999999999999995E-7
  %1 = torch.aten.rms_norm %arg0, %0, %arg1, %float9.999990e-07 : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// torch.var(x, 1, correction=1, keepdim=True): the squared deviations are
// summed with the op's own keepdim and divided by N - correction = 8 - 1.

// CHECK-LABEL: func.func @decompose_var
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NOT:     torch.aten.var.correction
// CHECK:         %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[XC:.+]] = torch.aten.sub.Tensor %[[X]], %[[MEAN]], %{{.+}} -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[SQ:.+]] = torch.aten.mul.Tensor %[[XC]], %[[XC]]
// CHECK-NEXT:    %[[D:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[DIMS:.+]] = torch.prim.ListConstruct %[[D]]
// CHECK-NEXT:    %[[KEEP:.+]] = torch.constant.bool true
// CHECK-NEXT:    %[[NONE:.+]] = torch.constant.none
// CHECK-NEXT:    %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[SQ]], %[[DIMS]], %[[KEEP]], %[[NONE]] : {{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[N:.+]] = torch.constant.int 7
// CHECK-NEXT:    %[[VAR:.+]] = torch.aten.div.Scalar %[[SUM]], %[[N]] : !torch.vtensor<[4,1],f32>, !torch.int -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    return %[[VAR]]
func.func @decompose_var(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %int1_0 = torch.constant.int 1
  %true = torch.constant.bool true
  %1 = torch.aten.var.correction %arg0, %0, %int1_0, %true : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>
  return %1 : !torch.vtensor<[4,1],f32>
}

// -----

// torch.std(x, 1, correction=0): the divisor is N = 8 and sqrt follows.
// Without keepdim the sum still keeps its dim, so that the division and
// sqrt fuse as a row epilogue; a view drops the dim at the end.

// CHECK-LABEL: func.func @decompose_std
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NOT:     torch.aten.std.correction
// CHECK:         %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[XC:.+]] = torch.aten.sub.Tensor %[[X]], %[[MEAN]]
// CHECK-NEXT:    %[[SQ:.+]] = torch.aten.mul.Tensor %[[XC]], %[[XC]]
// CHECK-NEXT:    %[[D:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[DIMS:.+]] = torch.prim.ListConstruct %[[D]]
// CHECK-NEXT:    %[[KEEP:.+]] = torch.constant.bool true
// CHECK-NEXT:    %[[NONE:.+]] = torch.constant.none
// CHECK-NEXT:    %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[SQ]], %[[DIMS]], %[[KEEP]], %[[NONE]] : {{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[N:.+]] = torch.constant.int 8
// CHECK-NEXT:    %[[VAR:.+]] = torch.aten.div.Scalar %[[SUM]], %[[N]] : !torch.vtensor<[4,1],f32>, !torch.int -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[STD:.+]] = torch.aten.sqrt %[[VAR]] : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[ROWS:.+]] = torch.constant.int 4
// CHECK-NEXT:    %[[SHAPE:.+]] = torch.prim.ListConstruct %[[ROWS]] : (!torch.int) -> !torch.list<int>
// CHECK-NEXT:    %[[OUT:.+]] = torch.aten.view %[[STD]], %[[SHAPE]] : !torch.vtensor<[4,1],f32>, !torch.list<int> -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    return %[[OUT]]
func.func @decompose_std(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %1 = torch.aten.std.correction %arg0, %0, %int0, %false : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.int, !torch.bool -> !torch.vtensor<[4],f32>
  return %1 : !torch.vtensor<[4],f32>
}

// -----

// torch.var(x, 1) imports as var.dim: `unbiased=True` is correction 1.

// CHECK-LABEL: func.func @decompose_var_dim
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NOT:     torch.aten.var.dim
// CHECK:         %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[SUM:.+]] = torch.aten.sum.dim_IntList %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[N:.+]] = torch.constant.int 7
// CHECK-NEXT:    %[[VAR:.+]] = torch.aten.div.Scalar %[[SUM]], %[[N]]
// CHECK:         %[[OUT:.+]] = torch.aten.view %[[VAR]], %{{.+}} -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    return %[[OUT]]
func.func @decompose_var_dim(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %1 = torch.aten.var.dim %arg0, %0, %true, %false : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.bool -> !torch.vtensor<[4],f32>
  return %1 : !torch.vtensor<[4],f32>
}

// -----

// var_mean with keepdim: the mean computed for the variance is the second
// result, not a second reduction.

// CHECK-LABEL: func.func @decompose_var_mean
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NOT:     torch.aten.var_mean.correction
// CHECK:         %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[XC:.+]] = torch.aten.sub.Tensor %[[X]], %[[MEAN]]
// CHECK-NEXT:    %[[SQ:.+]] = torch.aten.mul.Tensor %[[XC]], %[[XC]]
// CHECK:         %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[SQ]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[N:.+]] = torch.constant.int 8
// CHECK-NEXT:    %[[VAR:.+]] = torch.aten.div.Scalar %[[SUM]], %[[N]]
// CHECK-NOT:     torch.aten.mean.dim
// CHECK-NEXT:    return %[[VAR]], %[[MEAN]] : !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
func.func @decompose_var_mean(%arg0: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %int0 = torch.constant.int 0
  %true = torch.constant.bool true
  %result0, %result1 = torch.aten.var_mean.correction %arg0, %0, %int0, %true : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
  return %result0, %result1 : !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
}

// -----

// x.var(): dim=None reduces every dim and correction=None means 1, so the
// divisor is 4 * 8 - 1 = 31; the [1,1] result is viewed as a 0-d tensor.

// CHECK-LABEL: func.func @decompose_var_all_dims
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NOT:     torch.aten.var.correction
// CHECK:         %[[D0:.+]] = torch.constant.int 0
// CHECK-NEXT:    %[[D1:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[DIMS:.+]] = torch.prim.ListConstruct %[[D0]], %[[D1]] : (!torch.int, !torch.int) -> !torch.list<int>
// CHECK:         %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %[[DIMS]], %{{.+}} -> !torch.vtensor<[1,1],f32>
// CHECK:         %[[SUM:.+]] = torch.aten.sum.dim_IntList %{{.+}} -> !torch.vtensor<[1,1],f32>
// CHECK-NEXT:    %[[N:.+]] = torch.constant.int 31
// CHECK-NEXT:    %[[VAR:.+]] = torch.aten.div.Scalar %[[SUM]], %[[N]] : !torch.vtensor<[1,1],f32>, !torch.int -> !torch.vtensor<[1,1],f32>
// CHECK-NEXT:    %[[SHAPE:.+]] = torch.prim.ListConstruct  : () -> !torch.list<int>
// CHECK-NEXT:    %[[OUT:.+]] = torch.aten.view %[[VAR]], %[[SHAPE]] : !torch.vtensor<[1,1],f32>, !torch.list<int> -> !torch.vtensor<[],f32>
// CHECK-NEXT:    return %[[OUT]]
func.func @decompose_var_all_dims(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[],f32> {
  %none = torch.constant.none
  %none_0 = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten.var.correction %arg0, %none, %none_0, %false : !torch.vtensor<[4,8],f32>, !torch.none, !torch.none, !torch.bool -> !torch.vtensor<[],f32>
  return %0 : !torch.vtensor<[],f32>
}

// -----

// logsumexp = log(sum(exp(x - m))) + m with m = amax(x), except that an
// infinite m is replaced by 0 (all -inf rows give -inf, not nan).

// CHECK-LABEL: func.func @decompose_logsumexp
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NOT:     torch.aten.logsumexp
// CHECK:         %[[MAX:.+]] = torch.aten.amax %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[ABS:.+]] = torch.aten.abs %[[MAX]] : !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[INF:.+]] = torch.constant.float 0x7FF0000000000000
// CHECK-NEXT:    %[[ISINF:.+]] = torch.aten.eq.Scalar %[[ABS]], %[[INF]] : !torch.vtensor<[4,1],f32>, !torch.float -> !torch.vtensor<[4,1],i1>
// CHECK-NEXT:    %[[ZERO:.+]] = torch.constant.float 0.000000e+00
// CHECK-NEXT:    %[[M:.+]] = torch.aten.where.ScalarSelf %[[ISINF]], %[[ZERO]], %[[MAX]] : !torch.vtensor<[4,1],i1>, !torch.float, !torch.vtensor<[4,1],f32> -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[SUB:.+]] = torch.aten.sub.Tensor %[[X]], %[[M]], %{{.+}} -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[EXP:.+]] = torch.aten.exp %[[SUB]]
// CHECK:         %[[SUM:.+]] = torch.aten.sum.dim_IntList %[[EXP]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[LOG:.+]] = torch.aten.log %[[SUM]]
// CHECK-NEXT:    %[[ALPHA:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[OUT:.+]] = torch.aten.add.Tensor %[[LOG]], %[[M]], %[[ALPHA]] : !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>, !torch.int -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    return %[[OUT]]
func.func @decompose_logsumexp(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %1 = torch.aten.logsumexp %arg0, %0, %true : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[4,1],f32>
  return %1 : !torch.vtensor<[4,1],f32>
}

// -----

// logsumexp without keepdim still reduces with keepdim (m must broadcast
// back over x); the [4,1] result is viewed as [4] at the end.

// CHECK-LABEL: func.func @decompose_logsumexp_no_keepdim
// CHECK-NOT:     torch.aten.logsumexp
// CHECK:         torch.aten.amax %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         torch.aten.sum.dim_IntList %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[OUT:.+]] = torch.aten.add.Tensor %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[N:.+]] = torch.constant.int 4
// CHECK-NEXT:    %[[SHAPE:.+]] = torch.prim.ListConstruct %[[N]] : (!torch.int) -> !torch.list<int>
// CHECK-NEXT:    %[[VIEW:.+]] = torch.aten.view %[[OUT]], %[[SHAPE]] : !torch.vtensor<[4,1],f32>, !torch.list<int> -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    return %[[VIEW]]
func.func @decompose_logsumexp_no_keepdim(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %1 = torch.aten.logsumexp %arg0, %0, %false : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[4],f32>
  return %1 : !torch.vtensor<[4],f32>
}

// -----

// A dynamic batch: the softmax dim is static, so the op decomposes with `?`
// kept in the types (its kernel takes the batch as an argument).

// CHECK-LABEL: func.func @decompose_dynamic_batch
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[?,8],f32>)
// CHECK:         %[[M:.+]] = torch.aten.amax %[[X]], %{{.+}}, %{{.+}} : !torch.vtensor<[?,8],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,1],f32>
// CHECK:         torch.aten.sub.Tensor %[[X]], %[[M]], %{{.+}} : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,1],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
// CHECK:         torch.aten.sum.dim_IntList {{.*}} -> !torch.vtensor<[?,1],f32>
// CHECK:         %[[DIV:.+]] = torch.aten.div.Tensor {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK-NEXT:    return %[[DIV]]
// CHECK-NOT:     torch.aten.softmax.int
func.func @decompose_dynamic_batch(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.softmax.int %arg0, %int1, %none : !torch.vtensor<[?,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[?,8],f32>
  return %0 : !torch.vtensor<[?,8],f32>
}

// -----

// A softmax over a `?` dim decomposes as well: its reductions loop over the row.

// CHECK-LABEL: func.func @decompose_dynamic_softmax_dim
// CHECK:         torch.aten.amax {{.*}} -> !torch.vtensor<[8,1],f32>
// CHECK:         torch.aten.sum.dim_IntList {{.*}} -> !torch.vtensor<[8,1],f32>
// CHECK-NOT:     torch.aten.softmax.int
func.func @decompose_dynamic_softmax_dim(%arg0: !torch.vtensor<[8,?],f32>) -> !torch.vtensor<[8,?],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.softmax.int %arg0, %int1, %none : !torch.vtensor<[8,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[8,?],f32>
  return %0 : !torch.vtensor<[8,?],f32>
}

// -----

// layer_norm on a dynamic batch decomposes the same way (static normalized dims).

// CHECK-LABEL: func.func @decompose_dynamic_batch_layer_norm
// CHECK:         torch.aten.mean.dim {{.*}} -> !torch.vtensor<[?,1],f32>
// CHECK:         torch.aten.rsqrt {{.*}} -> !torch.vtensor<[?,1],f32>
// CHECK-NOT:     torch.aten.layer_norm
func.func @decompose_dynamic_batch_layer_norm(%arg0: !torch.vtensor<[?,8],f32>, %arg1: !torch.vtensor<[8],f32>, %arg2: !torch.vtensor<[8],f32>) -> !torch.vtensor<[?,8],f32> {
  %int8 = torch.constant.int 8
  %0 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %float1.000000e-05 = torch.constant.float 1.000000e-05
  %false = torch.constant.bool false
  %1 = torch.aten.layer_norm %arg0, %0, %arg1, %arg2, %float1.000000e-05, %false : !torch.vtensor<[?,8],f32>, !torch.list<int>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.float, !torch.bool -> !torch.vtensor<[?,8],f32>
  return %1 : !torch.vtensor<[?,8],f32>
}

// -----

// The reduced dim is only known at run time: nothing to decompose into.

// CHECK-LABEL: func.func @no_decompose_nonconstant_dim
// CHECK-SAME:    (%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[DIM:[^:]+]]: !torch.int)
// CHECK-NOT:     torch.aten.amax
// CHECK:         %[[NONE:.+]] = torch.constant.none
// CHECK-NEXT:    %[[SM:.+]] = torch.aten.softmax.int %[[X]], %[[DIM]], %[[NONE]]
// CHECK-NEXT:    return %[[SM]]
func.func @no_decompose_nonconstant_dim(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.int) -> !torch.vtensor<[4,8],f32> {
  %none = torch.constant.none
  %0 = torch.aten.softmax.int %arg0, %arg1, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  return %0 : !torch.vtensor<[4,8],f32>
}

// -----

// A dim list holding a run-time int is not constant either.

// CHECK-LABEL: func.func @no_decompose_nonconstant_dim_list
// CHECK-SAME:    (%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[DIM:[^:]+]]: !torch.int)
// CHECK-NOT:     torch.aten.mean.dim
// CHECK:         %[[DIMS:.+]] = torch.prim.ListConstruct %[[DIM]]
// CHECK:         %[[VAR:.+]] = torch.aten.var.correction %[[X]], %[[DIMS]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    return %[[VAR]]
func.func @no_decompose_nonconstant_dim_list(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.int) -> !torch.vtensor<[4,1],f32> {
  %0 = torch.prim.ListConstruct %arg1 : (!torch.int) -> !torch.list<int>
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %1 = torch.aten.var.correction %arg0, %0, %int1, %true : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>
  return %1 : !torch.vtensor<[4,1],f32>
}

// -----

// Inference batch norm (the importer's torch.operator spelling): per-channel
// statistics and affine viewed as [C, 1, 1], one pointwise chain; the
// unused saved-stat results go away with the op. Eager's CPU kernel step for
// step: a = rsqrt(var + eps) * w, c = b - mean * a as one fma (addcmul with
// value -1), y = fma(x, a, c) (addcmul).

// CHECK-LABEL: func.func @decompose_batch_norm_inference
// CHECK-NOT:     torch.operator
// CHECK:         %[[RV:.+]] = torch.aten.view %arg4, %{{.+}} -> !torch.vtensor<[4,1,1],f32>
// CHECK:         %[[E:.+]] = torch.aten.add.Scalar %[[RV]]
// CHECK:         %[[R:.+]] = torch.aten.rsqrt %[[E]]
// CHECK:         %[[W:.+]] = torch.aten.view %arg1
// CHECK:         %[[A:.+]] = torch.aten.mul.Tensor %[[R]], %[[W]]
// CHECK:         %[[B:.+]] = torch.aten.view %arg2
// CHECK:         %[[RM:.+]] = torch.aten.view %arg3
// CHECK:         %[[C:.+]] = torch.aten.addcmul %[[B]], %[[RM]], %[[A]], %int-1
// CHECK:         %[[Y:.+]] = torch.aten.addcmul %[[C]], %arg0, %[[A]], %{{.+}} -> !torch.vtensor<[2,4,3,3],f32>
// CHECK:         return %[[Y]]
// PIPE-LABEL: func.func @decompose_batch_norm_inference
// PIPE-NEXT:     "fusion.launch"
// PIPE-NEXT:     return

func.func @decompose_batch_norm_inference(%x: !torch.vtensor<[2,4,3,3],f32>, %w: !torch.vtensor<[4],f32>, %b: !torch.vtensor<[4],f32>, %rm: !torch.vtensor<[4],f32>, %rv: !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,3,3],f32> {
  %float1.000000e-01 = torch.constant.float 1.000000e-01
  %float1.000000e-05 = torch.constant.float 1.000000e-05
  %0:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%x, %w, %b, %rm, %rv, %float1.000000e-01, %float1.000000e-05) : (!torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.float, !torch.float) -> (!torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>)
  return %0#0 : !torch.vtensor<[2,4,3,3],f32>
}

// -----

// f16: the per-channel a and c and the fma in f32 (eager's opmath), c as a
// product then a difference (ATen's f16 kernel does not fuse it), one
// rounding to f16 at the end.

// CHECK-LABEL: func.func @decompose_batch_norm_inference_f16
// CHECK:         %[[RV:.+]] = torch.aten.view %arg4
// CHECK:         %[[RV32:.+]] = torch.prims.convert_element_type %[[RV]], %{{.+}} -> !torch.vtensor<[4,1,1],f32>
// CHECK:         %[[R:.+]] = torch.aten.rsqrt
// CHECK:         %[[A:.+]] = torch.aten.mul.Tensor %[[R]], %{{.+}} -> !torch.vtensor<[4,1,1],f32>
// CHECK:         %[[MA:.+]] = torch.aten.mul.Tensor %{{.+}}, %[[A]]
// CHECK:         %[[C:.+]] = torch.aten.sub.Tensor %{{.+}}, %[[MA]]
// CHECK:         %[[X:.+]] = torch.prims.convert_element_type %arg0, %{{.+}} -> !torch.vtensor<[2,4,3,3],f32>
// CHECK:         %[[Y:.+]] = torch.aten.addcmul %[[C]], %[[X]], %[[A]]
// CHECK:         %[[OUT:.+]] = torch.prims.convert_element_type %[[Y]], %{{.+}} -> !torch.vtensor<[2,4,3,3],f16>
// CHECK:         return %[[OUT]]
// PIPE-LABEL: func.func @decompose_batch_norm_inference_f16
// PIPE-NEXT:     "fusion.launch"
// PIPE-NEXT:     return

func.func @decompose_batch_norm_inference_f16(%x: !torch.vtensor<[2,4,3,3],f16>, %w: !torch.vtensor<[4],f16>, %b: !torch.vtensor<[4],f16>, %rm: !torch.vtensor<[4],f16>, %rv: !torch.vtensor<[4],f16>) -> !torch.vtensor<[2,4,3,3],f16> {
  %float1.000000e-01 = torch.constant.float 1.000000e-01
  %float1.000000e-05 = torch.constant.float 1.000000e-05
  %0:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%x, %w, %b, %rm, %rv, %float1.000000e-01, %float1.000000e-05) : (!torch.vtensor<[2,4,3,3],f16>, !torch.vtensor<[4],f16>, !torch.vtensor<[4],f16>, !torch.vtensor<[4],f16>, !torch.vtensor<[4],f16>, !torch.float, !torch.float) -> (!torch.vtensor<[2,4,3,3],f16>, !torch.vtensor<[0],f16>, !torch.vtensor<[0],f16>)
  return %0#0 : !torch.vtensor<[2,4,3,3],f16>
}

// -----

// group_norm: layer norm of the [N, G, C/G, H*W] view over its last two
// dims, affine viewed as [1, G, C/G, 1], reshaped back at the end.

// CHECK-LABEL: func.func @decompose_group_norm
// CHECK:         %[[X:.+]] = torch.aten.view %arg0, %{{.+}} -> !torch.vtensor<[2,2,2,9],f32>
// CHECK:         %[[M:.+]] = torch.aten.mean.dim %[[X]], %{{.+}} -> !torch.vtensor<[2,2,1,1],f32>
// CHECK:         %[[C:.+]] = torch.aten.sub.Tensor %[[X]], %[[M]]
// CHECK:         %[[SQ:.+]] = torch.aten.mul.Tensor %[[C]], %[[C]]
// CHECK:         %[[V:.+]] = torch.aten.mean.dim %[[SQ]]
// CHECK:         torch.aten.rsqrt
// CHECK:         torch.aten.view %arg1, %{{.+}} -> !torch.vtensor<[1,2,2,1],f32>
// CHECK:         torch.aten.view %arg2, %{{.+}} -> !torch.vtensor<[1,2,2,1],f32>
// CHECK:         %[[OUT:.+]] = torch.aten.view %{{.+}} -> !torch.vtensor<[2,4,3,3],f32>
// CHECK:         return %[[OUT]]
// PIPE-LABEL: func.func @decompose_group_norm
// PIPE-NEXT:     "fusion.launch"
// PIPE-NEXT:     return

func.func @decompose_group_norm(%x: !torch.vtensor<[2,4,3,3],f32>, %w: !torch.vtensor<[4],f32>, %b: !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,3,3],f32> {
  %int2 = torch.constant.int 2
  %float1.000000e-05 = torch.constant.float 1.000000e-05
  %false = torch.constant.bool false
  %0 = torch.aten.group_norm %x, %int2, %w, %b, %float1.000000e-05, %false : !torch.vtensor<[2,4,3,3],f32>, !torch.int, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.float, !torch.bool -> !torch.vtensor<[2,4,3,3],f32>
  return %0 : !torch.vtensor<[2,4,3,3],f32>
}

// -----

// The saved statistics are read: leave the op whole.

// CHECK-LABEL: func.func @no_decompose_batch_norm_stats_used
// CHECK:         torch.operator "torch.aten._native_batch_norm_legit_no_training"

func.func @no_decompose_batch_norm_stats_used(%x: !torch.vtensor<[2,4,3,3],f32>, %w: !torch.vtensor<[4],f32>, %b: !torch.vtensor<[4],f32>, %rm: !torch.vtensor<[4],f32>, %rv: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[0],f32>) {
  %float1.000000e-01 = torch.constant.float 1.000000e-01
  %float1.000000e-05 = torch.constant.float 1.000000e-05
  %0:3 = torch.operator "torch.aten._native_batch_norm_legit_no_training"(%x, %w, %b, %rm, %rv, %float1.000000e-01, %float1.000000e-05) : (!torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.float, !torch.float) -> (!torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[0],f32>, !torch.vtensor<[0],f32>)
  return %0#0, %0#1 : !torch.vtensor<[2,4,3,3],f32>, !torch.vtensor<[0],f32>
}

// -----

// max.dim is amax and argmax over one dim (keepdim, then views): both
// reductions share one kernel.

// CHECK-LABEL: func.func @decompose_max_dim
// CHECK:         %[[V:.+]] = torch.aten.amax %arg0, %{{.+}} -> !torch.vtensor<[8,1],f32>
// CHECK:         %[[I:.+]] = torch.aten.argmax %arg0, %{{.+}}, %{{.+}} -> !torch.vtensor<[8,1],si64>
// CHECK:         %[[VV:.+]] = torch.aten.view %[[V]], %{{.+}} -> !torch.vtensor<[8],f32>
// CHECK:         %[[IV:.+]] = torch.aten.view %[[I]], %{{.+}} -> !torch.vtensor<[8],si64>
// CHECK:         return %[[VV]], %[[IV]]
// PIPE-LABEL: func.func @decompose_max_dim
// PIPE-NEXT:     %[[G:.+]]:2 = "fusion.launch"
// PIPE-NEXT:     return %[[G]]#1, %[[G]]#0
func.func @decompose_max_dim(%arg0: !torch.vtensor<[8,100],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],si64>) {
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %values, %indices = torch.aten.max.dim %arg0, %int1, %false : !torch.vtensor<[8,100],f32>, !torch.int, !torch.bool -> !torch.vtensor<[8],f32>, !torch.vtensor<[8],si64>
  return %values, %indices : !torch.vtensor<[8],f32>, !torch.vtensor<[8],si64>
}

// -----

// rms_norm without eps on f16 adds f32's epsilon, as eager does (it computes
// f16/bf16 in f32 and takes that dtype's epsilon), not f16's (issue 9).
// CHECK-LABEL: func.func @decompose_rms_norm_default_eps_f16
// CHECK:         %[[EPS:.+]] = torch.constant.float 1.1920928955078125E-7
// CHECK:         torch.aten.add.Scalar %{{.+}}, %[[EPS]]
func.func @decompose_rms_norm_default_eps_f16(%arg0: !torch.vtensor<[4,8],f16>) -> !torch.vtensor<[4,8],f16> {
  %int8 = torch.constant.int 8
  %0 = torch.prim.ListConstruct %int8 : (!torch.int) -> !torch.list<int>
  %none = torch.constant.none
  %1 = torch.aten.rms_norm %arg0, %0, %none, %none : !torch.vtensor<[4,8],f16>, !torch.list<int>, !torch.none, !torch.none -> !torch.vtensor<[4,8],f16>
  return %1 : !torch.vtensor<[4,8],f16>
}

// -----

// take_along_dim (a torch.operator) is a gather of the indices wrapped into
// range, as eager wraps them (-1 the last, size + 1 the second).
// CHECK-LABEL: func.func @decompose_take_along_dim
// CHECK:         %[[R:.+]] = torch.aten.remainder.Scalar %arg1, %{{.+}} : !torch.vtensor<[2,2],si64>, !torch.int -> !torch.vtensor<[2,2],si64>
// CHECK:         %[[G:.+]] = torch.aten.gather %arg0, %{{.+}}, %[[R]], %{{.+}} : !torch.vtensor<[2,3],f32>, !torch.int, !torch.vtensor<[2,2],si64>, !torch.bool -> !torch.vtensor<[2,2],f32>
// CHECK-NOT:     torch.operator
// CHECK:         return %[[G]]
// PIPE-LABEL: func.func @decompose_take_along_dim
// PIPE-NEXT:     "fusion.launch"
// PIPE-NEXT:     return
func.func @decompose_take_along_dim(%arg0: !torch.vtensor<[2,3],f32>, %arg1: !torch.vtensor<[2,2],si64>) -> !torch.vtensor<[2,2],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.operator "torch.aten.take_along_dim"(%arg0, %arg1, %int1) : (!torch.vtensor<[2,3],f32>, !torch.vtensor<[2,2],si64>, !torch.int) -> !torch.vtensor<[2,2],f32>
  return %0 : !torch.vtensor<[2,2],f32>
}

// -----

// An index that broadcasts against the input is expanded (a view) first.
// CHECK-LABEL: func.func @decompose_take_along_dim_broadcast
// CHECK:         %[[E:.+]] = torch.aten.expand %arg1, %{{.+}}, %{{.+}} : !torch.vtensor<[1,2],si64>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,2],si64>
// CHECK:         %[[R:.+]] = torch.aten.remainder.Scalar %[[E]]
// CHECK:         torch.aten.gather %arg0, %{{.+}}, %[[R]]
func.func @decompose_take_along_dim_broadcast(%arg0: !torch.vtensor<[2,3],f32>, %arg1: !torch.vtensor<[1,2],si64>) -> !torch.vtensor<[2,2],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.operator "torch.aten.take_along_dim"(%arg0, %arg1, %int1) : (!torch.vtensor<[2,3],f32>, !torch.vtensor<[1,2],si64>, !torch.int) -> !torch.vtensor<[2,2],f32>
  return %0 : !torch.vtensor<[2,2],f32>
}

// -----

// Dynamic shapes stay whole (the op runs through ATen).
// CHECK-LABEL: func.func @no_decompose_take_along_dim_dynamic
// CHECK:         torch.operator "torch.aten.take_along_dim"
func.func @no_decompose_take_along_dim_dynamic(%arg0: !torch.vtensor<[?,3],f32>, %arg1: !torch.vtensor<[?,2],si64>) -> !torch.vtensor<[?,2],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.operator "torch.aten.take_along_dim"(%arg0, %arg1, %int1) : (!torch.vtensor<[?,3],f32>, !torch.vtensor<[?,2],si64>, !torch.int) -> !torch.vtensor<[?,2],f32>
  return %0 : !torch.vtensor<[?,2],f32>
}

// -----

// scatter_reduce "sum" is scatter_add; without include_self the scattered-to
// places are zeroed first (a scatter of 0), as eager starts them from 0.
// CHECK-LABEL: func.func @decompose_scatter_reduce_sum
// CHECK:         %[[Z:.+]] = torch.aten.scatter.value %arg0, %{{.+}}, %arg1, %{{.+}} : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[3,2],si64>, !torch.float -> !torch.vtensor<[3,4],f32>
// CHECK:         %[[A:.+]] = torch.aten.scatter_add %[[Z]], %{{.+}}, %arg1, %arg2
// CHECK:         %[[B:.+]] = torch.aten.scatter_add %arg0, %{{.+}}, %arg1, %arg2
// CHECK-NOT:     scatter_reduce
// CHECK:         return %[[A]], %[[B]]
func.func @decompose_scatter_reduce_sum(%arg0: !torch.vtensor<[3,4],f32>, %arg1: !torch.vtensor<[3,2],si64>, %arg2: !torch.vtensor<[3,2],f32>) -> (!torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>) {
  %int1 = torch.constant.int 1
  %str = torch.constant.str "sum"
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %0 = torch.aten.scatter_reduce.two %arg0, %int1, %arg1, %arg2, %str, %false : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[3,2],si64>, !torch.vtensor<[3,2],f32>, !torch.str, !torch.bool -> !torch.vtensor<[3,4],f32>
  %1 = torch.aten.scatter_reduce.two %arg0, %int1, %arg1, %arg2, %str, %true : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[3,2],si64>, !torch.vtensor<[3,2],f32>, !torch.str, !torch.bool -> !torch.vtensor<[3,4],f32>
  return %0, %1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>
}

// -----

// Other reductions (prod, mean, amax, amin) stay whole: they run through ATen.
// CHECK-LABEL: func.func @no_decompose_scatter_reduce_amax
// CHECK:         torch.aten.scatter_reduce.two
func.func @no_decompose_scatter_reduce_amax(%arg0: !torch.vtensor<[3,4],f32>, %arg1: !torch.vtensor<[3,2],si64>, %arg2: !torch.vtensor<[3,2],f32>) -> !torch.vtensor<[3,4],f32> {
  %int1 = torch.constant.int 1
  %str = torch.constant.str "amax"
  %true = torch.constant.bool true
  %0 = torch.aten.scatter_reduce.two %arg0, %int1, %arg1, %arg2, %str, %true : !torch.vtensor<[3,4],f32>, !torch.int, !torch.vtensor<[3,2],si64>, !torch.vtensor<[3,2],f32>, !torch.str, !torch.bool -> !torch.vtensor<[3,4],f32>
  return %0 : !torch.vtensor<[3,4],f32>
}

// -----

// An MoE's expert offsets: cumsum(histc(ids.float())) is one sum over
// [N, bins] of (bin(x) <= b) in range, the cast viewed as a column first (a
// reduction kernel reads views of its inputs); one kernel in the pipeline.
// CHECK-LABEL: func.func @decompose_histc_cumsum
// CHECK:         %[[COL:.+]] = torch.aten.view %arg0, %{{.+}} : !torch.vtensor<[8],si64>, !torch.list<int> -> !torch.vtensor<[8,1],si64>
// CHECK:         %[[X:.+]] = torch.aten._to_copy %[[COL]], {{.+}} -> !torch.vtensor<[8,1],f32>
// CHECK:         %[[POS:.+]] = torch.aten.clamp_max %{{.+}}, %{{.+}} : !torch.vtensor<[8,1],si64>, !torch.int -> !torch.vtensor<[8,1],si64>
// CHECK:         %[[IOTA:.+]] = torch.aten.arange %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : {{.+}} -> !torch.vtensor<[4],si64>
// CHECK:         torch.aten.le.Tensor %[[POS]], %[[IOTA]] : !torch.vtensor<[8,1],si64>, !torch.vtensor<[4],si64> -> !torch.vtensor<[8,4],i1>
// CHECK:         torch.aten.sum.dim_IntList {{.+}} -> !torch.vtensor<[1,4],si64>
// CHECK-NOT:     torch.operator
// CHECK-NOT:     torch.aten.cumsum
// CHECK:         return %{{.+}} : !torch.vtensor<[4],si32>
// PIPE-LABEL: func.func @decompose_histc_cumsum
// PIPE-NEXT:     "fusion.launch"
// PIPE-NEXT:     return
func.func @decompose_histc_cumsum(%arg0: !torch.vtensor<[8],si64>) -> !torch.vtensor<[4],si32> {
  %int6 = torch.constant.int 6
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten._to_copy %arg0, %int6, %none, %none, %none, %false, %none : !torch.vtensor<[8],si64>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[8],f32>
  %int4 = torch.constant.int 4
  %int0 = torch.constant.int 0
  %int3 = torch.constant.int 3
  %1 = torch.operator "torch.aten.histc"(%0, %int4, %int0, %int3) : (!torch.vtensor<[8],f32>, !torch.int, !torch.int, !torch.int) -> !torch.vtensor<[4],f32>
  %2 = torch.aten.cumsum %1, %int0, %int3 : !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],si32>
  return %2 : !torch.vtensor<[4],si32>
}

// -----

// histc alone is a one-hot sum (eq) of an input read as a column.
// CHECK-LABEL: func.func @decompose_histc
// CHECK:         torch.aten.eq.Tensor %{{.+}}, %{{.+}} : !torch.vtensor<[6,1],si64>, !torch.vtensor<[3],si64> -> !torch.vtensor<[6,3],i1>
// CHECK-NOT:     torch.operator
// CHECK:         return %{{.+}} : !torch.vtensor<[3],f32>
// PIPE-LABEL: func.func @decompose_histc
// PIPE-NEXT:     "fusion.launch"
// PIPE-NEXT:     return
func.func @decompose_histc(%arg0: !torch.vtensor<[6],f32>) -> !torch.vtensor<[3],f32> {
  %int3 = torch.constant.int 3
  %float-1 = torch.constant.float -1.000000e+00
  %float2 = torch.constant.float 2.500000e+00
  %0 = torch.operator "torch.aten.histc"(%arg0, %int3, %float-1, %float2) : (!torch.vtensor<[6],f32>, !torch.int, !torch.float, !torch.float) -> !torch.vtensor<[3],f32>
  return %0 : !torch.vtensor<[3],f32>
}

// -----

// Past 64 bins (the input re-read per bin), in f16 (ATen bins in the input's
// dtype), or over the input's own range (min == max), histc stays ATen.
// CHECK-LABEL: func.func @no_decompose_histc
// CHECK-COUNT-3: torch.operator "torch.aten.histc"
func.func @no_decompose_histc(%arg0: !torch.vtensor<[6],f32>, %arg1: !torch.vtensor<[6],f16>) -> (!torch.vtensor<[100],f32>, !torch.vtensor<[4],f16>, !torch.vtensor<[4],f32>) {
  %int100 = torch.constant.int 100
  %int4 = torch.constant.int 4
  %int0 = torch.constant.int 0
  %int3 = torch.constant.int 3
  %0 = torch.operator "torch.aten.histc"(%arg0, %int100, %int0, %int3) : (!torch.vtensor<[6],f32>, !torch.int, !torch.int, !torch.int) -> !torch.vtensor<[100],f32>
  %1 = torch.operator "torch.aten.histc"(%arg1, %int4, %int0, %int3) : (!torch.vtensor<[6],f16>, !torch.int, !torch.int, !torch.int) -> !torch.vtensor<[4],f16>
  %2 = torch.operator "torch.aten.histc"(%arg0, %int4, %int0, %int0) : (!torch.vtensor<[6],f32>, !torch.int, !torch.int, !torch.int) -> !torch.vtensor<[4],f32>
  return %0, %1, %2 : !torch.vtensor<[100],f32>, !torch.vtensor<[4],f16>, !torch.vtensor<[4],f32>
}

// -----

// An MoE's combine: (y * w[:, None])[inv].view(4, 2, 4) summed over the k
// experts. The view splitting the gathered dim is a gather by the viewed
// index, and the gather of the product a product of gathers of the inputs:
// one reduction kernel in the pipeline.
// CHECK-LABEL: func.func @decompose_gather_of_scaled_rows
// CHECK:         %[[I:.+]] = torch.aten.view %arg2, %{{.+}} : !torch.vtensor<[8],si64>, !torch.list<int> -> !torch.vtensor<[4,2],si64>
// CHECK:         %[[Y:.+]] = torch.aten.index.Tensor %arg0, %{{.+}} : !torch.vtensor<[8,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[4,2,4],f32>
// CHECK:         %[[W:.+]] = torch.aten.index.Tensor %{{.+}}, %{{.+}} : !torch.vtensor<[8,1],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[4,2,1],f32>
// CHECK:         torch.aten.mul.Tensor %[[Y]], %[[W]] : !torch.vtensor<[4,2,4],f32>, !torch.vtensor<[4,2,1],f32> -> !torch.vtensor<[4,2,4],f32>
// CHECK-NOT:     -> !torch.vtensor<[8,4],f32>
// PIPE-LABEL: func.func @decompose_gather_of_scaled_rows
// PIPE-NEXT:     "fusion.launch"
// PIPE-NEXT:     return
func.func @decompose_gather_of_scaled_rows(%y: !torch.vtensor<[8,4],f32>, %w: !torch.vtensor<[8],f32>, %inv: !torch.vtensor<[8],si64>) -> !torch.vtensor<[4,4],f32> {
  %int-1 = torch.constant.int -1
  %0 = torch.aten.unsqueeze %w, %int-1 : !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[8,1],f32>
  %1 = torch.aten.mul.Tensor %y, %0 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[8,1],f32> -> !torch.vtensor<[8,4],f32>
  %2 = torch.prim.ListConstruct %inv : (!torch.vtensor<[8],si64>) -> !torch.list<optional<vtensor>>
  %3 = torch.aten.index.Tensor %1, %2 : !torch.vtensor<[8,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[8,4],f32>
  %int4 = torch.constant.int 4
  %int2 = torch.constant.int 2
  %4 = torch.prim.ListConstruct %int4, %int2, %int4 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %5 = torch.aten.view %3, %4 : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[4,2,4],f32>
  %int1 = torch.constant.int 1
  %6 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %7 = torch.aten.sum.dim_IntList %5, %6, %false, %none : !torch.vtensor<[4,2,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,4],f32>
  return %7 : !torch.vtensor<[4,4],f32>
}

// -----

// A view regrouping the gathered rows' elements stays on the gather's
// result; a product whose operand broadcasts along the gathered dim is not
// split into gathers (a [1, 4] operand has no rows to gather).
// CHECK-LABEL: func.func @no_decompose_gather_viewed_across_rows
// CHECK:         %[[M:.+]] = torch.aten.mul.Tensor %arg0, %arg2
// CHECK:         %[[G:.+]] = torch.aten.index.Tensor %[[M]], %{{.+}} : !torch.vtensor<[8,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[8,4],f32>
// CHECK:         torch.aten.view %[[G]], %{{.+}} : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[4,8],f32>
func.func @no_decompose_gather_viewed_across_rows(%y: !torch.vtensor<[8,4],f32>, %inv: !torch.vtensor<[8],si64>, %b: !torch.vtensor<[1,4],f32>) -> !torch.vtensor<[4,8],f32> {
  %1 = torch.aten.mul.Tensor %y, %b : !torch.vtensor<[8,4],f32>, !torch.vtensor<[1,4],f32> -> !torch.vtensor<[8,4],f32>
  %2 = torch.prim.ListConstruct %inv : (!torch.vtensor<[8],si64>) -> !torch.list<optional<vtensor>>
  %3 = torch.aten.index.Tensor %1, %2 : !torch.vtensor<[8,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[8,4],f32>
  %int4 = torch.constant.int 4
  %int8 = torch.constant.int 8
  %4 = torch.prim.ListConstruct %int4, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %5 = torch.aten.view %3, %4 : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[4,8],f32>
  return %5 : !torch.vtensor<[4,8],f32>
}
