// RUN: not mlirfuse-opt %s 2>&1 | filecheck %s
// With --split-input-file the location still counts lines of the whole
// file, and the chunk that parses is still printed.
// RUN: not mlirfuse-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=SPLIT

// Unparsable IR is a located diagnostic and exit code 1: no traceback.

// CHECK-NOT:   Traceback
// CHECK:       syntax-error.mlir:25:10: error: use of undeclared SSA value name
// CHECK-NOT:   Traceback
// CHECK-NOT:   func.func

// SPLIT-NOT:   Traceback
// SPLIT-DAG:   syntax-error.mlir:25:10: error: use of undeclared SSA value name
// SPLIT-DAG:   func.func @parses
// SPLIT-NOT:   Traceback

func.func @parses(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  return %arg0 : !torch.vtensor<[8],f32>
}

// -----

func.func @does_not_parse(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  return %undefined : !torch.vtensor<[8],f32>
}
