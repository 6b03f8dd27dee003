// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-vertical)' | filecheck %s

// A chain of elementwise ops becomes one group; the scalar constants it reads
// are cloned into the body and the chain leaves nothing behind outside.

// CHECK-LABEL: func.func @fuse_chain
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,16],f32>, %[[B:.+]]: !torch.vtensor<[4,16],f32>)
// CHECK-NOT:     torch.aten
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]], %[[B]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>, %[[Y:.+]]: !torch.vtensor<[4,16],f32>):
// CHECK-DAG:       %[[MUL:.+]] = torch.aten.mul.Tensor %[[X]], %[[Y]]
// CHECK-DAG:       %[[ONE:.+]] = torch.constant.float 1.000000e+00
// CHECK-DAG:       %[[ALPHA:.+]] = torch.constant.int 1
// CHECK:           %[[ADD:.+]] = torch.aten.add.Scalar %[[MUL]], %[[ONE]], %[[ALPHA]]
// CHECK-NEXT:      %[[RELU:.+]] = torch.aten.relu %[[ADD]]
// CHECK-NEXT:      %[[TANH:.+]] = torch.aten.tanh %[[RELU]]
// CHECK-NEXT:      %[[SIG:.+]] = torch.aten.sigmoid %[[TANH]]
// CHECK-NEXT:      "fusion.yield"(%[[SIG]]) : (!torch.vtensor<[4,16],f32>) -> ()
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    return %[[G]] : !torch.vtensor<[4,16],f32>
func.func @fuse_chain(%arg0: !torch.vtensor<[4,16],f32>, %arg1: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.mul.Tensor %arg0, %arg1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  %float1 = torch.constant.float 1.000000e+00
  %1 = torch.aten.add.Scalar %0, %float1, %int1 : !torch.vtensor<[4,16],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,16],f32>
  %2 = torch.aten.relu %1 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  %3 = torch.aten.tanh %2 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  %4 = torch.aten.sigmoid %3 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  return %4 : !torch.vtensor<[4,16],f32>
}

// -----

// A [16] operand broadcast against [4,16] joins the group with its own type.

// CHECK-LABEL: func.func @fuse_broadcast
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,16],f32>, %[[BIAS:.+]]: !torch.vtensor<[16],f32>)
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]], %[[BIAS]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>, %[[Y:.+]]: !torch.vtensor<[16],f32>):
// CHECK:           %[[ADD:.+]] = torch.aten.add.Tensor %[[X]], %[[Y]], %{{.+}} : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:      %[[APPROX:.+]] = torch.constant.str "none"
// CHECK-NEXT:      %[[GELU:.+]] = torch.aten.gelu %[[ADD]], %[[APPROX]]
// CHECK-NEXT:      "fusion.yield"(%[[GELU]])
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>) -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_broadcast(%arg0: !torch.vtensor<[4,16],f32>, %arg1: !torch.vtensor<[16],f32>) -> !torch.vtensor<[4,16],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %arg0, %arg1, %int1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
  %str = torch.constant.str "none"
  %1 = torch.aten.gelu %0, %str : !torch.vtensor<[4,16],f32>, !torch.str -> !torch.vtensor<[4,16],f32>
  return %1 : !torch.vtensor<[4,16],f32>
}

// -----

// Scalar operands are constants cloned into the body, never group operands.

// CHECK-LABEL: func.func @fuse_scalar_operands
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>)
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-DAG:       %[[TWO:.+]] = torch.constant.float 2.000000e+00
// CHECK-DAG:       %[[HALF:.+]] = torch.constant.float 5.000000e-01
// CHECK-DAG:       %[[ALPHA:.+]] = torch.constant.int 1
// CHECK-DAG:       %[[EXP:.+]] = torch.constant.int 2
// CHECK-DAG:       %[[MUL:.+]] = torch.aten.mul.Scalar %[[X]], %[[TWO]]
// CHECK-DAG:       %[[SUB:.+]] = torch.aten.sub.Scalar %[[MUL]], %[[HALF]], %[[ALPHA]]
// CHECK:           %[[POW:.+]] = torch.aten.pow.Tensor_Scalar %[[SUB]], %[[EXP]]
// CHECK-NEXT:      "fusion.yield"(%[[POW]])
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_scalar_operands(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %float2 = torch.constant.float 2.000000e+00
  %0 = torch.aten.mul.Scalar %arg0, %float2 : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
  %float5 = torch.constant.float 5.000000e-01
  %int1 = torch.constant.int 1
  %1 = torch.aten.sub.Scalar %0, %float5, %int1 : !torch.vtensor<[8],f32>, !torch.float, !torch.int -> !torch.vtensor<[8],f32>
  %int2 = torch.constant.int 2
  %2 = torch.aten.pow.Tensor_Scalar %1, %int2 : !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[8],f32>
  return %2 : !torch.vtensor<[8],f32>
}

// -----

// dtype conversions are elementwise: f16 -> f32 -> exp -> f16 is one group.

// CHECK-LABEL: func.func @fuse_casts
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f16>)
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f16>):
// CHECK-DAG:       %[[F32:.+]] = torch.constant.int 6
// CHECK-DAG:       %[[F16:.+]] = torch.constant.int 5
// CHECK-DAG:       %[[UP:.+]] = torch.prims.convert_element_type %[[X]], %[[F32]] : !torch.vtensor<[8],f16>, !torch.int -> !torch.vtensor<[8],f32>
// CHECK-DAG:       %[[EXP:.+]] = torch.aten.exp %[[UP]]
// CHECK:           %[[DOWN:.+]] = torch.aten._to_copy %[[EXP]], %[[F16]], {{.+}} -> !torch.vtensor<[8],f16>
// CHECK-NEXT:      "fusion.yield"(%[[DOWN]]) : (!torch.vtensor<[8],f16>) -> ()
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[8],f16>) -> !torch.vtensor<[8],f16>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_casts(%arg0: !torch.vtensor<[8],f16>) -> !torch.vtensor<[8],f16> {
  %int6 = torch.constant.int 6
  %0 = torch.prims.convert_element_type %arg0, %int6 : !torch.vtensor<[8],f16>, !torch.int -> !torch.vtensor<[8],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %int5 = torch.constant.int 5
  %none = torch.constant.none
  %false = torch.constant.bool false
  %2 = torch.aten._to_copy %1, %int5, %none, %none, %none, %false, %none : !torch.vtensor<[8],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[8],f16>
  return %2 : !torch.vtensor<[8],f16>
}

// -----

// A bool mask computed in the group feeds a where in the same group.

// CHECK-LABEL: func.func @fuse_where_compare
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>, %[[B:.+]]: !torch.vtensor<[8],f32>)
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]], %[[B]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>, %[[Y:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[GT:.+]] = torch.aten.gt.Tensor %[[X]], %[[Y]] : {{.+}} -> !torch.vtensor<[8],i1>
// CHECK-NEXT:      %[[SEL:.+]] = torch.aten.where.self %[[GT]], %[[X]], %[[Y]]
// CHECK-NEXT:      %[[NEG:.+]] = torch.aten.neg %[[SEL]]
// CHECK-NEXT:      "fusion.yield"(%[[NEG]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_where_compare(%arg0: !torch.vtensor<[8],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.gt.Tensor %arg0, %arg1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],i1>
  %1 = torch.aten.where.self %0, %arg0, %arg1 : !torch.vtensor<[8],i1>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %2 = torch.aten.neg %1 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %2 : !torch.vtensor<[8],f32>
}

// -----

// A residual add reads a function argument next to the fused producer.

// CHECK-LABEL: func.func @fuse_residual
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>, %[[B:.+]]: !torch.vtensor<[8],f32>)
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]], %[[B]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>, %[[Y:.+]]: !torch.vtensor<[8],f32>):
// CHECK-DAG:       %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-DAG:       %[[ALPHA:.+]] = torch.constant.int 1
// CHECK:           %[[ADD:.+]] = torch.aten.add.Tensor %[[EXP]], %[[Y]], %[[ALPHA]]
// CHECK-NEXT:      "fusion.yield"(%[[ADD]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_residual(%arg0: !torch.vtensor<[8],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.add.Tensor %0, %arg1, %int1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[8],f32>
  return %1 : !torch.vtensor<[8],f32>
}

// -----

// linear is not elementwise: it stays outside, splitting the pointwise ops
// before and after it into two groups.

// CHECK-LABEL: func.func @fuse_around_matmul
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,8],f32>, %[[W:.+]]: !torch.vtensor<[16,8],f32>, %[[BIAS:.+]]: !torch.vtensor<[16],f32>)
// CHECK:         %[[PRO:.+]] = "fusion.group"(%[[A]]) ({
// CHECK:           torch.aten.relu
// CHECK-NEXT:      torch.aten.neg
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT:    %[[MM:.+]] = torch.aten.linear %[[PRO]], %[[W]], %[[BIAS]]
// CHECK-NEXT:    %[[EPI:.+]] = "fusion.group"(%[[MM]]) ({
// CHECK:           torch.aten.sigmoid
// CHECK-NEXT:      torch.aten.exp
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    return %[[EPI]]
func.func @fuse_around_matmul(%arg0: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[16,8],f32>, %b: !torch.vtensor<[16],f32>) -> !torch.vtensor<[4,16],f32> {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.linear %1, %w, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[16,8],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[4,16],f32>
  %3 = torch.aten.sigmoid %2 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  %4 = torch.aten.exp %3 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  return %4 : !torch.vtensor<[4,16],f32>
}

// -----

// exp is also read by mv outside the chain: it is fused and exported as a
// second group result, which mv then reads.

// CHECK-LABEL: func.func @fuse_multi_use_producer
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>, %[[W:.+]]: !torch.vtensor<[8,8],f32>)
// CHECK:         %[[G:.+]]:2 = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-NEXT:      %[[NEG:.+]] = torch.aten.neg %[[EXP]]
// CHECK-NEXT:      "fusion.yield"(%[[NEG]], %[[EXP]]) : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> ()
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>)
// CHECK-NEXT:    %[[MV:.+]] = torch.aten.mv %[[W]], %[[G]]#1
// CHECK-NEXT:    return %[[G]]#0, %[[MV]]
func.func @fuse_multi_use_producer(%arg0: !torch.vtensor<[8],f32>, %w: !torch.vtensor<[8,8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %2 = torch.aten.mv %w, %0 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %1, %2 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// mv reads exp and sits between exp and its fused consumer: the merged group
// takes neg's place, so mv (and softmax, which reads mv) move after it.

// CHECK-LABEL: func.func @fuse_producer_used_in_between
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>, %[[W:.+]]: !torch.vtensor<[8,8],f32>)
// CHECK-NOT:     torch.aten.mv
// CHECK:         %[[G:.+]]:2 = "fusion.group"(%[[A]]) ({
// CHECK:           %[[EXP:.+]] = torch.aten.exp
// CHECK-NEXT:      %[[NEG:.+]] = torch.aten.neg %[[EXP]]
// CHECK-NEXT:      "fusion.yield"(%[[NEG]], %[[EXP]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    %[[MV:.+]] = torch.aten.mv %[[W]], %[[G]]#1
// CHECK-NEXT:    %[[SM:.+]] = torch.aten.softmax.int %[[MV]]
// CHECK-NEXT:    return %[[G]]#0, %[[SM]]
func.func @fuse_producer_used_in_between(%arg0: !torch.vtensor<[8],f32>, %w: !torch.vtensor<[8,8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %int0 = torch.constant.int 0
  %none = torch.constant.none
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.mv %w, %0 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %2 = torch.aten.softmax.int %1, %int0, %none : !torch.vtensor<[8],f32>, !torch.int, !torch.none -> !torch.vtensor<[8],f32>
  %3 = torch.aten.neg %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %3, %2 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// Two elementwise consumers of one producer end up in one group; exp is not
// exported because all its users are inside.

// CHECK-LABEL: func.func @fuse_two_consumers
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>)
// CHECK-NEXT:    %[[G:.+]]:2 = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-DAG:       %[[SIN:.+]] = torch.aten.sin %[[EXP]]
// CHECK-DAG:       %[[NEG:.+]] = torch.aten.neg %[[EXP]]
// CHECK:           "fusion.yield"(%[[SIN]], %[[NEG]]) : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> ()
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NOT:     "fusion.group"
// CHECK-NEXT:    return %[[G]]#1, %[[G]]#0
func.func @fuse_two_consumers(%arg0: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %2 = torch.aten.sin %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %1, %2 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// exp reaches add both directly and through mm: one group holding exp and
// add would have to run both before and after mm.

// CHECK-LABEL: func.func @no_fuse_cycle
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8,8],f32>)
// CHECK:         %[[PRO:.+]] = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8,8],f32>):
// CHECK-NEXT:      %[[EXP:.+]] = torch.aten.exp %[[X]]
// CHECK-NEXT:      "fusion.yield"(%[[EXP]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    %[[MM:.+]] = torch.aten.mm %[[PRO]], %[[PRO]]
// CHECK-NEXT:    %[[CON:.+]] = "fusion.group"(%[[PRO]], %[[MM]]) ({
// CHECK-NOT:       torch.aten.exp
// CHECK:           torch.aten.add.Tensor
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[CON]]
func.func @no_fuse_cycle(%arg0: !torch.vtensor<[8,8],f32>) -> !torch.vtensor<[8,8],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8,8],f32> -> !torch.vtensor<[8,8],f32>
  %1 = torch.aten.mm %0, %0 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[8,8],f32>
  %2 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8,8],f32>, !torch.int -> !torch.vtensor<[8,8],f32>
  return %2 : !torch.vtensor<[8,8],f32>
}

// -----

// exp is [16] and also returned, so exporting it from a group iterating
// over [4,16] is refused: a kernel writes all results over one space.

// CHECK-LABEL: func.func @no_fuse_different_iteration_space
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,16],f32>, %[[B:.+]]: !torch.vtensor<[16],f32>)
// CHECK:         %[[PRO:.+]] = "fusion.group"(%[[B]]) ({
// CHECK:           torch.aten.exp
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[16],f32>) -> !torch.vtensor<[16],f32>
// CHECK-NEXT:    %[[CON:.+]] = "fusion.group"(%[[A]], %[[PRO]]) ({
// CHECK-NOT:       torch.aten.exp
// CHECK:           torch.aten.add.Tensor
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"} : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>) -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    return %[[CON]], %[[PRO]]
func.func @no_fuse_different_iteration_space(%arg0: !torch.vtensor<[4,16],f32>, %arg1: !torch.vtensor<[16],f32>) -> (!torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %arg1 : !torch.vtensor<[16],f32> -> !torch.vtensor<[16],f32>
  %1 = torch.aten.add.Tensor %arg0, %0, %int1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
  return %1, %0 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>
}

// -----

// softmax is a reduction, not an elementwise op: left exactly as it was.

// CHECK-LABEL: func.func @no_fuse_unsupported_op
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,16],f32>)
// CHECK-NOT:     fusion.group
// CHECK:         %[[DIM:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[NONE:.+]] = torch.constant.none
// CHECK-NEXT:    %[[SM:.+]] = torch.aten.softmax.int %[[A]], %[[DIM]], %[[NONE]]
// CHECK-NEXT:    return %[[SM]]
func.func @no_fuse_unsupported_op(%arg0: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.softmax.int %arg0, %int1, %none : !torch.vtensor<[4,16],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,16],f32>
  return %0 : !torch.vtensor<[4,16],f32>
}

// -----

// A `?` size fuses like any other: the kernel takes its sizes as arguments.

// CHECK-LABEL: func.func @fuse_dynamic_shape
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[?,16],f32>, %[[B:.+]]: !torch.vtensor<[16],f32>)
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]], %[[B]])
// CHECK:           torch.aten.exp
// CHECK:           torch.aten.mul.Tensor
// CHECK:           torch.aten.sum.dim_IntList {{.*}} -> !torch.vtensor<[?,1],f32>
// CHECK:         }) {kind = "reduction"} : (!torch.vtensor<[?,16],f32>, !torch.vtensor<[16],f32>) -> !torch.vtensor<[?,1],f32>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_dynamic_shape(%arg0: !torch.vtensor<[?,16],f32>, %arg1: !torch.vtensor<[16],f32>) -> !torch.vtensor<[?,1],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[?,16],f32> -> !torch.vtensor<[?,16],f32>
  %1 = torch.aten.mul.Tensor %0, %arg1 : !torch.vtensor<[?,16],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[?,16],f32>
  %l = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %2 = torch.aten.sum.dim_IntList %1, %l, %true, %none : !torch.vtensor<[?,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,1],f32>
  return %2 : !torch.vtensor<[?,1],f32>
}

// -----

// A reduction over a `?` dim fuses too: its kernel loops over the row
// (fusion-mark-persistent leaves it a `reduction`).

// CHECK-LABEL: func.func @fuse_reduce_dynamic_dim
// CHECK:         %[[G:.+]] = "fusion.group"
// CHECK:           torch.aten.exp
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         }) {kind = "reduction"} : (!torch.vtensor<[16,?],f32>) -> !torch.vtensor<[16,1],f32>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_reduce_dynamic_dim(%arg0: !torch.vtensor<[16,?],f32>) -> !torch.vtensor<[16,1],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[16,?],f32> -> !torch.vtensor<[16,?],f32>
  %l = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.sum.dim_IntList %0, %l, %true, %none : !torch.vtensor<[16,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[16,1],f32>
  return %1 : !torch.vtensor<[16,1],f32>
}

// -----

// A scalar known only at run time cannot be baked into a kernel.

// CHECK-LABEL: func.func @no_fuse_nonconstant_scalar
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>, %[[S:.+]]: !torch.float)
// CHECK-NOT:     fusion.group
// CHECK:         %[[MUL:.+]] = torch.aten.mul.Scalar %[[A]], %[[S]]
// CHECK-NEXT:    return %[[MUL]]
func.func @no_fuse_nonconstant_scalar(%arg0: !torch.vtensor<[8],f32>, %arg1: !torch.float) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.mul.Scalar %arg0, %arg1 : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

// exp of an integer tensor is fused: its operand is converted to the float
// result first, as in eager.

// CHECK-LABEL: func.func @fuse_integer_operand_float_result
// CHECK:         "fusion.group"
// CHECK:           torch.aten.exp %{{.+}} : !torch.vtensor<[8],si64> -> !torch.vtensor<[8],f32>
// CHECK:         }) {kind = "pointwise"}
func.func @fuse_integer_operand_float_result(%arg0: !torch.vtensor<[8],si64>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],si64> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

// sign is fused for floating results only.

// CHECK-LABEL: func.func @no_fuse_integer_result
// CHECK-NOT:     fusion.group
// CHECK:         torch.aten.sign %{{.+}} : !torch.vtensor<[8],si64> -> !torch.vtensor<[8],si64>
func.func @no_fuse_integer_result(%arg0: !torch.vtensor<[8],si64>) -> !torch.vtensor<[8],si64> {
  %0 = torch.aten.sign %arg0 : !torch.vtensor<[8],si64> -> !torch.vtensor<[8],si64>
  return %0 : !torch.vtensor<[8],si64>
}

// -----

// A threshold backward's `0` (scalar_tensor), read by two reductions over
// different axes: a group reading no tensor is computed in each reader's
// kernel (a copy each) instead of stored by a kernel of its own.

// CHECK-LABEL: func.func @fuse_creation_copied_into_each_reader
// CHECK:         "fusion.group"(%arg0, %arg1) ({
// CHECK:           torch.aten.scalar_tensor
// CHECK:           torch.aten.where.self
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         }) {kind = "reduction"}
// CHECK-NEXT:    "fusion.group"(%arg0, %arg1) ({
// CHECK:           torch.aten.scalar_tensor
// CHECK:           torch.aten.where.self
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         }) {kind = "reduction"}
// CHECK-NOT:     "fusion.group"
func.func @fuse_creation_copied_into_each_reader(%mask: !torch.vtensor<[4,8],i1>, %g: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[8],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int6 = torch.constant.int 6
  %false = torch.constant.bool false
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %zero = torch.aten.scalar_tensor %int0, %int6, %int0, %cpu, %none : !torch.int, !torch.int, !torch.int, !torch.Device, !torch.none -> !torch.vtensor<[],f32>
  %a = torch.aten.where.self %mask, %zero, %g : !torch.vtensor<[4,8],i1>, !torch.vtensor<[],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %d1 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %rows = torch.aten.sum.dim_IntList %a, %d1, %false, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4],f32>
  %b = torch.aten.where.self %mask, %g, %zero : !torch.vtensor<[4,8],i1>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[4,8],f32>
  %d0 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %cols = torch.aten.sum.dim_IntList %b, %d0, %false, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8],f32>
  return %rows, %cols : !torch.vtensor<[4],f32>, !torch.vtensor<[8],f32>
}

// -----

// Limit: a 0-d value computed from a tensor (here exp of an argument) is
// not copied: only a group reading nothing is. It is stored once (by row 0
// of the first reduction's kernel, which computes it) and read by the second.

// CHECK-LABEL: func.func @no_fuse_copy_of_a_group_reading_a_tensor
// CHECK:         %[[R:.+]]:2 = "fusion.group"(%arg2, %arg0, %arg1) ({
// CHECK:           torch.aten.exp
// CHECK:         }) {kind = "reduction"}
// CHECK-NEXT:    "fusion.group"(%arg0, %arg1, %[[R]]#1) ({
// CHECK-NOT:       torch.aten.exp
// CHECK:         }) {kind = "reduction"}
func.func @no_fuse_copy_of_a_group_reading_a_tensor(%mask: !torch.vtensor<[4,8],i1>, %g: !torch.vtensor<[4,8],f32>, %t: !torch.vtensor<[],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[8],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %none = torch.constant.none
  %e = torch.aten.exp %t : !torch.vtensor<[],f32> -> !torch.vtensor<[],f32>
  %a = torch.aten.where.self %mask, %e, %g : !torch.vtensor<[4,8],i1>, !torch.vtensor<[],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %d1 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %rows = torch.aten.sum.dim_IntList %a, %d1, %false, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4],f32>
  %b = torch.aten.where.self %mask, %g, %e : !torch.vtensor<[4,8],i1>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[4,8],f32>
  %d0 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %cols = torch.aten.sum.dim_IntList %b, %d0, %false, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8],f32>
  return %rows, %cols : !torch.vtensor<[4],f32>, !torch.vtensor<[8],f32>
}

// -----

// torch-mlir imports a constant per use: the ops of one group read three
// `1`s, and the body holds the value once (as fusion-canonicalize's CSE would
// leave it), read by every op that read a copy.

// CHECK-LABEL: func.func @one_constant_per_value
// CHECK:         "fusion.group"
// CHECK:           %[[ONE:.+]] = torch.constant.int 1
// CHECK-NOT:       torch.constant.int 1
// CHECK:           torch.aten.add.Tensor %{{.+}}, %{{.+}}, %[[ONE]]
// CHECK-NOT:       torch.constant.int 1
// CHECK:           torch.aten.sub.Tensor %{{.+}}, %{{.+}}, %[[ONE]]
// CHECK-NOT:       torch.constant.int 1
// CHECK:           torch.aten.add.Tensor %{{.+}}, %{{.+}}, %[[ONE]]
// CHECK-NEXT:      "fusion.yield"
func.func @one_constant_per_value(%arg0: !torch.vtensor<[4,16],f32>, %arg1: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %arg0, %arg1, %int1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
  %int1_0 = torch.constant.int 1
  %1 = torch.aten.sub.Tensor %0, %arg1, %int1_0 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
  %int1_1 = torch.constant.int 1
  %2 = torch.aten.add.Tensor %1, %arg0, %int1_1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
  return %2 : !torch.vtensor<[4,16],f32>
}
