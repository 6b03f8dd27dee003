// RUN: mlirfuse-opt %s --mlirfuse-pipeline --emit-triton | filecheck %s

// A 0-d result of a reduction kernel (a batch norm's `num_batches_tracked
// + 1`, joined by fusion-fuse-horizontal): every row computes it from the
// 0-d input (a broadcast load), row 0 alone stores it. The row-space sum
// is stored one element per row as before.

// CHECK:       def fused_add_sum_0(in0, in1, out0, out1,
// CHECK:         tmp[[S:[0-9]+]] = tl.sum(
// CHECK:         tmp[[N:[0-9]+]] = tl.load(in0 + (x0 * in0_st0), mask=xmask, other=0)  # load %arg0
// CHECK-NEXT:    tmp[[C:[0-9]+]] = tmp[[N]] + 1  # torch.aten.add.Scalar
// CHECK-NEXT:    tl.store(out0 + xindex, tmp[[S]], mask=xmask)
// CHECK-NEXT:    tl.store(out1 + 0 * xindex, tmp[[C]], mask=xmask & (xindex == 0))
func.func @fuse_scalar_store_into_reduction(%x: !torch.vtensor<[4,8],f32>, %n: !torch.vtensor<[],si64>) -> (!torch.vtensor<[4,1],f32>, !torch.vtensor<[],si64>) {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %next = torch.aten.add.Scalar %n, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %sum = torch.aten.sum.dim_IntList %x, %dims, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  return %sum, %next : !torch.vtensor<[4,1],f32>, !torch.vtensor<[],si64>
}
