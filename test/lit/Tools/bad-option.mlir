// Malformed pass options and pipelines are reported, with exit code 1.

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(fusion-outline{bogus=1})' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN-NOT: Traceback
// UNKNOWN:     <pass-pipeline>:1:31: error: pass 'fusion-outline' has no option 'bogus' (options: none)
// UNKNOWN-NOT: Traceback

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(fusion-outline{bogus})' 2>&1 | filecheck %s --check-prefix=NOVALUE
// NOVALUE-NOT: Traceback
// NOVALUE:     <pass-pipeline>:1:31: error: option 'bogus' of pass 'fusion-outline' must be key=value

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(mlirfuse-pipeline{x=1})' 2>&1 | filecheck %s --check-prefix=PIPELINE
// PIPELINE-NOT: Traceback
// PIPELINE:     <pass-pipeline>:1:34: error: pipeline 'mlirfuse-pipeline' has no option 'x' (options: matmul-slices, max-args, {{.*}})

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(fusion-outline' 2>&1 | filecheck %s --check-prefix=UNBALANCED
// UNBALANCED-NOT: Traceback
// UNBALANCED:     error: unbalanced '(' or '{' in pass pipeline

func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
