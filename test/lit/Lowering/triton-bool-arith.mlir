// RUN: mlirfuse-opt %s --mlirfuse-pipeline --emit-triton | filecheck %s

// bool + bool is logical or in eager: computed in int32 and tested != 0,
// never in 1-bit arithmetic where True + True wraps to False. A bool reaches
// bf16 through f32 and the kernel's rounding helper (issue 9).

// CHECK-LABEL: def fused_add_0(
// CHECK:      tmp2 = (tmp0.to(tl.int32) + tmp1.to(tl.int32)) != 0  # torch.aten.add.Tensor
// CHECK-NEXT: tmp3 = round_to_bf16(tmp2.to(tl.float32)).to(tl.float32)  # torch.prims.convert_element_type
// CHECK-NEXT: tl.store(out0 + xindex, round_to_bf16(tmp3), mask=xmask)
func.func @fuse_bool_add(%a: !torch.vtensor<[4,8],i1>, %b: !torch.vtensor<[4,8],i1>) -> !torch.vtensor<[4,8],bf16> {
  %int1 = torch.constant.int 1
  %int15 = torch.constant.int 15
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[4,8],i1>, !torch.vtensor<[4,8],i1>, !torch.int -> !torch.vtensor<[4,8],i1>
  %1 = torch.prims.convert_element_type %0, %int15 : !torch.vtensor<[4,8],i1>, !torch.int -> !torch.vtensor<[4,8],bf16>
  return %1 : !torch.vtensor<[4,8],bf16>
}
