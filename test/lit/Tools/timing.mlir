// RUN: mlirfuse-opt %s --mlirfuse-pipeline --mlir-timing -o /dev/null 2>&1 | filecheck %s

// The timing report is keyed by pass name, one line per pipeline step.

// CHECK:       Execution time report
// CHECK:       Total Execution Time
// CHECK:       Wall Time
// CHECK:         fusion-fuse-vertical
// CHECK:         fusion-fuse-horizontal
// CHECK:         fusion-fuse-concat
// CHECK:         fusion-sink-exit-reshapes
// CHECK:         fusion-mark-persistent
// CHECK:         fusion-canonicalize
// CHECK:         fusion-outline
// CHECK:         Total

func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
