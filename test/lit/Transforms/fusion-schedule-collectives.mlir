// RUN: mlirfuse-opt %s --split-input-file --fusion-schedule-collectives | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(mlirfuse-pipeline)' | filecheck %s --check-prefix=PIPE

// A row-parallel linear's all_reduce, as the FX importer spells Dynamo's tensor-parallel graph: issued
// right after the GEMM it reduces, waited right before the add reading it; the relu of %x, which needs
// neither, now runs between them.
// CHECK-LABEL: func.func @overlap
// CHECK:      %[[MM:.*]] = torch.aten.mm
// CHECK-NEXT: %[[AR:.*]] = torch.operator "torch._c10d_functional.all_reduce"(%[[MM]]
// CHECK-NEXT: torch.aten.relu %arg0
// CHECK-NEXT: torch.aten.sigmoid
// CHECK-NEXT: %[[W:.*]] = torch.operator "torch._c10d_functional.wait_tensor"(%[[AR]])
// CHECK-NEXT: torch.aten.add.Tensor %[[W]]
func.func @overlap(%x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[8,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %str = torch.constant.str "sum"
  %str_0 = torch.constant.str "0"
  %int1 = torch.constant.int 1
  %0 = torch.aten.mm %x, %w : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.relu %x : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %2 = torch.operator "torch._c10d_functional.all_reduce"(%0, %str, %str_0) : (!torch.vtensor<[4,8],f32>, !torch.str, !torch.str) -> !torch.vtensor<[4,8],f32>
  %3 = torch.operator "torch._c10d_functional.wait_tensor"(%2) : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
  %4 = torch.aten.sigmoid %1 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %5 = torch.aten.add.Tensor %3, %4, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  return %5 : !torch.vtensor<[4,8],f32>
}

// -----

// Limits: two collectives keep their order (the second issue is not hoisted above the first, the first
// wait does not sink below the second), and a wait whose result is only returned sinks to the return.
// CHECK-LABEL: func.func @order
// CHECK:      %[[A:.*]] = torch.operator "torch._c10d_functional.all_reduce"(%arg0
// CHECK-NEXT: %[[B:.*]] = torch.operator "torch._c10d_functional.all_reduce"(%arg1
// CHECK-NEXT: torch.aten.relu %arg0
// CHECK-NEXT: %[[WA:.*]] = torch.operator "torch._c10d_functional.wait_tensor"(%[[A]])
// CHECK-NEXT: %[[WB:.*]] = torch.operator "torch._c10d_functional.wait_tensor"(%[[B]])
// CHECK-NEXT: return %[[WA]], %[[WB]]
func.func @order(%x: !torch.vtensor<[4],f32>, %y: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %str = torch.constant.str "sum"
  %str_0 = torch.constant.str "0"
  %0 = torch.operator "torch._c10d_functional.all_reduce"(%x, %str, %str_0) : (!torch.vtensor<[4],f32>, !torch.str, !torch.str) -> !torch.vtensor<[4],f32>
  %1 = torch.operator "torch._c10d_functional.wait_tensor"(%0) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  %2 = torch.operator "torch._c10d_functional.all_reduce"(%y, %str, %str_0) : (!torch.vtensor<[4],f32>, !torch.str, !torch.str) -> !torch.vtensor<[4],f32>
  %3 = torch.operator "torch._c10d_functional.wait_tensor"(%2) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  %4 = torch.aten.relu %x : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %1, %3, %4 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// In the pipeline (its last stage): the collectives stay ATen calls outside every kernel, and the softmax
// kernel, which needs neither the GEMM's reduced result nor anything computed from it, moves in front of the
// wait: it runs while the all_reduce is in flight. The mul reading the result stays after the wait.
// CHECK-LABEL: func.func @overlap_kernels
// PIPE-LABEL: func.func @overlap_kernels
// PIPE:      %[[MM:.*]] = "fusion.launch"(%arg0, %arg1) {kernel = @fused_mm_0}
// PIPE-NEXT: %[[AR:.*]] = torch.operator "torch._c10d_functional.all_reduce"(%[[MM]]
// PIPE-NEXT: %[[SM:.*]] = "fusion.launch"(%arg0) {kernel = @fused_exp_amax_sub_sum_div_2}
// PIPE-NEXT: %[[W:.*]] = torch.operator "torch._c10d_functional.wait_tensor"(%[[AR]])
// PIPE-NEXT: %[[MUL:.*]] = "fusion.launch"(%[[W]]) {kernel = @fused_mul_1}
// PIPE-NEXT: return %[[MUL]], %[[SM]]
func.func @overlap_kernels(%x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[8,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) {
  %str = torch.constant.str "sum"
  %str_0 = torch.constant.str "0"
  %int1 = torch.constant.int 1
  %float2 = torch.constant.float 2.000000e+00
  %none = torch.constant.none
  %0 = torch.aten.mm %x, %w : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.operator "torch._c10d_functional.all_reduce"(%0, %str, %str_0) : (!torch.vtensor<[4,8],f32>, !torch.str, !torch.str) -> !torch.vtensor<[4,8],f32>
  %2 = torch.operator "torch._c10d_functional.wait_tensor"(%1) : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
  %3 = torch.aten.mul.Scalar %2, %float2 : !torch.vtensor<[4,8],f32>, !torch.float -> !torch.vtensor<[4,8],f32>
  %4 = torch.aten.exp %x : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %5 = torch.aten.softmax.int %4, %int1, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,8],f32>
  return %3, %5 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>
}
