// RUN: mlirfuse-opt %s --fusion-fuse-elementwise | filecheck %s

// Horizontal fusion merges sin and exp (both read %x) where exp was, moving
// sin's reader (%2, which views sin's result: not merged with it) after
// them, past mul. The next pair, (%2, mul) reading %u, is now out of order;
// merged as listed, the group sat before the sin/exp group it reads
// ("operand does not dominate this use").

// CHECK-LABEL: func.func @fuse_siblings_reordered_by_a_merge
// CHECK:         %[[SE:.+]]:2 = "fusion.group"(%arg0)
// CHECK:           torch.aten.sin
// CHECK:           torch.aten.exp
// CHECK:         %[[AM:.+]]:2 = "fusion.group"(%arg1, %[[SE]]#1)
// CHECK:           torch.aten.mul.Scalar
// CHECK:           torch.aten.unsqueeze
// CHECK:           torch.aten.add.Tensor
// CHECK:         return %[[AM]]#0, %[[AM]]#1, %[[SE]]#0
func.func @fuse_siblings_reordered_by_a_merge(%x: !torch.vtensor<[4,4],f32>, %u: !torch.vtensor<[2,4,4],f32>) -> (!torch.vtensor<[2,4,4],f32>, !torch.vtensor<[2,4,4],f32>, !torch.vtensor<[4,4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %0 = torch.aten.sin %x : !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  %1 = torch.aten.unsqueeze %0, %int0 : !torch.vtensor<[4,4],f32>, !torch.int -> !torch.vtensor<[1,4,4],f32>
  %2 = torch.aten.add.Tensor %1, %u, %int1 : !torch.vtensor<[1,4,4],f32>, !torch.vtensor<[2,4,4],f32>, !torch.int -> !torch.vtensor<[2,4,4],f32>
  %3 = torch.aten.mul.Scalar %u, %int2 : !torch.vtensor<[2,4,4],f32>, !torch.int -> !torch.vtensor<[2,4,4],f32>
  %4 = torch.aten.exp %x : !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  return %2, %3, %4 : !torch.vtensor<[2,4,4],f32>, !torch.vtensor<[2,4,4],f32>, !torch.vtensor<[4,4],f32>
}
