// RUN: mlirfuse-opt %s --mlirfuse-pipeline --emit-triton | filecheck %s

// A cat of pieces of different dtypes (f32, f16, si32 -> f32, by type
// promotion): each piece is converted to the cat's dtype on its store. The
// f16 piece is computed in f32 already; the int piece is cast in the store.
// Pieces narrower than the space are loaded and stored under `x0 < n` (issue 9).

// CHECK-LABEL: def fused_exp_cat_0(
// CHECK:      tmp3 = tl.load(in2 + (x0 * in2_st0 + x1 * in2_st1), mask=xmask & (x0 < 2))  # load %arg2
// CHECK:      tl.store(out0 + (x0 * 3 + x1 * 1), tmp4, mask=xmask)  # piece at 0 along dim 0
// CHECK-NEXT: tl.store(out0 + (x0 * 3 + x1 * 1 + 12), tmp2, mask=xmask & (x0 < 1))  # piece at 4 along dim 0
// CHECK-NEXT: tl.store(out0 + (x0 * 3 + x1 * 1 + 15), tmp3.to(tl.float32), mask=xmask & (x0 < 2))  # piece at 5 along dim 0
func.func @fuse_concat_mixed_dtypes(%a: !torch.vtensor<[4,3],f32>, %b: !torch.vtensor<[1,3],f16>, %c: !torch.vtensor<[2,3],si32>) -> !torch.vtensor<[7,3],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.exp %a : !torch.vtensor<[4,3],f32> -> !torch.vtensor<[4,3],f32>
  %l = torch.prim.ListConstruct %0, %b, %c : (!torch.vtensor<[4,3],f32>, !torch.vtensor<[1,3],f16>, !torch.vtensor<[2,3],si32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %l, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[7,3],f32>
  return %1 : !torch.vtensor<[7,3],f32>
}

// A computed f16 piece of an f32 cat is stored as eager widens it: rounded to
// f16 first (fuzz seed 880377). A loaded f16 piece (above) needs no rounding.

// CHECK-LABEL: def fused_mul_cat_1(
// CHECK:      tl.store(out0 + {{.*}}, tmp{{[0-9]+}}.to(tl.float16).to(tl.float32), mask=xmask & (x0 < 1))  # piece at 4 along dim 0
func.func @fuse_concat_computed_f16(%a: !torch.vtensor<[4,3],f32>, %b: !torch.vtensor<[1,3],f16>) -> !torch.vtensor<[5,3],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.mul.Tensor %b, %b : !torch.vtensor<[1,3],f16>, !torch.vtensor<[1,3],f16> -> !torch.vtensor<[1,3],f16>
  %l = torch.prim.ListConstruct %a, %0 : (!torch.vtensor<[4,3],f32>, !torch.vtensor<[1,3],f16>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %l, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[5,3],f32>
  return %1 : !torch.vtensor<[5,3],f32>
}
