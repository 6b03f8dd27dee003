// RUN: mlirfuse-opt %s --fusion-fuse-elementwise -o %t > %t.stdout
// RUN: filecheck %s < %t
// With -o nothing goes to stdout.
// RUN: test ! -s %t.stdout

// CHECK-LABEL: func.func @f
// CHECK:         "fusion.group"
// CHECK:           torch.aten.exp

func.func @f(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}
