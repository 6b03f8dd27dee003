// RUN: mlirfuse-opt %s --split-input-file --verify-analyses --test-dependence | filecheck %s
// RUN: not mlirfuse-opt %s --split-input-file --verify-analyses --pass-pipeline='builtin.module(test-dependence{corrupt=true})' 2>&1 | filecheck %s --check-prefix=CORRUPT

// The dependence analysis answers "does b depend on a" through def-use
// chains, including through ops that are not tagged (the mm).

// CHECK-LABEL: func.func @chain
// CHECK:         torch.aten.exp {{.*}}test.depends = "", test.tag = "a"
// CHECK:         torch.aten.neg {{.*}}test.depends = "a", test.tag = "b"
// CHECK:         torch.aten.sin {{.*}}test.depends = "", test.tag = "c"
// CHECK:         torch.aten.add.Tensor {{.*}}test.depends = "a, b, c", test.tag = "d"
func.func @chain(%arg0: !torch.vtensor<[8,8],f32>) -> !torch.vtensor<[8,8],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %arg0 {test.tag = "a"} : !torch.vtensor<[8,8],f32> -> !torch.vtensor<[8,8],f32>
  %1 = torch.aten.mm %0, %0 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[8,8],f32>
  %2 = torch.aten.neg %1 {test.tag = "b"} : !torch.vtensor<[8,8],f32> -> !torch.vtensor<[8,8],f32>
  %3 = torch.aten.sin %arg0 {test.tag = "c"} : !torch.vtensor<[8,8],f32> -> !torch.vtensor<[8,8],f32>
  %4 = torch.aten.add.Tensor %2, %3, %int1 {test.tag = "d"} : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8,8],f32>, !torch.int -> !torch.vtensor<[8,8],f32>
  return %4 : !torch.vtensor<[8,8],f32>
}

// A pass that moves ops without telling the analysis (corrupt=true swaps
// the independent a and c), yet claims to preserve it, is caught by
// --verify-analyses with a diff of the order.

// CORRUPT: error: --verify-analyses: after 'test-dependence' the maintained analyses differ from recomputed ones:
// CORRUPT-NEXT: dependence: block 0: position 1 holds 'torch.aten.exp' #2 in the maintained order but 'torch.aten.sin' #1 in the IR

// -----

// Independent ops depend on nothing.

// CHECK-LABEL: func.func @independent
// CHECK:         torch.aten.exp {{.*}}test.depends = "", test.tag = "x"
// CHECK:         torch.aten.exp {{.*}}test.depends = "", test.tag = "y"
func.func @independent(%arg0: !torch.vtensor<[8],f32>, %arg1: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %0 = torch.aten.exp %arg0 {test.tag = "x"} : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.exp %arg1 {test.tag = "y"} : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0, %1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}
