// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-decompose, fusion-fuse-elementwise)' | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --pass-pipeline='builtin.module(fusion-decompose, fusion-fuse-elementwise)' | filecheck %s --check-prefix=WHY

// Scans (cumsum, cumprod) fused with their pointwise prologue and epilogue
// into one `scan` group: one scanned dim of one shape S, every stored value
// shaped S, no reduction in the same group (lowering/scan.py).

// A decoder's position ids from its attention mask: the cumsum, the `- 1`,
// the `* mask` and the masked_fill (with its `mask == 0`) are one group.

// CHECK-LABEL: func.func @fuse_position_ids
// CHECK-SAME:    (%[[M:.+]]: !torch.vtensor<[2,16],si64>)
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%[[M]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[2,16],si64>):
// CHECK:           %[[EQ:.+]] = torch.aten.eq.Scalar %[[X]]
// CHECK:           %[[CUM:.+]] = torch.aten.cumsum %[[X]], %{{.+}}, %{{.+}} : {{.+}} -> !torch.vtensor<[2,16],si64>
// CHECK:           %[[SUB:.+]] = torch.aten.sub.Scalar %[[CUM]]
// CHECK-NEXT:      %[[MUL:.+]] = torch.aten.mul.Tensor %[[SUB]], %[[X]]
// CHECK:           %[[FILL:.+]] = torch.aten.masked_fill.Scalar %[[MUL]], %[[EQ]]
// CHECK-NEXT:      "fusion.yield"(%[[FILL]])
// CHECK-NEXT:    }) {kind = "scan"} : (!torch.vtensor<[2,16],si64>) -> !torch.vtensor<[2,16],si64>
// CHECK-NEXT:    return %[[G]]
func.func @fuse_position_ids(%mask: !torch.vtensor<[2,16],si64>) -> !torch.vtensor<[2,16],si64> {
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.cumsum %mask, %int-1, %none : !torch.vtensor<[2,16],si64>, !torch.int, !torch.none -> !torch.vtensor<[2,16],si64>
  %1 = torch.aten.sub.Scalar %0, %int1, %int1 : !torch.vtensor<[2,16],si64>, !torch.int, !torch.int -> !torch.vtensor<[2,16],si64>
  %2 = torch.aten.mul.Tensor %1, %mask : !torch.vtensor<[2,16],si64>, !torch.vtensor<[2,16],si64> -> !torch.vtensor<[2,16],si64>
  %3 = torch.aten.eq.Scalar %mask, %int0 : !torch.vtensor<[2,16],si64>, !torch.int -> !torch.vtensor<[2,16],i1>
  %4 = torch.aten.masked_fill.Scalar %2, %3, %int1 : !torch.vtensor<[2,16],si64>, !torch.vtensor<[2,16],i1>, !torch.int -> !torch.vtensor<[2,16],si64>
  return %4 : !torch.vtensor<[2,16],si64>
}

// -----

// A prologue broadcasting into S ([8] into [4,8]) and a cumprod along dim 0,
// then a cumsum of the cumprod along the same dim: one group.

// CHECK-LABEL: func.func @fuse_prologue_and_two_scans_along_one_dim
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"
// CHECK:           %[[MUL:.+]] = torch.aten.mul.Tensor
// CHECK:           %[[PROD:.+]] = torch.aten.cumprod %[[MUL]]
// CHECK:           %[[SUM:.+]] = torch.aten.cumsum %[[PROD]]
// CHECK-NEXT:      "fusion.yield"(%[[SUM]])
// CHECK-NEXT:    }) {kind = "scan"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_prologue_and_two_scans_along_one_dim(%x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int0 = torch.constant.int 0
  %none = torch.constant.none
  %0 = torch.aten.mul.Tensor %x, %w : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.cumprod %0, %int0, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.cumsum %1, %int0, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  return %2 : !torch.vtensor<[4,8],f32>
}

// -----

// Limits: a scan feeding a reduction is two kernels (a scan kernel computes
// no reduction): the sum's group stays apart from the cumsum's.

// CHECK-LABEL: func.func @no_fuse_scan_into_reduction
// CHECK:         %[[S:.+]] = "fusion.group"
// CHECK:           torch.aten.cumsum
// CHECK-NOT:       torch.aten.sum
// CHECK:         }) {kind = "scan"}
// CHECK-NEXT:    %[[R:.+]] = "fusion.group"(%[[S]])
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         }) {kind = "persistent-reduction"}
// WHY-LABEL: func.func @no_fuse_scan_into_reduction
// WHY:         fusion.explain = ["consumer fusion.group: a scan and a reduction (a scan kernel computes no reduction)"]
func.func @no_fuse_scan_into_reduction(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %0 = torch.aten.cumsum %x, %int1, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  %1 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %2 = torch.aten.sum.dim_IntList %0, %1, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  return %2 : !torch.vtensor<[4,1],f32>
}

// -----

// Limits: scans along different dims are two groups.

// CHECK-LABEL: func.func @no_fuse_scans_along_two_dims
// CHECK:         %[[A:.+]] = "fusion.group"
// CHECK:         }) {kind = "scan"}
// CHECK-NEXT:    %[[B:.+]] = "fusion.group"(%[[A]])
// CHECK:         }) {kind = "scan"}
// WHY-LABEL: func.func @no_fuse_scans_along_two_dims
// WHY:         fusion.explain = ["consumer fusion.group: scans over different axes"]
func.func @no_fuse_scans_along_two_dims(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.cumsum %x, %int1, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.cumsum %0, %int0, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// Limits: an epilogue broadcasting the scan into a larger shape stores
// values a scan kernel has no place for: it stays a pointwise group.

// CHECK-LABEL: func.func @no_fuse_epilogue_broadcast_past_the_scan
// CHECK:         %[[S:.+]] = "fusion.group"(%{{.+}}) ({
// CHECK:         }) {kind = "scan"}
// CHECK-NEXT:    %[[P:.+]] = "fusion.group"(%[[S]], %{{.+}})
// CHECK:           torch.aten.add.Tensor
// CHECK:         }) {kind = "pointwise"}
// WHY-LABEL: func.func @no_fuse_epilogue_broadcast_past_the_scan
// WHY:         fusion.explain = ["consumer fusion.group: different iteration space"]
func.func @no_fuse_epilogue_broadcast_past_the_scan(%x: !torch.vtensor<[4,8],f32>, %y: !torch.vtensor<[2,4,8],f32>) -> !torch.vtensor<[2,4,8],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.cumsum %x, %int1, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.add.Tensor %0, %y, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[2,4,8],f32>, !torch.int -> !torch.vtensor<[2,4,8],f32>
  return %1 : !torch.vtensor<[2,4,8],f32>
}

// -----

// Limits: a scan along a `?` dim, or along a dim that is not a constant, stays an ATen call.

// CHECK-LABEL: func.func @no_fuse_dynamic_scan
// CHECK:         %[[C:.+]] = torch.aten.cumsum %arg0
// CHECK-NEXT:    "fusion.group"(%[[C]])
// WHY-LABEL: func.func @no_fuse_dynamic_scan
// WHY:         fusion.explain = ["producer torch.aten.cumsum: scan over a dynamic shape"]
func.func @no_fuse_dynamic_scan(%x: !torch.vtensor<[4,?],f32>) -> !torch.vtensor<[4,?],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.cumsum %x, %int1, %none : !torch.vtensor<[4,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,?],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[4,?],f32> -> !torch.vtensor<[4,?],f32>
  return %1 : !torch.vtensor<[4,?],f32>
}
