// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-elementwise, fusion-canonicalize, cse, canonicalize)' | filecheck %s

// Upstream passes run on modules holding fusion ops and leave them valid.
// The fusion ops are unregistered (IRDL cannot type heterogeneous variadic
// operands; see mlirfuse/dialect/fusion.py), so upstream cse cannot know a
// group is pure: fusion-canonicalize merges identical groups and erases dead
// ones itself, and cse/canonicalize then work on the rest.

// Two fused chains computing the same thing from the same input: one group
// remains and both results read it.

// CHECK-LABEL: func.func @fuse_identical_groups_cse
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>)
// CHECK:         %[[G:.+]] = "fusion.group"(%[[A]]) ({
// CHECK:           torch.aten.exp
// CHECK-NEXT:      torch.aten.neg
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NOT:     "fusion.group"
// CHECK-NEXT:    return %[[G]], %[[G]]
func.func @fuse_identical_groups_cse(%arg0: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %2 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %3 = torch.aten.neg %2 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %1, %3 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// Groups on different inputs are not merged.

// CHECK-LABEL: func.func @no_fuse_cse_different_inputs
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>, %[[B:.+]]: !torch.vtensor<[8],f32>)
// CHECK:         %[[G0:.+]] = "fusion.group"(%[[A]])
// CHECK:         %[[G1:.+]] = "fusion.group"(%[[B]])
// CHECK:         return %[[G0]], %[[G1]]
func.func @no_fuse_cse_different_inputs(%arg0: !torch.vtensor<[8],f32>, %arg1: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.exp %arg1 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0, %1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// canonicalize gathers the body's constants at the top of the body, but
// never hoists them out of the group: the group stays isolated from above.

// CHECK-LABEL: func.func @fuse_constants_stay_in_group
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[4,16],f32>)
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[4,16],f32>):
// CHECK-DAG:       %[[ONE:.+]] = torch.constant.int 1
// CHECK-DAG:       %[[C:.+]] = torch.constant.float 1.000000e+00
// CHECK:           %[[ADD:.+]] = torch.aten.add.Scalar %[[X]], %[[C]], %[[ONE]]
// CHECK-NEXT:      %[[RELU:.+]] = torch.aten.relu %[[ADD]]
// CHECK-NEXT:      "fusion.yield"(%[[RELU]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_constants_stay_in_group(%arg0: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32> {
  %int1 = torch.constant.int 1
  %float1 = torch.constant.float 1.000000e+00
  %0 = torch.aten.add.Scalar %arg0, %float1, %int1 : !torch.vtensor<[4,16],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,16],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  return %1 : !torch.vtensor<[4,16],f32>
}

// -----

// A group nobody reads is erased.

// CHECK-LABEL: func.func @fuse_dead_group_erased
// CHECK-SAME:    (%[[A:.+]]: !torch.vtensor<[8],f32>)
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%[[A]]) ({
// CHECK-NEXT:    ^bb0(%[[X:.+]]: !torch.vtensor<[8],f32>):
// CHECK-NEXT:      %[[NEG:.+]] = torch.aten.neg %[[X]]
// CHECK-NEXT:      "fusion.yield"(%[[NEG]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_dead_group_erased(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.neg %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %1 : !torch.vtensor<[8],f32>
}
