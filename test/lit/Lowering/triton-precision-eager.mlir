// RUN: mlirfuse-opt %s --pass-pipeline='builtin.module(mlirfuse-pipeline{precision=eager})' --emit-triton | filecheck %s
// RUN: mlirfuse-opt %s --pass-pipeline='builtin.module(mlirfuse-pipeline{precision=eager})' | filecheck %s --check-prefix=IR
// RUN: mlirfuse-opt %s --mlirfuse-pipeline --emit-triton | filecheck %s --check-prefix=FAST
// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(mlirfuse-pipeline{precision=exact})' 2>&1 | filecheck %s --check-prefix=ERR

// precision=eager (fusion-outline's option, issue 21 item 8): each bf16 op
// result is rounded to bf16 as eager stores it, so a pointwise chain equals
// eager's bit for bit; the default (fast) keeps the intermediates in f32.

// IR: "fusion.kernel"()
// IR: kind = "pointwise", precision = "eager"

// CHECK-LABEL: def fused_mul_add_exp_0(
// CHECK:         tmp4 = round_to_bf16((tmp1 * tmp3)).to(tl.float32)  # torch.aten.mul.Tensor
// CHECK-NEXT:    tmp5 = round_to_bf16((tmp4 + tmp1)).to(tl.float32)  # torch.aten.add.Tensor
// CHECK-NEXT:    tmp6 = round_to_bf16((tl.exp(tmp5))).to(tl.float32)  # torch.aten.exp

// FAST-LABEL: def fused_mul_add_exp_0(
// FAST:         tmp4 = tmp1 * tmp3  # torch.aten.mul.Tensor
// FAST-NEXT:    tmp5 = tmp4 + tmp1  # torch.aten.add.Tensor
// FAST-NEXT:    tmp6 = tl.exp(tmp5)  # torch.aten.exp

// ERR: error: option 'precision' of pass 'fusion-outline' is one of fast, eager, got 'exact'

func.func @fuse_bf16_chain(%x: !torch.vtensor<[4,8],bf16>, %y: !torch.vtensor<[4,8],bf16>) -> !torch.vtensor<[4,8],bf16> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.mul.Tensor %x, %y : !torch.vtensor<[4,8],bf16>, !torch.vtensor<[4,8],bf16> -> !torch.vtensor<[4,8],bf16>
  %1 = torch.aten.add.Tensor %0, %x, %int1 : !torch.vtensor<[4,8],bf16>, !torch.vtensor<[4,8],bf16>, !torch.int -> !torch.vtensor<[4,8],bf16>
  %2 = torch.aten.exp %1 : !torch.vtensor<[4,8],bf16> -> !torch.vtensor<[4,8],bf16>
  return %2 : !torch.vtensor<[4,8],bf16>
}
