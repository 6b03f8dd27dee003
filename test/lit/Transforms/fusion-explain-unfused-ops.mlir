// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --fusion-fuse-elementwise | filecheck %s

// --fusion-explain for single ops that cannot join a group: the reason
// each one gives (mlirfuse.ops.elementwise.why_not_fusible,
// mlirfuse.ops.reductions.reduction). Fuser-level reasons (cycle, limits,
// iteration space, views, concat) are in fusion-fuse-elementwise-explain.mlir.

// Why an elementwise op next to a group stays outside: an integer result of
// a float-only op, an unknown dtype code (9: complex), a copy to another
// device, a memory-format change. (An operand with a `?` size joins: kernels
// take sizes as arguments.)

// CHECK-LABEL: func.func @no_fuse_elementwise_op_reasons
// CHECK:         fusion.explain = ["consumer torch.aten.sigmoid: result is int64; the op is fused for floating types only", "consumer torch.prims.convert_element_type: dtype code 9 is not supported", "consumer torch.aten._to_copy: changes layout, device or pinning", "consumer torch.aten._to_copy: changes memory format"]

func.func @no_fuse_elementwise_op_reasons(%a: !torch.vtensor<[4,8],f32>, %d: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],si64>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) {
  %int1 = torch.constant.int 1
  %int9 = torch.constant.int 9
  %int6 = torch.constant.int 6
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %false = torch.constant.bool false
  %cpu = torch.constant.device "cpu"
  %0 = torch.aten.neg %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.add.Tensor %0, %d, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[?,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.sigmoid %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],si64>
  %4 = torch.prims.convert_element_type %0, %int9 : !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  %5 = torch.aten._to_copy %0, %int6, %none, %cpu, %none, %false, %none : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none, !torch.Device, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[4,8],f32>
  %6 = torch.aten._to_copy %0, %int6, %none, %none, %none, %false, %int2 : !torch.vtensor<[4,8],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.int -> !torch.vtensor<[4,8],f32>
  return %1, %2, %4, %5, %6 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],si64>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>
}

// -----

// Why a reduction next to a group stays outside: argmax over a dim of `?`
// size, an integer prod or mean, amax over an empty dim (an error in eager).

// CHECK-LABEL: func.func @no_fuse_reduction_op_reasons
// CHECK:         fusion.explain = ["consumer torch.aten.prod.dim_int: prod with a non-float result"]
// CHECK:         fusion.explain = ["consumer torch.aten.argmax: argmax over a dynamic dim"]
// CHECK:         fusion.explain = ["consumer torch.aten.amax: max/min over an empty dimension is an error in eager"]
// CHECK:         fusion.explain = ["consumer torch.aten.mean.dim: mean of a non-float result"]

func.func @no_fuse_reduction_op_reasons(%a: !torch.vtensor<[4,8],f32>, %e: !torch.vtensor<[4,0],f32>, %i: !torch.vtensor<[4,8],si64>, %r: !torch.vtensor<[4,?],f32>) -> (!torch.vtensor<[4,1],si64>, !torch.vtensor<[4,1],si64>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],si64>) {
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %true = torch.constant.bool true
  %none = torch.constant.none
  %l = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.neg %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %r0 = torch.aten.neg %r : !torch.vtensor<[4,?],f32> -> !torch.vtensor<[4,?],f32>
  %1 = torch.aten.argmax %r0, %int1, %true : !torch.vtensor<[4,?],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],si64>
  %2 = torch.aten.prod.dim_int %0, %int1, %true, %int4 : !torch.vtensor<[4,8],f32>, !torch.int, !torch.bool, !torch.int -> !torch.vtensor<[4,1],si64>
  %3 = torch.aten.neg %e : !torch.vtensor<[4,0],f32> -> !torch.vtensor<[4,0],f32>
  %4 = torch.aten.amax %3, %l, %true : !torch.vtensor<[4,0],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[4,1],f32>
  %5 = torch.aten.neg %i : !torch.vtensor<[4,8],si64> -> !torch.vtensor<[4,8],si64>
  %6 = torch.aten.mean.dim %5, %l, %true, %none : !torch.vtensor<[4,8],si64>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],si64>
  return %1, %2, %4, %6 : !torch.vtensor<[4,1],si64>, !torch.vtensor<[4,1],si64>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],si64>
}
