// An unknown pass, in a pipeline or as a flag, is a user error: a message
// naming it and exit code 1, never a traceback.

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(fusion-bogus)' 2>&1 | filecheck %s --check-prefix=PIPELINE
// PIPELINE-NOT: Traceback
// PIPELINE:     <pass-pipeline>:1:16: error: unknown pass or malformed pipeline element 'fusion-bogus'
// PIPELINE-NOT: Traceback
// PIPELINE-NOT: func.func

// Our passes and upstream ones mix in one pipeline; the unknown one is named.
// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(fusion-fuse-elementwise, bogus-upstream-pass, cse)' 2>&1 | filecheck %s --check-prefix=MIXED
// MIXED-NOT: Traceback
// MIXED:     <pass-pipeline>:1:41: error: unknown pass or malformed pipeline element 'bogus-upstream-pass'
// MIXED-NOT: Traceback

// RUN: not mlirfuse-opt %s --fusion-bogus 2>&1 | filecheck %s --check-prefix=FLAG
// FLAG-NOT: Traceback
// FLAG:     mlirfuse-opt: error: unrecognized arguments: --fusion-bogus

func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
