// RUN: mlirfuse-opt %s --mlirfuse-pipeline --emit-triton | filecheck %s

// Eager's integer floor division and remainder round toward -inf; Triton's
// `//` and `%` truncate, so the kernel calls helpers that correct the sign
// (defined in the kernel's module only when used). A remainder by a positive
// constant needs only the one correction; a constant shift inside [0, bits)
// is a plain shift, a shift by a tensor guards amounts outside it, and a
// `torch.operator` spelling lowers like the op.

// CHECK-LABEL: def remainder(a, b):
// CHECK-LABEL: def floordiv_int(a, b):
// CHECK:         return tl.where((rem != 0) & ((a < 0) != (b < 0)), quot - 1, quot)
// CHECK-LABEL: def fused_floor_divide_remainder___lshift_0(
// CHECK:         tmp2 = floordiv_int(tmp0, tmp1)  # torch.aten.floor_divide
// CHECK-NEXT:    tmp3 = tl.where((tmp2 % 3) < 0, (tmp2 % 3) + 3, (tmp2 % 3))  # torch.aten.remainder.Scalar
// CHECK-NEXT:    tmp4 = tmp3 << 2  # torch.aten.__lshift__.Scalar
// CHECK-NEXT:    tmp5 = remainder(tmp0, tmp1)  # torch.aten.remainder.Tensor
// CHECK-NEXT:    tmp6 = tmp0 >> tl.where(((tmp1 < 0) | (tmp1 >= 32)), 31, tmp1)  # torch.aten.__rshift__.Tensor
// CHECK-NEXT:    tmp7 = tmp0 | 5  # torch.aten.__or__.Scalar
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
