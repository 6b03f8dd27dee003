// RUN: mlirfuse-opt < %s | filecheck %s
// RUN: mlirfuse-opt - --fusion-fuse-elementwise < %s | filecheck %s --check-prefix=FUSED
// Diagnostics for stdin input are located in "<stdin>".
// RUN: echo "func.func @bad() {" | not mlirfuse-opt 2>&1 | filecheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @from_stdin
// CHECK-NEXT:    torch.aten.exp

// FUSED-LABEL: func.func @from_stdin
// FUSED-NEXT:    "fusion.group"

// ERR-NOT: Traceback
// ERR:     <stdin>:1:19: error:
// ERR-NOT: Traceback

func.func @from_stdin(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
