// RUN: not mlirfuse-opt %s --mlirfuse-pipeline 2>&1 | filecheck %s
// RUN: not mlirfuse-opt %s --mlirfuse-pipeline --emit-triton 2>&1 | filecheck %s

// A group of kind "scan" must compute a scan (and no reduction): the fuser
// and the scan lowering rely on it.

// CHECK-NOT: Traceback
func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // CHECK: kind-scan-without-scan.mlir:[[# @LINE + 1]]:8: error: 'fusion.group' op of kind "scan" must hold a scan and no reduction
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "scan"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
