// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(mlirfuse-pipeline, fusion-cost)' | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(mlirfuse-pipeline, fusion-cost{target=sm_80})' | filecheck %s --check-prefix=A100
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-vertical, fusion-cost)' | filecheck %s --check-prefix=GROUP
// RUN: not mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-cost{target=sm_70})' 2>&1 | filecheck %s --check-prefix=BAD

// The cost model (mlirfuse/analysis/cost.py) on the IR: each kernel (or
// group) gets the bytes one launch reads and writes, its FLOPs and its
// roofline time; the module the totals of one call (launches and unfused ATen
// calls) against the lower bound (each argument read once, each result
// written once). Every number below is computed by hand in the comments.

// exp(a) + b, b broadcast over rows: reads a (4*8*4 = 128 bytes) and b once
// (32), writes 128; one FLOP per element per op (64). One kernel moving
// exactly the lower bound.
// CHECK-LABEL: module attributes {fusion.cost = {bytes = 288 : i64, bytes_lower_bound = 288 : i64, flops = 64 : i64
// CHECK:         "fusion.kernel"
// CHECK:         fusion.cost = {bytes_read = 160 : i64, bytes_written = 128 : i64, flops = 64 : i64, time_ns = 0 : i64}
// Before fusion-outline the group carries the same numbers, and the module
// counts it as one launch.
// GROUP-LABEL: module attributes {fusion.cost = {bytes = 288 : i64, bytes_lower_bound = 288 : i64, flops = 64 : i64
// GROUP:         func.func @pointwise_broadcast
// GROUP:         "fusion.group"
// GROUP:         fusion.cost = {bytes_read = 160 : i64, bytes_written = 128 : i64, flops = 64 : i64
func.func @pointwise_broadcast(%a: !torch.vtensor<[4,8],f32>, %b: !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.add.Tensor %0, %b, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// Roofline time at a real size: exp of a 1024x1024 f32 tensor moves 8 MiB
// (8388608 bytes): 2504 ns at the H100's 3.35 TB/s, 4114 ns at the A100's
// 2.039 TB/s; its 2^20 FLOPs take 16 ns at 67 TFLOP/s, so bytes bound it.
// CHECK-LABEL: module attributes {fusion.cost = {bytes = 8388608 : i64, bytes_lower_bound = 8388608 : i64, flops = 1048576 : i64, lower_bound_time_ns = 2504 : i64, time_ns = 2504 : i64}}
// A100-LABEL: module attributes {fusion.cost = {bytes = 8388608 : i64, bytes_lower_bound = 8388608 : i64, flops = 1048576 : i64, lower_bound_time_ns = 4114 : i64, time_ns = 4114 : i64}}
func.func @roofline(%a: !torch.vtensor<[1024,1024],f32>) -> !torch.vtensor<[1024,1024],f32> {
  %0 = torch.aten.exp %a : !torch.vtensor<[1024,1024],f32> -> !torch.vtensor<[1024,1024],f32>
  return %0 : !torch.vtensor<[1024,1024],f32>
}

// -----

// linear(x, w) + b as one GEMM kernel: reads x (16*32*4 = 2048), w
// (64*32*4 = 8192) and b (256), writes 16*64*4 = 4096; 2*16*64*32 = 65536
// FLOPs in the GEMM and 1024 in the bias add.
// CHECK-LABEL: module attributes {fusion.cost = {bytes = 14592 : i64, bytes_lower_bound = 14592 : i64, flops = 66560 : i64
// CHECK:         fusion.cost = {bytes_read = 10496 : i64, bytes_written = 4096 : i64, flops = 66560 : i64
// CHECK-SAME:    kind = "matmul"
func.func @gemm(%x: !torch.vtensor<[16,32],f32>, %w: !torch.vtensor<[64,32],f32>, %b: !torch.vtensor<[64],f32>) -> !torch.vtensor<[16,64],f32> {
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[16,32],f32>, !torch.vtensor<[64,32],f32>, !torch.vtensor<[64],f32> -> !torch.vtensor<[16,64],f32>
  return %0 : !torch.vtensor<[16,64],f32>
}

// -----

// A kernel reading a third of its input through a slice (q of a fused qkv):
// 4*8*4 = 128 bytes read of the 384 the argument holds; the lower bound
// counts the whole argument (the caller hands it over whole), so this one
// program moves less than its bound says: the bound is per argument.
// CHECK-LABEL: module attributes {fusion.cost = {bytes = 256 : i64, bytes_lower_bound = 512 : i64, flops = 32 : i64
// CHECK:         fusion.cost = {bytes_read = 128 : i64, bytes_written = 128 : i64, flops = 32 : i64
func.func @slice_read(%qkv: !torch.vtensor<[4,24],f32>) -> !torch.vtensor<[4,8],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int8 = torch.constant.int 8
  %0 = torch.aten.slice.Tensor %qkv, %int1, %int0, %int8, %int1 : !torch.vtensor<[4,24],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// An unfused op (logcumsumexp stays an ATen call) counts in the module's total as
// its operand read once and its result written once (128 + 128), beside the
// kernel after it (128 + 128): 512 bytes against a lower bound of 256.
// CHECK-LABEL: module attributes {fusion.cost = {bytes = 512 : i64, bytes_lower_bound = 256 : i64
func.func @unfused(%a: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.logcumsumexp %a, %int1 : !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// Back-to-back GEMMs (one matmul-chain kernel): the hidden [8, 96] is never
// written or read back. Reads x (8*48*4 = 1536 bytes, once though both the
// first GEMM and the residual read it), w1 and w2 (18432 each), b1 (384),
// b2 (192): 38976; writes 1536. The lower bound, exactly. FLOPs: two GEMMs
// of 2*8*96*48 = 73728, the bias adds and silu over [8, 96] (768 + 768), the
// bias and residual adds over [8, 48] (384 + 384): 149760; bytes bound the
// time (40512 bytes at 3.35 TB/s: 12 ns).
// CHECK-LABEL: module attributes {fusion.cost = {bytes = 40512 : i64, bytes_lower_bound = 40512 : i64, flops = 149760 : i64
// CHECK:         fusion.cost = {bytes_read = 38976 : i64, bytes_written = 1536 : i64, flops = 149760 : i64, time_ns = 12 : i64}, kind = "matmul-chain"
func.func @chain(%x: !torch.vtensor<[8,48],f32>, %w1: !torch.vtensor<[96,48],f32>, %b1: !torch.vtensor<[96],f32>, %w2: !torch.vtensor<[48,96],f32>, %b2: !torch.vtensor<[48],f32>) -> !torch.vtensor<[8,48],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.linear %x, %w1, %b1 : !torch.vtensor<[8,48],f32>, !torch.vtensor<[96,48],f32>, !torch.vtensor<[96],f32> -> !torch.vtensor<[8,96],f32>
  %1 = torch.aten.silu %0 : !torch.vtensor<[8,96],f32> -> !torch.vtensor<[8,96],f32>
  %2 = torch.aten.linear %1, %w2, %b2 : !torch.vtensor<[8,96],f32>, !torch.vtensor<[48,96],f32>, !torch.vtensor<[48],f32> -> !torch.vtensor<[8,48],f32>
  %3 = torch.aten.add.Tensor %x, %2, %int1 : !torch.vtensor<[8,48],f32>, !torch.vtensor<[8,48],f32>, !torch.int -> !torch.vtensor<[8,48],f32>
  return %3 : !torch.vtensor<[8,48],f32>
}

// -----

// A convolution's FLOPs are its implicit GEMM's, 2 * N * Cout * Hout * Wout *
// Cin/groups * kh * kw = 2*75*18 = 2700, plus relu's 75; its kernel reads
// the input (1*2*5*5*4 = 200 bytes) and the weight (3*2*3*3*4 = 216) once and
// writes the result (1*3*5*5*4 = 300): the lower bound.
// CHECK-LABEL: module attributes {fusion.cost = {bytes = 716 : i64, bytes_lower_bound = 716 : i64, flops = 2775 : i64
// CHECK:         fusion.cost = {bytes_read = 416 : i64, bytes_written = 300 : i64, flops = 2775 : i64, time_ns = 0 : i64}, kind = "conv"
func.func @conv(%x: !torch.vtensor<[1,2,5,5],f32>, %w: !torch.vtensor<[3,2,3,3],f32>) -> !torch.vtensor<[1,3,5,5],f32> {
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.conv2d %x, %w, %none, %0, %0, %0, %int1 : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[3,2,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,3,5,5],f32>
  %2 = torch.aten.relu %1 : !torch.vtensor<[1,3,5,5],f32> -> !torch.vtensor<[1,3,5,5],f32>
  return %2 : !torch.vtensor<[1,3,5,5],f32>
}

// -----

// A `?` size: no cost for the kernel, none for the module.
// CHECK-LABEL: module {
// CHECK-NOT:     fusion.cost
func.func @dynamic(%a: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
  %0 = torch.aten.exp %a : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
  return %0 : !torch.vtensor<[?,8],f32>
}

// BAD: option 'target' of pass 'fusion-cost' expects one of sm_80, sm_90, got 'sm_70'
