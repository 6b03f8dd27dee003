// Malformed pass options and pipelines are reported, with exit code 1.

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(fusion-sink-exit-reshapes{bogus=1})' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN-NOT: Traceback
// UNKNOWN:     <pass-pipeline>:1:42: error: pass 'fusion-sink-exit-reshapes' has no option 'bogus' (options: none)
// UNKNOWN-NOT: Traceback

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(fusion-sink-exit-reshapes{bogus})' 2>&1 | filecheck %s --check-prefix=NOVALUE
// NOVALUE-NOT: Traceback
// NOVALUE:     <pass-pipeline>:1:42: error: option 'bogus' of pass 'fusion-sink-exit-reshapes' must be key=value

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(mlirfuse-pipeline{x=1})' 2>&1 | filecheck %s --check-prefix=PIPELINE
// PIPELINE-NOT: Traceback
// PIPELINE:     <pass-pipeline>:1:34: error: pipeline 'mlirfuse-pipeline' has no option 'x' (options: matmul-slices, max-terms, max-args, {{.*}})

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(fusion-outline' 2>&1 | filecheck %s --check-prefix=UNBALANCED
// UNBALANCED-NOT: Traceback
// UNBALANCED:     error: unbalanced '(' or '{' in pass pipeline

func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
