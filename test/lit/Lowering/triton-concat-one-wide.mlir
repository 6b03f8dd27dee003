// RUN: mlirfuse-opt %s --mlirfuse-pipeline --emit-triton | filecheck %s

// A concat piece one wide along the cat dim ([2,1] next to [2,3]) is stored
// under `x1 < 1`: a store never broadcasts a size-1 dim the way a load does.
// Without the mask it was written three columns wide, past the output's end
// (issue 9). The returned [2,1] value is stored under the same mask.

// CHECK-LABEL: def fused_exp_neg_cat_0(
// CHECK:      tl.store(out0 + (x0 * 4 + x1 * 1), tmp2, mask=xmask)  # piece at 0 along dim 1
// CHECK-NEXT: tl.store(out0 + (x0 * 4 + x1 * 1 + 3), tmp3, mask=xmask & (x1 < 1))  # piece at 3 along dim 1
// CHECK-NEXT: tl.store(out1 + (x0 * 1 + x1 * 1), tmp3, mask=xmask & (x1 < 1))
func.func @fuse_concat_one_wide_piece(%a: !torch.vtensor<[2,3],f32>, %b: !torch.vtensor<[2,1],f32>) -> (!torch.vtensor<[2,4],f32>, !torch.vtensor<[2,1],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %a : !torch.vtensor<[2,3],f32> -> !torch.vtensor<[2,3],f32>
  %1 = torch.aten.neg %b : !torch.vtensor<[2,1],f32> -> !torch.vtensor<[2,1],f32>
  %l = torch.prim.ListConstruct %0, %1 : (!torch.vtensor<[2,3],f32>, !torch.vtensor<[2,1],f32>) -> !torch.list<vtensor>
  %2 = torch.aten.cat %l, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,4],f32>
  return %2, %1 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,1],f32>
}
