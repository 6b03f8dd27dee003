// A pass's options are spelled the same as a flag (--pass='k=v ...') and in
// --pass-pipeline (pass{k=v ...}); pipelines take their stages' options.

// RUN: mlirfuse-opt %s --fusion-fuse-vertical='max-group-size=2' | filecheck %s --check-prefix=SIZE2
// RUN: mlirfuse-opt %s --pass-pipeline='builtin.module(fusion-fuse-vertical{max-group-size=2})' | filecheck %s --check-prefix=SIZE2
// RUN: mlirfuse-opt %s --fusion-fuse-vertical=max-group-size=2 --fusion-canonicalize | filecheck %s --check-prefix=SIZE2
// SIZE2-LABEL: func.func @chain
// SIZE2:         %[[A:.+]] = "fusion.group"(%arg0)
// SIZE2:           torch.aten.exp
// SIZE2-NEXT:      torch.aten.neg
// SIZE2:         "fusion.group"(%[[A]])
// SIZE2:           torch.aten.tanh

// RUN: mlirfuse-opt %s --mlirfuse-pipeline='max-group-size=2' | filecheck %s --check-prefix=PIPELINE
// RUN: mlirfuse-opt %s --pass-pipeline='builtin.module(mlirfuse-pipeline{max-group-size=2})' | filecheck %s --check-prefix=PIPELINE
// PIPELINE-COUNT-2: "fusion.kernel"
// PIPELINE-NOT:     "fusion.kernel"

// RUN: mlirfuse-opt %s --mlirfuse-pipeline='explain=true max-group-size=2' | filecheck %s --check-prefix=EXPLAIN
// EXPLAIN: "fusion.launch"(%arg0) {fusion.explain = ["consumer fusion.group: group size limit (3 > 2)"]

// Misspelt or mistyped options: located in what was typed, naming the valid ones.

// RUN: not mlirfuse-opt %s --fusion-fuse-vertical='max-group-sise=2' 2>&1 | filecheck %s --check-prefix=FLAG-TYPO
// FLAG-TYPO:      <command-line>:1:24: error: pass 'fusion-fuse-vertical' has no option 'max-group-sise' (options: max-args, max-group-size, recompute-analyses); did you mean 'max-group-size'?
// FLAG-TYPO-NEXT: --fusion-fuse-vertical=max-group-sise=2
// FLAG-TYPO-NEXT: {{^                       \^$}}

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(cse, fusion-fuse-vertical{max-arg=4})' 2>&1 | filecheck %s --check-prefix=PIPELINE-TYPO
// PIPELINE-TYPO:      <pass-pipeline>:1:42: error: pass 'fusion-fuse-vertical' has no option 'max-arg' (options: max-args, max-group-size, recompute-analyses); did you mean 'max-args'?
// PIPELINE-TYPO-NEXT: builtin.module(cse, fusion-fuse-vertical{max-arg=4})
// PIPELINE-TYPO-NEXT: {{^                                         \^$}}

// RUN: not mlirfuse-opt %s --mlirfuse-pipeline='max-args=64 explian=true' 2>&1 | filecheck %s --check-prefix=PIPELINE-FLAG-TYPO
// PIPELINE-FLAG-TYPO: <command-line>:1:33: error: pipeline 'mlirfuse-pipeline' has no option 'explian' (options: {{.*}}explain{{.*}}); did you mean 'explain'?

// RUN: not mlirfuse-opt %s --fusion-fuse-vertical='max-args=lots' 2>&1 | filecheck %s --check-prefix=TYPE
// TYPE: <command-line>:1:24: error: option 'max-args' of pass 'fusion-fuse-vertical' expects int, got 'lots'

// RUN: not mlirfuse-opt %s --fusion-fuse-verticl 2>&1 | filecheck %s --check-prefix=FLAG-NAME
// FLAG-NAME: error: unrecognized arguments: --fusion-fuse-verticl (did you mean '--fusion-fuse-vertical'?)

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(fusion-fuse-verticl)' 2>&1 | filecheck %s --check-prefix=PIPELINE-NAME
// PIPELINE-NAME:      <pass-pipeline>:1:16: error: unknown pass or malformed pipeline element 'fusion-fuse-verticl' (did you mean 'fusion-fuse-vertical'?): 'fusion-fuse-verticl' does not refer to a registered pass or pass pipeline
// PIPELINE-NAME-NEXT: builtin.module(fusion-fuse-verticl)
// PIPELINE-NAME-NEXT: {{^               \^$}}

// RUN: not mlirfuse-opt %s --pass-pipeline='builtin.module(cse)' --fusion-outline 2>&1 | filecheck %s --check-prefix=BOTH
// BOTH: error: --pass-pipeline cannot be combined with pass flags (--fusion-outline ...)

func.func @chain(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.neg %0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %2 = torch.aten.tanh %1 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %2 : !torch.vtensor<[8],f32>
}
