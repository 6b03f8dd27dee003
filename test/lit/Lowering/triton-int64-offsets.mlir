// RUN: mlirfuse-opt %s --split-input-file --mlirfuse-pipeline --emit-triton | filecheck %s

// 64-bit offsets where a tensor the kernel touches holds more than 2^31 - 1
// elements (issue 21 item 5), 32-bit everywhere else: the program's first
// element is computed in int64, so every index and offset derived from it is.

// [65536, 32767] is 2147418112 elements, under 2^31 - 1: the 32-bit form.
// CHECK-LABEL: def fused_exp_0(
// CHECK-NEXT:     xoffset = tl.program_id(0) * XBLOCK
// CHECK-NEXT:     xindex = xoffset + tl.arange(0, XBLOCK)
func.func @fuse_exp_just_under(%x: !torch.vtensor<[65536,32767],f32>) -> !torch.vtensor<[65536,32767],f32> {
  %0 = torch.aten.exp %x : !torch.vtensor<[65536,32767],f32> -> !torch.vtensor<[65536,32767],f32>
  return %0 : !torch.vtensor<[65536,32767],f32>
}

// -----

// [65536, 32769] is 2147549184 elements: int64.
// CHECK-LABEL: def fused_exp_0(
// CHECK-NEXT:     xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
// CHECK-NEXT:     xindex = xoffset + tl.arange(0, XBLOCK)
func.func @fuse_exp_past_int32(%x: !torch.vtensor<[65536,32769],f32>) -> !torch.vtensor<[65536,32769],f32> {
  %0 = torch.aten.exp %x : !torch.vtensor<[65536,32769],f32> -> !torch.vtensor<[65536,32769],f32>
  return %0 : !torch.vtensor<[65536,32769],f32>
}

// -----

// An input past 2^31 - 1 elements read through a small iteration space (one
// column of a huge matrix: row * stride wraps in int32): int64 as well.
// CHECK-LABEL: def fused_select_exp_0(
// CHECK-NEXT:     xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
func.func @fuse_column_of_a_huge_input(%x: !torch.vtensor<[70000,40000],f32>) -> !torch.vtensor<[70000],f32> {
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %0 = torch.aten.select.int %x, %int1, %int0 : !torch.vtensor<[70000,40000],f32>, !torch.int, !torch.int -> !torch.vtensor<[70000],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[70000],f32> -> !torch.vtensor<[70000],f32>
  return %1 : !torch.vtensor<[70000],f32>
}

// -----

// A reduction over 2^31 + 65536 elements: its rows' offset and the column base are int64.
// CHECK-LABEL: def fused_exp_sum_0(
// CHECK-NEXT:     xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
// CHECK:          rbase = tl.arange(0, RBLOCK)[None, :].to(tl.int64)
func.func @fuse_wide_sum(%x: !torch.vtensor<[65536,32769],f32>) -> !torch.vtensor<[65536,1],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %none = torch.constant.none
  %1 = torch.aten.exp %x : !torch.vtensor<[65536,32769],f32> -> !torch.vtensor<[65536,32769],f32>
  %2 = torch.aten.sum.dim_IntList %1, %0, %true, %none : !torch.vtensor<[65536,32769],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[65536,1],f32>
  return %2 : !torch.vtensor<[65536,1],f32>
}

// -----

// A GEMM whose result passes 2^31 - 1 elements (a 32k-vocabulary head over
// 65536 tokens: [65536, 32768] is 2^31): a Triton GEMM (once refused to
// ATen) with int64 rows, columns, K and batch indices.
// CHECK-LABEL: def fused_linear_0(
// CHECK:          rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
// CHECK-NEXT:     rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
// CHECK:          rk = (k + tl.arange(0, BLOCK_K)).to(tl.int64)
func.func @fuse_wide_linear(%x: !torch.vtensor<[65536,64],bf16>, %w: !torch.vtensor<[32768,64],bf16>) -> !torch.vtensor<[65536,32768],bf16> {
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[65536,64],bf16>, !torch.vtensor<[32768,64],bf16>, !torch.none -> !torch.vtensor<[65536,32768],bf16>
  return %0 : !torch.vtensor<[65536,32768],bf16>
}

// -----

// The same head one row short of 2^31 elements ([65535, 32768]): the 32-bit form.
// CHECK-LABEL: def fused_linear_0(
// CHECK:          rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
// CHECK-NEXT:     rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
// CHECK:          rk = k + tl.arange(0, BLOCK_K)
func.func @fuse_linear_just_under(%x: !torch.vtensor<[65535,64],bf16>, %w: !torch.vtensor<[32768,64],bf16>) -> !torch.vtensor<[65535,32768],bf16> {
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[65535,64],bf16>, !torch.vtensor<[32768,64],bf16>, !torch.none -> !torch.vtensor<[65535,32768],bf16>
  return %0 : !torch.vtensor<[65535,32768],bf16>
}

// -----

// Attention over q, k, v of [64, 32, 8192, 128] (2^31 elements each): int64
// batch, query and key indices.
// CHECK-LABEL: def fused_scaled_dot_product_attention_0(
// CHECK:          pid_b = (tl.program_id(1)).to(tl.int64)
// CHECK:          offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]).to(tl.int64)
// CHECK:          offs_n = (start_n + tl.arange(0, BLOCK_N)[None, :]).to(tl.int64)
func.func @fuse_wide_attention(%q: !torch.vtensor<[64,32,8192,128],bf16>, %k: !torch.vtensor<[64,32,8192,128],bf16>, %v: !torch.vtensor<[64,32,8192,128],bf16>) -> !torch.vtensor<[64,32,8192,128],bf16> {
  %none = torch.constant.none
  %float0 = torch.constant.float 0.000000e+00
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %none, %float0, %true, %none, %false : !torch.vtensor<[64,32,8192,128],bf16>, !torch.vtensor<[64,32,8192,128],bf16>, !torch.vtensor<[64,32,8192,128],bf16>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[64,32,8192,128],bf16>
  return %0 : !torch.vtensor<[64,32,8192,128],bf16>
}
