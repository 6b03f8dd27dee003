// RUN: mlirfuse-opt %s --split-input-file --fusion-decompose | filecheck %s

// KNOWN BUG (this test fails until it is fixed): std_mean is never
// decomposed. torch-mlir's torch dialect has no registered std_mean op, so
// the FX importer emits `torch.aten.std_mean.correction` (torch.std_mean(x,
// 1, correction=1)) and `torch.aten.std_mean.dim` (torch.std_mean(x, 1)) as
// `torch.operator "..."`. fusion-decompose's patterns are rooted at the op
// names "torch.aten.std_mean.correction" / ".dim", which no parsed op can
// have, so both stay whole and run through ATen, although the pass's
// docstring and mlirfuse.ops.reductions.OPINFO_SUPPORTED list std_mean.
// Expected: the same decomposition as var_mean plus a sqrt of the variance.

// CHECK-LABEL: func.func @decompose_std_mean
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NOT:     torch.operator
// CHECK:         %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[SUM:.+]] = torch.aten.sum.dim_IntList %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         %[[VAR:.+]] = torch.aten.div.Scalar %[[SUM]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK-NEXT:    %[[STD:.+]] = torch.aten.sqrt %[[VAR]]
// CHECK-NOT:     torch.operator
// CHECK:         return
func.func @decompose_std_mean(%arg0: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %int1_0 = torch.constant.int 1
  %false = torch.constant.bool false
  %1:2 = torch.operator "torch.aten.std_mean.correction"(%arg0, %0, %int1_0, %false) : (!torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.int, !torch.bool) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>)
  return %1#0, %1#1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// CHECK-LABEL: func.func @decompose_std_mean_dim
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4,8],f32>)
// CHECK-NOT:     torch.operator
// CHECK:         %[[MEAN:.+]] = torch.aten.mean.dim %[[X]], %{{.+}} -> !torch.vtensor<[4,1],f32>
// CHECK:         torch.aten.sqrt
// CHECK-NOT:     torch.operator
// CHECK:         return
func.func @decompose_std_mean_dim(%arg0: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %1:2 = torch.operator "torch.aten.std_mean.dim"(%arg0, %0, %true, %false) : (!torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.bool) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>)
  return %1#0, %1#1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}
