// RUN: mlirfuse-opt %s --mlirfuse-pipeline --emit-triton | filecheck %s
// RUN: mlirfuse-opt %s --mlirfuse-pipeline | filecheck %s --check-prefix=IR

// Two branches differing only in their scale, shift and threshold share one
// kernel (fusion-outline's lift-constants): each differing constant is a
// scalar parameter, c0 c1 c2, after the outputs, and each launch passes its
// own values. The one the branches agree on (the clamp bound 6.0) stays a
// literal, and so does the exponent of pow, which picks the formula.

// IR:          "fusion.launch"(%arg0) {kernel = @fused_pow_mul_sub_clamp_max_gt_0, scalars = array<f64: 5.000000e-01, 1.000000e-01, 3.000000e-01>}
// IR-NEXT:     "fusion.launch"(%arg1) {kernel = @fused_pow_mul_sub_clamp_max_gt_0, scalars = array<f64: 2.500000e-01, 2.000000e-01, 0.69999999999999996>}

// CHECK-LABEL: def fused_pow_mul_sub_clamp_max_gt_0(in0, out0, out1, c0, c1, c2, xnumel, in0_st0, XBLOCK: tl.constexpr):
// CHECK:         tmp1 = tmp0 * tmp0  # torch.aten.pow.Tensor_Scalar
// CHECK-NEXT:    tmp2 = tmp1 * c0  # torch.aten.mul.Scalar
// CHECK-NEXT:    tmp3 = tmp2 - c1  # torch.aten.sub.Scalar
// CHECK-NEXT:    tmp4 = tl.where(tmp3 > 6.0, 6.0, tmp3)  # torch.aten.clamp_max
// CHECK-NEXT:    tmp5 = tmp0 > c2  # torch.aten.gt.Scalar
// CHECK-NOT:   def fused_
func.func @fuse_scaled_branches(%x: !torch.vtensor<[64],f32>, %y: !torch.vtensor<[64],f32>) -> (!torch.vtensor<[64],f32>, !torch.vtensor<[64],i1>, !torch.vtensor<[64],f32>, !torch.vtensor<[64],i1>) {
  %int1 = torch.constant.int 1
  %two = torch.constant.float 2.000000e+00
  %six = torch.constant.float 6.000000e+00
  %s0 = torch.constant.float 5.000000e-01
  %b0 = torch.constant.float 1.000000e-01
  %t0 = torch.constant.float 3.000000e-01
  %s1 = torch.constant.float 2.500000e-01
  %b1 = torch.constant.float 2.000000e-01
  %t1 = torch.constant.float 7.000000e-01
  %0 = torch.aten.pow.Tensor_Scalar %x, %two : !torch.vtensor<[64],f32>, !torch.float -> !torch.vtensor<[64],f32>
  %1 = torch.aten.mul.Scalar %0, %s0 : !torch.vtensor<[64],f32>, !torch.float -> !torch.vtensor<[64],f32>
  %2 = torch.aten.sub.Scalar %1, %b0, %int1 : !torch.vtensor<[64],f32>, !torch.float, !torch.int -> !torch.vtensor<[64],f32>
  %3 = torch.aten.clamp_max %2, %six : !torch.vtensor<[64],f32>, !torch.float -> !torch.vtensor<[64],f32>
  %4 = torch.aten.gt.Scalar %x, %t0 : !torch.vtensor<[64],f32>, !torch.float -> !torch.vtensor<[64],i1>
  %5 = torch.aten.pow.Tensor_Scalar %y, %two : !torch.vtensor<[64],f32>, !torch.float -> !torch.vtensor<[64],f32>
  %6 = torch.aten.mul.Scalar %5, %s1 : !torch.vtensor<[64],f32>, !torch.float -> !torch.vtensor<[64],f32>
  %7 = torch.aten.sub.Scalar %6, %b1, %int1 : !torch.vtensor<[64],f32>, !torch.float, !torch.int -> !torch.vtensor<[64],f32>
  %8 = torch.aten.clamp_max %7, %six : !torch.vtensor<[64],f32>, !torch.float -> !torch.vtensor<[64],f32>
  %9 = torch.aten.gt.Scalar %y, %t1 : !torch.vtensor<[64],f32>, !torch.float -> !torch.vtensor<[64],i1>
  return %3, %4, %8, %9 : !torch.vtensor<[64],f32>, !torch.vtensor<[64],i1>, !torch.vtensor<[64],f32>, !torch.vtensor<[64],i1>
}
