// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --pass-pipeline='builtin.module(fusion-fuse-vertical, fusion-mark-persistent)' | filecheck %s

// Views inside groups: a group reads its inputs through chains of views
// (view, reshape, permute, transpose, expand, squeeze, unsqueeze, slice,
// select) by index arithmetic, and stores reshapes of its results; no view
// is ever a copy.

// A chain of views of a group input (view, then transpose) joins the group;
// the kernel loads through it (see Lowering/triton-views.mlir).

// CHECK-LABEL: func.func @fuse_view_chain_of_input
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0, %arg1) ({
// CHECK-NEXT:    ^bb0(%[[A:.+]]: !torch.vtensor<[2,8,4],f32>, %[[B:.+]]: !torch.vtensor<[2,4,2,4],f32>):
// CHECK:           %[[V:.+]] = torch.aten.view %[[A]]
// CHECK:           %[[T:.+]] = torch.aten.transpose.int %[[V]]
// CHECK-NEXT:      %[[M:.+]] = torch.aten.mul.Tensor %[[T]], %[[B]]
// CHECK-NEXT:      %[[R:.+]] = torch.aten.relu %[[M]]
// CHECK-NEXT:      "fusion.yield"(%[[R]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]

func.func @fuse_view_chain_of_input(%arg0: !torch.vtensor<[2,8,4],f32>, %arg1: !torch.vtensor<[2,4,2,4],f32>) -> !torch.vtensor<[2,4,2,4],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %0 = torch.prim.ListConstruct %int2, %int2, %int4, %int4 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %arg0, %0 : !torch.vtensor<[2,8,4],f32>, !torch.list<int> -> !torch.vtensor<[2,2,4,4],f32>
  %2 = torch.aten.transpose.int %1, %int1, %int2 : !torch.vtensor<[2,2,4,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,4,2,4],f32>
  %3 = torch.aten.mul.Tensor %2, %arg1 : !torch.vtensor<[2,4,2,4],f32>, !torch.vtensor<[2,4,2,4],f32> -> !torch.vtensor<[2,4,2,4],f32>
  %4 = torch.aten.relu %3 : !torch.vtensor<[2,4,2,4],f32> -> !torch.vtensor<[2,4,2,4],f32>
  return %4 : !torch.vtensor<[2,4,2,4],f32>
}

// -----

// Every view kind on group inputs: permute, expand, squeeze, select,
// unsqueeze (with broadcasting) - one group, no view left outside.

// CHECK-LABEL: func.func @fuse_each_view_kind
// CHECK-NOT:     torch.aten.{{permute|expand|squeeze|select|unsqueeze}}
// CHECK:         "fusion.group"(%arg1, %arg3, %arg2, %arg4, %arg0) ({
// CHECK-DAG:       torch.aten.unsqueeze %arg5
// CHECK-DAG:       torch.aten.select.int %arg6
// CHECK-DAG:       torch.aten.squeeze.dim %arg7
// CHECK-DAG:       torch.aten.expand %arg5
// CHECK-DAG:       torch.aten.permute %arg8
// CHECK:           torch.aten.add.Tensor %{{.+}}, %arg9
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return

func.func @fuse_each_view_kind(%a: !torch.vtensor<[4,8],f32>, %b: !torch.vtensor<[8],f32>, %c: !torch.vtensor<[1,4,8],f32>, %d: !torch.vtensor<[3,4,8],f32>, %e: !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[4,8],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %int8 = torch.constant.int 8
  %false = torch.constant.bool false
  %p = torch.prim.ListConstruct %int1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.permute %e, %p : !torch.vtensor<[8,4],f32>, !torch.list<int> -> !torch.vtensor<[4,8],f32>
  %s = torch.prim.ListConstruct %int4, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.expand %b, %s, %false : !torch.vtensor<[8],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.squeeze.dim %c, %int0 : !torch.vtensor<[1,4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  %3 = torch.aten.select.int %d, %int0, %int2 : !torch.vtensor<[3,4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,8],f32>
  %4 = torch.aten.unsqueeze %b, %int0 : !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[1,8],f32>
  %5 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  %6 = torch.aten.mul.Tensor %5, %2 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %7 = torch.aten.sub.Tensor %6, %3, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  %8 = torch.aten.div.Tensor %7, %4 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[1,8],f32> -> !torch.vtensor<[4,8],f32>
  %9 = torch.aten.add.Tensor %8, %a, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  return %9 : !torch.vtensor<[4,8],f32>
}

// -----

// A view also read by an unfused op: the group gets its own clone (views are
// free), the original stays for mm.

// CHECK-LABEL: func.func @fuse_view_shared_with_matmul
// CHECK:         %[[T:.+]] = torch.aten.transpose.int %arg0
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0) ({
// CHECK-NEXT:    ^bb0(%[[A:.+]]: !torch.vtensor<[8,4],f32>):
// CHECK:           %[[T2:.+]] = torch.aten.transpose.int %[[A]]
// CHECK-NEXT:      torch.aten.exp %[[T2]]
// CHECK:         torch.aten.mm %[[T]], %arg1

func.func @fuse_view_shared_with_matmul(%a: !torch.vtensor<[8,4],f32>, %b: !torch.vtensor<[8,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.transpose.int %a, %int0, %int1 : !torch.vtensor<[8,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.mm %0, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[4,8],f32>
  return %1, %2 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>
}

// -----

// Reduction kernels read through views too: the slice joins the reduction group.

// CHECK-LABEL: func.func @fuse_slice_in_reduction
// CHECK-NEXT:    "fusion.group"(%arg0) ({
// CHECK:           torch.aten.slice.Tensor %arg1
// CHECK:           torch.aten.neg
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:         }) {kind = "persistent-reduction"}
// CHECK-NEXT:    return

func.func @fuse_slice_in_reduction(%a: !torch.vtensor<[2,8],f32>) -> !torch.vtensor<[2,1],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %true = torch.constant.bool true
  %none = torch.constant.none
  %0 = torch.aten.slice.Tensor %a, %int1, %int0, %int4, %int1 : !torch.vtensor<[2,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
  %l = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %2 = torch.aten.sum.dim_IntList %1, %l, %true, %none : !torch.vtensor<[2,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[2,1],f32>
  return %2 : !torch.vtensor<[2,1],f32>
}

// -----

// A transpose of a computed value would need the producer recomputed at
// transposed coordinates: two groups, the second reads through the view.

// CHECK-LABEL: func.func @no_fuse_view_of_computed_value
// CHECK:         %[[G0:.+]] = "fusion.group"(%arg0)
// CHECK:           torch.aten.exp
// CHECK:         fusion.explain = ["consumer fusion.group: view of a computed value"]
// CHECK-NEXT:    "fusion.group"(%[[G0]])
// CHECK:           torch.aten.transpose.int
// CHECK-NEXT:      torch.aten.neg
// CHECK:         fusion.explain = ["producer fusion.group: view of a computed value"]

func.func @no_fuse_view_of_computed_value(%a: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[8,4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.transpose.int %0, %int0, %int1 : !torch.vtensor<[4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  %2 = torch.aten.neg %1 : !torch.vtensor<[8,4],f32> -> !torch.vtensor<[8,4],f32>
  return %2 : !torch.vtensor<[8,4],f32>
}

// -----

// A group that only copies (views of) its inputs computes nothing (Falcon's
// q and broadcast k made contiguous before their reshape): its reader views
// the copy at the view's coordinates, loading the input there as the copy
// would; one group.

// CHECK-LABEL: func.func @fuse_view_of_a_copy
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0) ({
// CHECK:           %[[C:.+]] = torch.aten.clone
// CHECK:           %[[V:.+]] = torch.aten._unsafe_view %[[C]]
// CHECK:           torch.aten.transpose.int %[[V]]
// CHECK-NEXT:      torch.aten.neg
// CHECK:         }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]

func.func @fuse_view_of_a_copy(%a: !torch.vtensor<[2,4,3],f32>) -> !torch.vtensor<[8,2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int8 = torch.constant.int 8
  %0 = torch.aten.slice.Tensor %a, %int2, %int0, %int2, %int1 : !torch.vtensor<[2,4,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4,2],f32>
  %1 = torch.aten.clone %0, %int0 : !torch.vtensor<[2,4,2],f32>, !torch.int -> !torch.vtensor<[2,4,2],f32>
  %l = torch.prim.ListConstruct %int2, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten._unsafe_view %1, %l : !torch.vtensor<[2,4,2],f32>, !torch.list<int> -> !torch.vtensor<[2,8],f32>
  %3 = torch.aten.transpose.int %2, %int0, %int1 : !torch.vtensor<[2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,2],f32>
  %4 = torch.aten.neg %3 : !torch.vtensor<[8,2],f32> -> !torch.vtensor<[8,2],f32>
  return %4 : !torch.vtensor<[8,2],f32>
}

// -----

// The copy's operand is computed (exp): not a copy of an input, so its view
// is of a stored value; two groups.

// CHECK-LABEL: func.func @no_fuse_view_of_a_computed_copy
// CHECK:         fusion.explain = ["consumer fusion.group: view of a computed value"]
// CHECK:         torch.aten._unsafe_view
// CHECK:         fusion.explain = ["producer fusion.group: view of a computed value"]

func.func @no_fuse_view_of_a_computed_copy(%a: !torch.vtensor<[2,4,2],f32>) -> !torch.vtensor<[8,2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int8 = torch.constant.int 8
  %0 = torch.aten.exp %a : !torch.vtensor<[2,4,2],f32> -> !torch.vtensor<[2,4,2],f32>
  %1 = torch.aten.clone %0, %int0 : !torch.vtensor<[2,4,2],f32>, !torch.int -> !torch.vtensor<[2,4,2],f32>
  %l = torch.prim.ListConstruct %int2, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten._unsafe_view %1, %l : !torch.vtensor<[2,4,2],f32>, !torch.list<int> -> !torch.vtensor<[2,8],f32>
  %3 = torch.aten.transpose.int %2, %int0, %int1 : !torch.vtensor<[2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,2],f32>
  %4 = torch.aten.neg %3 : !torch.vtensor<[8,2],f32> -> !torch.vtensor<[8,2],f32>
  return %4 : !torch.vtensor<[8,2],f32>
}

// -----

// A view whose sizes are computed at run time stays outside.

// CHECK-LABEL: func.func @no_fuse_view_with_computed_size
// CHECK:         %[[V:.+]] = torch.aten.view %arg0
// CHECK-NEXT:    "fusion.group"(%[[V]])
// CHECK:         fusion.explain = ["producer torch.aten.view: view with non-constant arguments"]

func.func @no_fuse_view_with_computed_size(%a: !torch.vtensor<[4,8],f32>, %n: !torch.int) -> !torch.vtensor<[32],f32> {
  %l = torch.prim.ListConstruct %n : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.view %a, %l : !torch.vtensor<[4,8],f32>, !torch.list<int> -> !torch.vtensor<[32],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[32],f32> -> !torch.vtensor<[32],f32>
  return %1 : !torch.vtensor<[32],f32>
}

// -----

// Position ids and a causal mask built from aranges (a decoder's preamble):
// the aranges read no input, so each view of them is evaluated at the view's
// coordinates inside the mask's group instead of being stored by a kernel of
// its own. The position ids are read by a second group too (another
// iteration space): each reader recomputes its own copy.

// CHECK-LABEL: func.func @fuse_views_of_aranges
// CHECK:         %[[MASK:.+]] = "fusion.group"()
// CHECK:           torch.aten.arange
// CHECK:           torch.aten.add.Scalar
// CHECK:           torch.aten.unsqueeze
// CHECK:           torch.aten.arange
// CHECK:           torch.aten.unsqueeze
// CHECK:           torch.aten.le.Tensor
// CHECK:         }) {kind = "pointwise"} : () -> !torch.vtensor<[8,8],i1>
// CHECK:         %[[ANGLE:.+]] = "fusion.group"(%arg0)
// CHECK:           torch.aten.arange
// CHECK:           torch.aten.add.Scalar
// CHECK:           torch.aten.unsqueeze
// CHECK:           torch.aten._to_copy
// CHECK:           torch.aten.mul.Tensor
// CHECK:           torch.aten.cos
// CHECK:         }) {kind = "pointwise"} : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[8,4],f32>
// CHECK-NOT:     fusion.group
// CHECK:         return %[[MASK]], %[[ANGLE]]
func.func @fuse_views_of_aranges(%inv_freq: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[8,8],i1>, !torch.vtensor<[8,4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int6 = torch.constant.int 6
  %int8 = torch.constant.int 8
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %0 = torch.aten.arange %int8, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[8],si64>
  %1 = torch.aten.add.Scalar %0, %int0, %int1 : !torch.vtensor<[8],si64>, !torch.int, !torch.int -> !torch.vtensor<[8],si64>
  %2 = torch.aten.arange %int8, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[8],si64>
  %3 = torch.aten.unsqueeze %2, %int0 : !torch.vtensor<[8],si64>, !torch.int -> !torch.vtensor<[1,8],si64>
  %4 = torch.aten.unsqueeze %1, %int1 : !torch.vtensor<[8],si64>, !torch.int -> !torch.vtensor<[8,1],si64>
  %5 = torch.aten.le.Tensor %3, %4 : !torch.vtensor<[1,8],si64>, !torch.vtensor<[8,1],si64> -> !torch.vtensor<[8,8],i1>
  %6 = torch.aten.unsqueeze %1, %int1 : !torch.vtensor<[8],si64>, !torch.int -> !torch.vtensor<[8,1],si64>
  %7 = torch.aten._to_copy %6, %int6, %none, %none, %none, %false, %none : !torch.vtensor<[8,1],si64>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[8,1],f32>
  %8 = torch.aten.mul.Tensor %7, %inv_freq : !torch.vtensor<[8,1],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[8,4],f32>
  %9 = torch.aten.cos %8 : !torch.vtensor<[8,4],f32> -> !torch.vtensor<[8,4],f32>
  return %5, %9 : !torch.vtensor<[8,8],i1>, !torch.vtensor<[8,4],f32>
}

// -----

// A value computed from an input is not recomputed at a view's coordinates
// even when an arange feeds it (its loads would move with it): two groups.

// CHECK-LABEL: func.func @no_fuse_view_of_arange_plus_input
// CHECK:         fusion.explain = ["consumer fusion.group: view of a computed value"]
// CHECK:         torch.aten.transpose.int
// CHECK:         fusion.explain = ["producer fusion.group: view of a computed value"]
func.func @no_fuse_view_of_arange_plus_input(%a: !torch.vtensor<[4,8],si64>) -> !torch.vtensor<[8,4],si64> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int8 = torch.constant.int 8
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %0 = torch.aten.arange %int8, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[8],si64>
  %1 = torch.aten.add.Tensor %a, %0, %int1 : !torch.vtensor<[4,8],si64>, !torch.vtensor<[8],si64>, !torch.int -> !torch.vtensor<[4,8],si64>
  %2 = torch.aten.transpose.int %1, %int0, %int1 : !torch.vtensor<[4,8],si64>, !torch.int, !torch.int -> !torch.vtensor<[8,4],si64>
  %3 = torch.aten.neg %2 : !torch.vtensor<[8,4],si64> -> !torch.vtensor<[8,4],si64>
  return %3 : !torch.vtensor<[8,4],si64>
}

// -----

// A reduction kernel reads its inputs through views only (the places of
// lowering/pointwise.py are a pointwise kernel's): a view of an arange
// summed is a group of its own.

// CHECK-LABEL: func.func @no_fuse_view_of_arange_into_reduction
// CHECK:         fusion.explain = ["consumer fusion.group: view of a computed value"]
// CHECK:         torch.aten.sum.dim_IntList
// CHECK:         fusion.explain = ["producer fusion.group: view of a computed value"]
func.func @no_fuse_view_of_arange_into_reduction() -> !torch.vtensor<[8,1],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %int6 = torch.constant.int 6
  %int8 = torch.constant.int 8
  %true = torch.constant.bool true
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %0 = torch.aten.arange %int4, %int6, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[4],f32>
  %1 = torch.aten.unsqueeze %0, %int0 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[1,4],f32>
  %s = torch.prim.ListConstruct %int8, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.expand %1, %s, %false : !torch.vtensor<[1,4],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[8,4],f32>
  %l = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.sum.dim_IntList %2, %l, %true, %none : !torch.vtensor<[8,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8,1],f32>
  return %3 : !torch.vtensor<[8,1],f32>
}

// -----

// The same limit for arange.start_step (torch.arange(0, 8, 2), as the
// importer spells a stepped arange).

// CHECK-LABEL: func.func @no_fuse_view_of_arange_start_step_into_reduction
// CHECK:         torch.aten.arange.start_step
// CHECK:         fusion.explain = ["consumer fusion.group: view of a computed value"]
// CHECK:         torch.aten.sum.dim_IntList
// CHECK:         fusion.explain = ["producer fusion.group: view of a computed value"]
func.func @no_fuse_view_of_arange_start_step_into_reduction() -> !torch.vtensor<[8,1],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %int6 = torch.constant.int 6
  %int8 = torch.constant.int 8
  %true = torch.constant.bool true
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %0 = torch.aten.arange.start_step %int0, %int8, %int2, %int6, %none, %cpu, %false : !torch.int, !torch.int, !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[4],f32>
  %1 = torch.aten.unsqueeze %0, %int0 : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[1,4],f32>
  %s = torch.prim.ListConstruct %int8, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.expand %1, %s, %false : !torch.vtensor<[1,4],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[8,4],f32>
  %l = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %3 = torch.aten.sum.dim_IntList %2, %l, %true, %none : !torch.vtensor<[8,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8,1],f32>
  return %3 : !torch.vtensor<[8,1],f32>
}

// -----

// An expand to the operand's own shape reads each element where it is: the
// mask computed from an input joins the group turning it into an additive
// bias (eager attention's `zeros/expand/where`), recomputing nothing.

// CHECK-LABEL: func.func @fuse_identity_view_of_computed_value
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0)
// CHECK:           torch.aten.ne.Scalar
// CHECK:           torch.aten.expand
// CHECK:           torch.aten.where.ScalarOther
// CHECK-NEXT:      "fusion.yield"
// CHECK-NOT:     fusion.group
// CHECK:         return %[[G]]
func.func @fuse_identity_view_of_computed_value(%m: !torch.vtensor<[2,1,8,8],si64>) -> !torch.vtensor<[2,1,8,8],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int-1 = torch.constant.int -1
  %int6 = torch.constant.int 6
  %int8 = torch.constant.int 8
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %float = torch.constant.float -3.4028234663852886E+38
  %0 = torch.aten.ne.Scalar %m, %int0 : !torch.vtensor<[2,1,8,8],si64>, !torch.int -> !torch.vtensor<[2,1,8,8],i1>
  %e = torch.prim.ListConstruct  : () -> !torch.list<int>
  %1 = torch.aten.zeros %e, %int6, %none, %cpu, %false : !torch.list<int>, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],f32>
  %s = torch.prim.ListConstruct %int2, %int-1, %int8, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.expand %0, %s, %false : !torch.vtensor<[2,1,8,8],i1>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,1,8,8],i1>
  %3 = torch.aten.where.ScalarOther %2, %1, %float : !torch.vtensor<[2,1,8,8],i1>, !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[2,1,8,8],f32>
  return %3 : !torch.vtensor<[2,1,8,8],f32>
}

// -----

// A copy (a transposed value made contiguous before a reshape: the q/k/v
// gradients' pieces) read through a reshape: the reader evaluates the copy
// where the reshape puts each element, loading the copy's input there; no
// kernel only copies.

// CHECK-LABEL: func.func @fuse_copy_viewed_by_a_cat
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1)
// CHECK:           %[[T:.+]] = torch.aten.transpose.int
// CHECK:           %[[C:.+]] = torch.aten.clone %[[T]]
// CHECK:           torch.aten._unsafe_view %[[C]]
// CHECK:           torch.aten.cat
// CHECK:           torch.aten.neg
// CHECK:         }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_copy_viewed_by_a_cat(%x: !torch.vtensor<[2,4,3,5],f32>, %y: !torch.vtensor<[2,3,20],f32>) -> !torch.vtensor<[2,3,40],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int20 = torch.constant.int 20
  %t = torch.aten.transpose.int %x, %int1, %int2 : !torch.vtensor<[2,4,3,5],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,3,4,5],f32>
  %c = torch.aten.clone %t, %int0 : !torch.vtensor<[2,3,4,5],f32>, !torch.int -> !torch.vtensor<[2,3,4,5],f32>
  %s = torch.prim.ListConstruct %int2, %int3, %int20 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten._unsafe_view %c, %s : !torch.vtensor<[2,3,4,5],f32>, !torch.list<int> -> !torch.vtensor<[2,3,20],f32>
  %l = torch.prim.ListConstruct %v, %y : (!torch.vtensor<[2,3,20],f32>, !torch.vtensor<[2,3,20],f32>) -> !torch.list<vtensor>
  %cat = torch.aten.cat %l, %int2 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,3,40],f32>
  %n = torch.aten.neg %cat : !torch.vtensor<[2,3,40],f32> -> !torch.vtensor<[2,3,40],f32>
  return %n : !torch.vtensor<[2,3,40],f32>
}

// -----

// The copy is also returned: it is stored anyway, and the reader reads it
// as stored.

// CHECK-LABEL: func.func @no_fuse_copy_also_returned
// CHECK:         %[[G0:.+]] = "fusion.group"(%arg0)
// CHECK:           torch.aten.clone
// CHECK:         fusion.explain = ["consumer fusion.group: view of a computed value"]
// CHECK-NEXT:    "fusion.group"(%[[G0]], %arg1)
// CHECK:           torch.aten._unsafe_view
// CHECK:         fusion.explain = ["producer fusion.group: view of a computed value"]
func.func @no_fuse_copy_also_returned(%x: !torch.vtensor<[2,4,3,5],f32>, %y: !torch.vtensor<[2,3,20],f32>) -> (!torch.vtensor<[2,3,40],f32>, !torch.vtensor<[2,3,4,5],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int20 = torch.constant.int 20
  %t = torch.aten.transpose.int %x, %int1, %int2 : !torch.vtensor<[2,4,3,5],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,3,4,5],f32>
  %c = torch.aten.clone %t, %int0 : !torch.vtensor<[2,3,4,5],f32>, !torch.int -> !torch.vtensor<[2,3,4,5],f32>
  %s = torch.prim.ListConstruct %int2, %int3, %int20 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten._unsafe_view %c, %s : !torch.vtensor<[2,3,4,5],f32>, !torch.list<int> -> !torch.vtensor<[2,3,20],f32>
  %l = torch.prim.ListConstruct %v, %y : (!torch.vtensor<[2,3,20],f32>, !torch.vtensor<[2,3,20],f32>) -> !torch.list<vtensor>
  %cat = torch.aten.cat %l, %int2 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,3,40],f32>
  %n = torch.aten.neg %cat : !torch.vtensor<[2,3,40],f32> -> !torch.vtensor<[2,3,40],f32>
  return %n, %c : !torch.vtensor<[2,3,40],f32>, !torch.vtensor<[2,3,4,5],f32>
}
