// RUN: not mlirfuse-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// --verify-diagnostics fails, naming file and line, when an expected
// diagnostic's text does not match what was produced, when one is expected
// but none comes, and when one comes that nobody expected.

// CHECK-NOT: Traceback
// CHECK-DAG: verify-diagnostics-mismatch.mlir:17: error: expected error "refers to kernel @missing which does not exist" was not produced
// CHECK-DAG: verify-diagnostics-mismatch.mlir:17:8: error: unexpected error: 'fusion.launch' op refers to unknown kernel @missing
// CHECK-DAG: verify-diagnostics-mismatch.mlir:25: error: expected error "never produced" was not produced
// CHECK-DAG: verify-diagnostics-mismatch.mlir:31:8: error: unexpected error: 'fusion.launch' op refers to unknown kernel @also_missing
// CHECK-NOT: Traceback

func.func @wrong_text(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // The verifier's message is "refers to unknown kernel @missing".
  // expected-error @+1 {{refers to kernel @missing which does not exist}}
  %0 = "fusion.launch"(%arg0) {kernel = @missing} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @not_produced(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{never produced}}
  return %arg0 : !torch.vtensor<[8],f32>
}

// -----

func.func @unexpected(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.launch"(%arg0) {kernel = @also_missing} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
