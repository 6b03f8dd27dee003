// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --fusion-fuse-elementwise | filecheck %s

// The integer and float special ops join groups like any elementwise op:
// floor division, remainder, shifts, bitwise ops with a scalar (also in the
// `torch.operator` spelling the importer gives ops torch-mlir does not
// define), pow, atan2, rounding, clamp with tensor bounds. The limits below
// name why an op stays outside.

// CHECK-LABEL: func.func @fuse_integer_division_and_shifts
// CHECK:         "fusion.group"
// CHECK:           torch.aten.floor_divide
// CHECK:           torch.aten.remainder.Scalar
// CHECK:           torch.aten.__lshift__.Scalar
// CHECK:           torch.aten.remainder.Tensor
// CHECK:           torch.operator "torch.aten.__rshift__.Tensor"
// CHECK:           torch.operator "torch.aten.__or__.Scalar"
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_integer_division_and_shifts(%arg0: !torch.vtensor<[4,8],si32>, %arg1: !torch.vtensor<[4,8],si32>) -> (!torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>) {
  %0 = torch.aten.floor_divide %arg0, %arg1 : !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32> -> !torch.vtensor<[4,8],si32>
  %int3 = torch.constant.int 3
  %1 = torch.aten.remainder.Scalar %0, %int3 : !torch.vtensor<[4,8],si32>, !torch.int -> !torch.vtensor<[4,8],si32>
  %int2 = torch.constant.int 2
  %2 = torch.aten.__lshift__.Scalar %1, %int2 : !torch.vtensor<[4,8],si32>, !torch.int -> !torch.vtensor<[4,8],si32>
  %3 = torch.aten.remainder.Tensor %arg0, %arg1 : !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32> -> !torch.vtensor<[4,8],si32>
  %4 = torch.operator "torch.aten.__rshift__.Tensor"(%arg0, %arg1) : (!torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>) -> !torch.vtensor<[4,8],si32>
  %int5 = torch.constant.int 5
  %5 = torch.operator "torch.aten.__or__.Scalar"(%arg0, %int5) : (!torch.vtensor<[4,8],si32>, !torch.int) -> !torch.vtensor<[4,8],si32>
  return %2, %3, %4, %5 : !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>
}

// -----

// A Python scalar divisor with a rounding mode imports as NumToTensor: the
// 0-d tensor is made in the kernel.

// CHECK-LABEL: func.func @fuse_float_special_ops
// CHECK:         "fusion.group"
// CHECK:           torch.aten.pow.Tensor_Scalar
// CHECK:           torch.prim.NumToTensor.Scalar
// CHECK:           torch.aten.div.Tensor_mode
// CHECK:           torch.aten.atan2
// CHECK:           torch.aten.round
// CHECK:           torch.aten.clamp.Tensor
// CHECK:           torch.operator "torch.aten.copysign.Scalar"
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_float_special_ops(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) {
  %0 = torch.aten.atan2 %arg0, %arg1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.round %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %float2.500000e00 = torch.constant.float 2.500000e+00
  %2 = torch.aten.pow.Tensor_Scalar %arg1, %float2.500000e00 : !torch.vtensor<[4,8],f32>, !torch.float -> !torch.vtensor<[4,8],f32>
  %int2 = torch.constant.int 2
  %3 = torch.prim.NumToTensor.Scalar %int2 : !torch.int -> !torch.vtensor<[],si64>
  %str = torch.constant.str "floor"
  %4 = torch.aten.div.Tensor_mode %arg1, %3, %str : !torch.vtensor<[4,8],f32>, !torch.vtensor<[],si64>, !torch.str -> !torch.vtensor<[4,8],f32>
  %none = torch.constant.none
  %5 = torch.aten.clamp.Tensor %arg1, %arg0, %none : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.none -> !torch.vtensor<[4,8],f32>
  %float-1.000000e00 = torch.constant.float -1.000000e+00
  %6 = torch.operator "torch.aten.copysign.Scalar"(%arg1, %float-1.000000e00) : (!torch.vtensor<[4,8],f32>, !torch.float) -> !torch.vtensor<[4,8],f32>
  return %1, %2, %4, %5, %6 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>
}

// -----

// Why these stay outside: a division by a zero scalar (an error in eager for
// integers), a rounding mode eager does not have, an integer to a negative
// power (an error in eager), a shift of floats, an integer pow beyond the
// unrolled range, a torch.operator that is no elementwise op.

// CHECK-LABEL: func.func @no_fuse_limits
// CHECK:         fusion.explain = ["consumer torch.aten.floor_divide.Scalar: division by a zero scalar", "consumer torch.aten.div.Scalar_mode: rounding_mode='round'", "consumer torch.aten.pow.Tensor_Scalar: integer exponent -1 outside [0, 16]", "consumer torch.aten.pow.Tensor_Scalar: integer exponent 40 outside [0, 16]", "consumer torch.aten.__lshift__.Scalar: result is float32; eager computes the op for int64, int32, int16, int8, uint8 only"]
// CHECK:         torch.aten.floor_divide.Scalar
// CHECK:         torch.aten.div.Scalar_mode
// CHECK:         torch.aten.pow.Tensor_Scalar
// CHECK:         torch.aten.pow.Tensor_Scalar
// CHECK:         fusion.explain = ["consumer torch.aten.nextafter: unsupported op"]
// CHECK:         torch.aten.__lshift__.Scalar
// CHECK:         torch.operator "torch.aten.nextafter"
func.func @no_fuse_limits(%arg0: !torch.vtensor<[4,8],si32>, %arg1: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int-1 = torch.constant.int -1
  %int40 = torch.constant.int 40
  %str = torch.constant.str "round"
  %0 = torch.aten.neg %arg0 : !torch.vtensor<[4,8],si32> -> !torch.vtensor<[4,8],si32>
  %1 = torch.aten.floor_divide.Scalar %0, %int0 : !torch.vtensor<[4,8],si32>, !torch.int -> !torch.vtensor<[4,8],si32>
  %2 = torch.aten.div.Scalar_mode %0, %int2, %str : !torch.vtensor<[4,8],si32>, !torch.int, !torch.str -> !torch.vtensor<[4,8],si32>
  %3 = torch.aten.pow.Tensor_Scalar %0, %int-1 : !torch.vtensor<[4,8],si32>, !torch.int -> !torch.vtensor<[4,8],si32>
  %4 = torch.aten.pow.Tensor_Scalar %0, %int40 : !torch.vtensor<[4,8],si32>, !torch.int -> !torch.vtensor<[4,8],si32>
  %5 = torch.aten.neg %arg1 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %6 = torch.aten.__lshift__.Scalar %0, %int2 : !torch.vtensor<[4,8],si32>, !torch.int -> !torch.vtensor<[4,8],f32>
  %7 = torch.operator "torch.aten.nextafter"(%5, %5) : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
  return %1, %2, %3, %4, %6, %7 : !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>
}

// -----

// The tensor-tensor bitwise ops and shifts (the spellings of torch.bitwise_*
// of two int tensors) and bitwise_not join one group.

// CHECK-LABEL: func.func @fuse_bitwise_tensor_ops
// CHECK:         "fusion.group"(%arg0, %arg1)
// CHECK:           torch.aten.bitwise_and.Tensor
// CHECK:           torch.aten.bitwise_or.Tensor
// CHECK:           torch.aten.bitwise_xor.Tensor
// CHECK:           torch.aten.bitwise_not
// CHECK:           torch.aten.bitwise_left_shift.Tensor
// CHECK:           torch.aten.bitwise_right_shift.Tensor
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_bitwise_tensor_ops(%arg0: !torch.vtensor<[4,8],si32>, %arg1: !torch.vtensor<[4,8],si32>) -> (!torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>) {
  %0 = torch.aten.bitwise_and.Tensor %arg0, %arg1 : !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32> -> !torch.vtensor<[4,8],si32>
  %1 = torch.aten.bitwise_or.Tensor %0, %arg1 : !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32> -> !torch.vtensor<[4,8],si32>
  %2 = torch.aten.bitwise_xor.Tensor %1, %arg0 : !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32> -> !torch.vtensor<[4,8],si32>
  %3 = torch.aten.bitwise_not %2 : !torch.vtensor<[4,8],si32> -> !torch.vtensor<[4,8],si32>
  %4 = torch.aten.bitwise_left_shift.Tensor %3, %arg1 : !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32> -> !torch.vtensor<[4,8],si32>
  %5 = torch.aten.bitwise_right_shift.Tensor %arg0, %arg1 : !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32> -> !torch.vtensor<[4,8],si32>
  return %4, %5 : !torch.vtensor<[4,8],si32>, !torch.vtensor<[4,8],si32>
}

// -----

// nan_to_num, copysign of tensors, clamp with scalar bounds, pow with a
// scalar base and of two tensors: one group.

// CHECK-LABEL: func.func @fuse_float_completeness
// CHECK:         "fusion.group"(%arg0, %arg1)
// CHECK:           torch.aten.nan_to_num
// CHECK:           torch.aten.copysign.Tensor
// CHECK:           torch.aten.clamp %{{.+}}, %{{.+}}, %{{.+}} : !torch.vtensor<[4,8],f32>, !torch.float, !torch.float
// CHECK:           torch.aten.pow.Scalar
// CHECK:           torch.aten.pow.Tensor_Tensor
// CHECK:         }) {kind = "pointwise"}
// CHECK-NOT:     torch.aten
// CHECK:         return
func.func @fuse_float_completeness(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %float1.000000e00 = torch.constant.float 1.000000e+00
  %none = torch.constant.none
  %0 = torch.aten.nan_to_num %arg0, %float0.000000e00, %float1.000000e00, %none : !torch.vtensor<[4,8],f32>, !torch.float, !torch.float, !torch.none -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.copysign.Tensor %0, %arg1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %float-5.000000e-01 = torch.constant.float -5.000000e-01
  %float5.000000e-01 = torch.constant.float 5.000000e-01
  %2 = torch.aten.clamp %1, %float-5.000000e-01, %float5.000000e-01 : !torch.vtensor<[4,8],f32>, !torch.float, !torch.float -> !torch.vtensor<[4,8],f32>
  %float2.000000e00 = torch.constant.float 2.000000e+00
  %3 = torch.aten.pow.Scalar %float2.000000e00, %2 : !torch.float, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %4 = torch.aten.abs %arg1 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %5 = torch.aten.pow.Tensor_Tensor %4, %3 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  return %5 : !torch.vtensor<[4,8],f32>
}

// -----

// Non-finite replacement values and bases (torch.nan_to_num(x, posinf=inf),
// torch.pow(inf, x); eager takes both) have no Triton literal: ATen.

// CHECK-LABEL: func.func @no_fuse_non_finite_constants
// CHECK:         fusion.explain = ["consumer torch.aten.nan_to_num: operand #2 (inf) is not a finite number", "consumer torch.aten.pow.Scalar: base inf is not a finite number"]
// CHECK:         torch.aten.nan_to_num
// CHECK:         torch.aten.pow.Scalar
func.func @no_fuse_non_finite_constants(%arg0: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) {
  %0 = torch.aten.neg %arg0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %none = torch.constant.none
  %floatInf = torch.constant.float 0x7FF0000000000000
  %1 = torch.aten.nan_to_num %0, %none, %floatInf, %none : !torch.vtensor<[4,8],f32>, !torch.none, !torch.float, !torch.none -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.pow.Scalar %floatInf, %0 : !torch.float, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  return %1, %2 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>
}

// -----

// A float remainder by a zero scalar (x % 0.0, NaN in eager) is a division
// by a zero scalar, left to ATen like floor division's.

// CHECK-LABEL: func.func @no_fuse_remainder_by_zero_scalar
// CHECK:         fusion.explain = ["consumer torch.aten.remainder.Scalar: division by a zero scalar"]
// CHECK:         torch.aten.remainder.Scalar
func.func @no_fuse_remainder_by_zero_scalar(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %0 = torch.aten.neg %arg0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %float0.000000e00 = torch.constant.float 0.000000e+00
  %1 = torch.aten.remainder.Scalar %0, %float0.000000e00 : !torch.vtensor<[4,8],f32>, !torch.float -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}
