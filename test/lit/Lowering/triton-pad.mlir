// RUN: mlirfuse-opt %s --split-input-file --mlirfuse-pipeline --emit-triton | filecheck %s

// A constant pad is one masked load at shifted coordinates with the pad value
// as `other` (a dim padded on one side only gets one bound); reflect mirrors
// and replicate clamps the shifted coordinate into the input, unmasked.

// CHECK-LABEL: def fused_pad_mul_0(
// CHECK:         tmp0 = tl.load(in0_v0 + (x0 * in0_v0_st0 + (x1 - 1) * in0_v0_st1), mask=xmask & (x0 < 3) & ((x1 - 1) >= 0) & ((x1 - 1) < 5), other=0.5)  # load %arg0.pad(constant, low=[0, 1], value=0.5)
// CHECK-NEXT:    tmp1 = tl.load(in1 + (x0 * in1_st0 + x1 * in1_st1), mask=xmask)  # load %arg1
// CHECK-NEXT:    tmp2 = tmp0 * tmp1  # torch.aten.mul.Tensor
func.func @fuse_constant_pad(%arg0: !torch.vtensor<[3,5],f32>, %arg1: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int0 = torch.constant.int 0
  %0 = torch.prim.ListConstruct %int1, %int2, %int0, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "constant"
  %float5.000000e-01 = torch.constant.float 5.000000e-01
  %1 = torch.aten.pad %arg0, %0, %str, %float5.000000e-01 : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.str, !torch.float -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.mul.Tensor %1, %arg1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  return %2 : !torch.vtensor<[4,8],f32>
}

// -----

// CHECK-LABEL: def fused_pad_add_0(
// CHECK:         tmp0 = tl.load(in0_v0 + (x0 * in0_v0_st0 + tl.minimum(tl.maximum((x1 - 2), 0), 4) * in0_v0_st1), mask=xmask)  # load %arg0.pad(replicate, low=[0, 2])
// CHECK-NEXT:    tmp1 = tl.load(in0_v1 + (x0 * in0_v1_st0 + (4 - tl.abs(4 - tl.abs((x1 - 2)))) * in0_v1_st1), mask=xmask)  # load %arg0.pad(reflect, low=[0, 2])
// CHECK-NEXT:    tmp2 = tmp1 + tmp0  # torch.aten.add.Tensor
func.func @fuse_reflect_and_replicate(%arg0: !torch.vtensor<[3,5],f32>) -> !torch.vtensor<[3,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %0 = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %reflect = torch.constant.str "reflect"
  %replicate = torch.constant.str "replicate"
  %1 = torch.aten.pad %arg0, %0, %reflect, %none : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[3,8],f32>
  %2 = torch.aten.pad %arg0, %0, %replicate, %none : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[3,8],f32>
  %3 = torch.aten.add.Tensor %1, %2, %int1 : !torch.vtensor<[3,8],f32>, !torch.vtensor<[3,8],f32>, !torch.int -> !torch.vtensor<[3,8],f32>
  return %3 : !torch.vtensor<[3,8],f32>
}

// -----

// A cat of inputs: each piece is loaded shifted to its offset along the cat
// dim and masked to its range; a where-chain on the coordinate picks one
// (pieces converted to the cat's dtype).

// CHECK-LABEL: def fused_cat_exp_0(
// CHECK:         tmp0 = tl.load(in0_v0 + (x0 * in0_v0_st0 + x1 * in0_v0_st1), mask=xmask & (x1 < 5), other=0)  # load %arg0.pad(constant, low=[0, 0], value=0)
// CHECK-NEXT:    tmp1 = tl.load(in1_v0 + (x0 * in1_v0_st0 + (x1 - 5) * in1_v0_st1), mask=xmask & ((x1 - 5) >= 0), other=0)  # load %arg1.pad(constant, low=[0, 5], value=0)
// CHECK-NEXT:    tmp2 = tmp1.to(tl.float32)  # compute in f32
// CHECK-NEXT:    tmp3 = tl.where(x1 < 5, tmp0, tmp2)  # torch.aten.cat
// CHECK-NEXT:    tmp4 = tl.exp(tmp3)  # torch.aten.exp
func.func @fuse_cat_of_inputs(%arg0: !torch.vtensor<[3,5],f32>, %arg1: !torch.vtensor<[3,2],f16>) -> !torch.vtensor<[3,7],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %arg0, %arg1 : (!torch.vtensor<[3,5],f32>, !torch.vtensor<[3,2],f16>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %0, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[3,7],f32>
  %2 = torch.aten.exp %1 : !torch.vtensor<[3,7],f32> -> !torch.vtensor<[3,7],f32>
  return %2 : !torch.vtensor<[3,7],f32>
}

// -----

// A pad of a computed value: its producer's loads (a broadcast input along
// the dims it has) are masked outside the pad's operand, the ops run at the
// shifted coordinates, and a where puts the pad value outside.

// CHECK-LABEL: def fused_mul_exp_pad_0(
// CHECK:         tmp0 = tl.load(in0 + (x0 * in0_st0 + (x1 - 1) * in0_st1), mask=xmask & (x0 < 3) & ((x1 - 1) >= 0) & ((x1 - 1) < 5))  # load %arg0
// CHECK-NEXT:    tmp1 = tl.load(in1 + ((x1 - 1) * in1_st1), mask=xmask & (x0 < 3) & ((x1 - 1) >= 0) & ((x1 - 1) < 5))  # load %arg1
// CHECK-NEXT:    tmp2 = tmp0 * tmp1  # torch.aten.mul.Tensor
// CHECK-NEXT:    tmp3 = tl.exp(tmp2)  # torch.aten.exp
// CHECK-NEXT:    tmp4 = tl.where((x0 < 3) & ((x1 - 1) >= 0) & ((x1 - 1) < 5), tmp3, 0.5)  # torch.aten.pad
// CHECK-NEXT:    tmp5 = tmp4 * 2  # torch.aten.mul.Scalar
// CHECK-NEXT:    tl.store(out0 + xindex, tmp5, mask=xmask)

func.func @fuse_pad_of_computed(%arg0: !torch.vtensor<[3,5],f32>, %arg1: !torch.vtensor<[5],f32>) -> !torch.vtensor<[4,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int0 = torch.constant.int 0
  %0 = torch.aten.mul.Tensor %arg0, %arg1 : !torch.vtensor<[3,5],f32>, !torch.vtensor<[5],f32> -> !torch.vtensor<[3,5],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[3,5],f32> -> !torch.vtensor<[3,5],f32>
  %2 = torch.prim.ListConstruct %int1, %int2, %int0, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %str = torch.constant.str "constant"
  %float = torch.constant.float 5.000000e-01
  %3 = torch.aten.pad %1, %2, %str, %float : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.str, !torch.float -> !torch.vtensor<[4,8],f32>
  %4 = torch.aten.mul.Scalar %3, %int2 : !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  return %4 : !torch.vtensor<[4,8],f32>
}

// -----

// Replicate of a computed value: the producer runs at the clamped coordinates, unmasked.

// CHECK-LABEL: def fused_sin_pad_0(
// CHECK:         tmp0 = tl.load(in0 + (x0 * in0_st0 + tl.minimum(tl.maximum((x1 - 2), 0), 4) * in0_st1), mask=xmask)  # load %arg0
// CHECK-NEXT:    tmp1 = tl.sin(tmp0)  # torch.aten.sin
// CHECK-NEXT:    tl.store(out0 + xindex, tmp1, mask=xmask)

func.func @fuse_replicate_of_computed(%arg0: !torch.vtensor<[3,5],f32>) -> !torch.vtensor<[3,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %0 = torch.aten.sin %arg0 : !torch.vtensor<[3,5],f32> -> !torch.vtensor<[3,5],f32>
  %1 = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %replicate = torch.constant.str "replicate"
  %2 = torch.aten.pad %0, %1, %replicate, %none : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[3,8],f32>
  return %2 : !torch.vtensor<[3,8],f32>
}

// -----

// A cat of a computed piece and an input: the piece's producer runs at its
// range of the cat dim (loads masked beyond it), then the where-chain picks.

// CHECK-LABEL: def fused_sin_cat_add_0(
// CHECK:         tmp0 = tl.load(in1_v0 + (x0 * in1_v0_st0 + (x1 - 5) * in1_v0_st1), mask=xmask & ((x1 - 5) >= 0), other=0)  # load %arg1.pad(constant, low=[0, 5], value=0)
// CHECK-NEXT:    tmp1 = tl.load(in0 + (x0 * in0_st0 + x1 * in0_st1), mask=xmask & (x1 < 5))  # load %arg0
// CHECK-NEXT:    tmp2 = tl.sin(tmp1)  # torch.aten.sin
// CHECK-NEXT:    tmp3 = tl.where(x1 < 5, tmp2, tmp0)  # torch.aten.cat
// CHECK-NEXT:    tmp4 = tmp3 + 1  # torch.aten.add.Scalar

func.func @fuse_cat_of_computed(%arg0: !torch.vtensor<[3,5],f32>, %arg1: !torch.vtensor<[3,2],f32>) -> !torch.vtensor<[3,7],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.sin %arg0 : !torch.vtensor<[3,5],f32> -> !torch.vtensor<[3,5],f32>
  %1 = torch.prim.ListConstruct %0, %arg1 : (!torch.vtensor<[3,5],f32>, !torch.vtensor<[3,2],f32>) -> !torch.list<vtensor>
  %2 = torch.aten.cat %1, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[3,7],f32>
  %3 = torch.aten.add.Scalar %2, %int1, %int1 : !torch.vtensor<[3,7],f32>, !torch.int, !torch.int -> !torch.vtensor<[3,7],f32>
  return %3 : !torch.vtensor<[3,7],f32>
}

// -----

// Circular wraps the shifted coordinate into the operand (pads are at most its size).

// CHECK-LABEL: def fused_neg_pad_0(
// CHECK:         tmp0 = tl.load(in0 + (x0 * in0_st0 + (((x1 - 2) + 5) % 5) * in0_st1), mask=xmask)  # load %arg0
// CHECK-NEXT:    tmp1 = -tmp0  # torch.aten.neg
func.func @fuse_circular_of_computed(%arg0: !torch.vtensor<[3,5],f32>) -> !torch.vtensor<[3,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %0 = torch.aten.neg %arg0 : !torch.vtensor<[3,5],f32> -> !torch.vtensor<[3,5],f32>
  %1 = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %circular = torch.constant.str "circular"
  %2 = torch.aten.pad %0, %1, %circular, %none : !torch.vtensor<[3,5],f32>, !torch.list<int>, !torch.str, !torch.none -> !torch.vtensor<[3,8],f32>
  return %2 : !torch.vtensor<[3,8],f32>
}
