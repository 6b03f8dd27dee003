// RUN: mlirfuse-opt %s --verify-analyses --test-alias | filecheck %s --check-prefix=BEFORE
// RUN: mlirfuse-opt %s --verify-analyses --pass-pipeline='builtin.module(fusion-fuse-elementwise, test-alias)' | filecheck %s --check-prefix=AFTER

// fusion-fuse-elementwise keeps the alias and shape analyses current (it
// declares them preserved): the group's results take over the facts of the
// values they replace and the fused ops' entries are dropped.
// --verify-analyses recomputes both after the pass and would fail with a
// diff if the maintained ones were stale. test-alias reads the maintained
// analysis: the transpose's storage class was neg's result, now it is the
// group's.

// BEFORE-LABEL: func.func @fused_values_keep_their_facts
// BEFORE:         torch.aten.transpose.int {{.*}}test.alias_class = "neg"
// AFTER-LABEL:  func.func @fused_values_keep_their_facts
// AFTER:          "fusion.group"
// AFTER:          torch.aten.transpose.int {{.*}}test.alias_class = "fusion.group", test.may_alias = "", test.mutated = false, test.tag = "t"
// AFTER-NEXT:     torch.aten.mm {{.*}}test.alias_class = "mm"
func.func @fused_values_keep_their_facts(%a: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[4,4],f32>) -> (!torch.vtensor<[8,4],f32>, !torch.vtensor<[4,8],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %a {test.tag = "exp"} : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.neg %0 {test.tag = "neg"} : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.transpose.int %1, %int0, %int1 {test.tag = "t"} : !torch.vtensor<[4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  %3 = torch.aten.mm %2, %w {test.tag = "mm"} : !torch.vtensor<[8,4],f32>, !torch.vtensor<[4,4],f32> -> !torch.vtensor<[8,4],f32>
  return %3, %0 : !torch.vtensor<[8,4],f32>, !torch.vtensor<[4,8],f32>
}
