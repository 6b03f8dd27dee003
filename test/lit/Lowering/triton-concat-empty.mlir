// RUN: mlirfuse-opt %s --mlirfuse-pipeline --emit-triton | filecheck %s

// A cat of inputs read inside a pointwise kernel whose pieces are all empty
// along the cat dim (triu_indices(0, 0) decomposed makes one): the result is
// empty too, and the last piece stands for it (no piece holds a coordinate).

// CHECK-LABEL: def fused_cat_mul_0(
// CHECK:       tmp{{[0-9]+}} = tl.load(in0
// CHECK:       tmp[[B:[0-9]+]] = tl.load(in1
// CHECK-NOT:   tl.where
// CHECK:       = tmp[[B]]  # torch.aten.cat
func.func @fuse_cat_of_empty_pieces(%a: !torch.vtensor<[2,0],f32>, %b: !torch.vtensor<[2,0],f32>) -> !torch.vtensor<[2,0],f32> {
  %int1 = torch.constant.int 1
  %float2 = torch.constant.float 2.000000e+00
  %l = torch.prim.ListConstruct %a, %b : (!torch.vtensor<[2,0],f32>, !torch.vtensor<[2,0],f32>) -> !torch.list<vtensor>
  %0 = torch.aten.cat %l, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,0],f32>
  %1 = torch.aten.mul.Scalar %0, %float2 : !torch.vtensor<[2,0],f32>, !torch.float -> !torch.vtensor<[2,0],f32>
  return %1 : !torch.vtensor<[2,0],f32>
}
