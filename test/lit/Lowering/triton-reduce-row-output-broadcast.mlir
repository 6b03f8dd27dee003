// RUN: mlirfuse-opt %s --mlirfuse-pipeline --emit-triton | filecheck %s

// KNOWN BUG (this test fails until it is fixed): a row-space result of a
// reduction kernel that is smaller than the kernel's rows is stored as if it
// had one element per row.
//
// exp(y) with y: [2,1,1] is fused as a prologue of sum(x * exp(y), 2) over
// [2,3,8] and exported as the kernel's second result. The kernel has
// 2 * 3 = 6 rows (xindex = x0 * 3 + x1), but the [2,1,1] result has 2
// elements: `tl.store(out1 + xindex, ...)` writes 4 elements past its end
// and puts exp(y[0]) at out1[1] (row (0, 1)), so eager's exp(y[1]) is lost
// (seen under TRITON_INTERPRET=1: [1.0, 2.718...] comes back [1.0, 1.0]).
// Correct would be storing it at its own offset (x0 here), or not exporting
// it from the reduction kernel.

// CHECK-LABEL: # persistent-reduction over dims [2] of [2, 3, 8]: rows are the kept dims, columns the reduced dims.
// CHECK:         tl.store(out0 + xindex, {{.+}}, mask=xmask)
// CHECK-NOT:     tl.store(out1 + xindex,
func.func @fuse_exported_prologue_smaller_than_rows(%arg0: !torch.vtensor<[2,3,8],f32>, %arg1: !torch.vtensor<[2,1,1],f32>) -> (!torch.vtensor<[2,3,1],f32>, !torch.vtensor<[2,1,1],f32>) {
  %0 = torch.aten.exp %arg1 : !torch.vtensor<[2,1,1],f32> -> !torch.vtensor<[2,1,1],f32>
  %1 = torch.aten.mul.Tensor %arg0, %0 : !torch.vtensor<[2,3,8],f32>, !torch.vtensor<[2,1,1],f32> -> !torch.vtensor<[2,3,8],f32>
  %int2 = torch.constant.int 2
  %2 = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %none = torch.constant.none
  %3 = torch.aten.sum.dim_IntList %1, %2, %true, %none : !torch.vtensor<[2,3,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[2,3,1],f32>
  return %3, %0 : !torch.vtensor<[2,3,1],f32>, !torch.vtensor<[2,1,1],f32>
}
