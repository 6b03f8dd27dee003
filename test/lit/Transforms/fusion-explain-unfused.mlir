// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --fusion-fuse-elementwise | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-elementwise{max-args=3})' | filecheck %s --check-prefix=ARGS
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-fuse-elementwise{max-group-size=2})' | filecheck %s --check-prefix=SIZE
// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --pass-pipeline='builtin.module(fusion-fuse-elementwise{max-args=3})' | filecheck %s --check-prefix=ARGS-WHY
// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --pass-pipeline='builtin.module(fusion-fuse-elementwise{max-group-size=2})' | filecheck %s --check-prefix=SIZE-WHY

// --fusion-explain: every neighbour left outside a group is listed with the
// reason, on the group (and, after outlining, on its launch).

// exp feeds add directly and through mm: merging would create a cycle; mm
// itself is an unsupported op.

// CHECK-LABEL: func.func @no_fuse_cycle_explained
// CHECK:         "fusion.group"
// CHECK:         fusion.explain = ["consumer torch.aten.mm: unsupported op", "consumer fusion.group: cycle"]
// CHECK:         torch.aten.mm
// CHECK:         "fusion.group"
// CHECK:         fusion.explain = ["producer fusion.group: cycle", "producer torch.aten.mm: unsupported op"]
func.func @no_fuse_cycle_explained(%arg0: !torch.vtensor<[8,8],f32>) -> !torch.vtensor<[8,8],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[8,8],f32> -> !torch.vtensor<[8,8],f32>
  %1 = torch.aten.mm %0, %0 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[8,8],f32>
  %2 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[8,8],f32>, !torch.vtensor<[8,8],f32>, !torch.int -> !torch.vtensor<[8,8],f32>
  return %2 : !torch.vtensor<[8,8],f32>
}

// -----

// A producer whose result is also returned, with a different shape from the
// consumer's iteration space, stays outside.

// CHECK-LABEL: func.func @no_fuse_iteration_space_explained
// CHECK:         fusion.explain = ["consumer fusion.group: different iteration space"]
// CHECK:         fusion.explain = ["producer fusion.group: different iteration space"]
func.func @no_fuse_iteration_space_explained(%arg0: !torch.vtensor<[16],f32>, %arg1: !torch.vtensor<[4,16],f32>) -> (!torch.vtensor<[16],f32>, !torch.vtensor<[4,16],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %arg0 : !torch.vtensor<[16],f32> -> !torch.vtensor<[16],f32>
  %1 = torch.aten.add.Tensor %arg1, %0, %int1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
  return %0, %1 : !torch.vtensor<[16],f32>, !torch.vtensor<[4,16],f32>
}

// -----

// Two reductions over different axes of one input.

// CHECK-LABEL: func.func @no_fuse_axes_explained
// CHECK:         fusion.explain = ["consumer fusion.group: reductions over different axes"]
// CHECK:         fusion.explain = ["producer fusion.group: reductions over different axes"]
func.func @no_fuse_axes_explained(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[1,1],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %d1 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %d0 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.sum.dim_IntList %arg0, %d1, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %1 = torch.aten.sum.dim_IntList %0, %d0, %true, %none : !torch.vtensor<[4,1],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,1],f32>
  return %1 : !torch.vtensor<[1,1],f32>
}

// -----

// Limits: four inputs and a result would need 5 kernel arguments (max-args=3
// keeps the chain in pieces); three ops exceed max-group-size=2.

// CHECK-LABEL: func.func @fuse_within_limits
// CHECK-COUNT-1: "fusion.group"
// CHECK-NOT:     "fusion.group"
// ARGS-LABEL: func.func @fuse_within_limits
// ARGS-COUNT-3: "fusion.group"
// ARGS-NOT:     "fusion.group"
// SIZE-LABEL: func.func @fuse_within_limits
// SIZE-COUNT-2: "fusion.group"
// SIZE-NOT:     "fusion.group"
// ARGS-WHY-LABEL: func.func @fuse_within_limits
// ARGS-WHY:       fusion.explain = ["consumer fusion.group: argument limit (4 > 3)"]
// SIZE-WHY-LABEL: func.func @fuse_within_limits
// SIZE-WHY:       fusion.explain = ["consumer fusion.group: group size limit (3 > 2)"]
func.func @fuse_within_limits(%a: !torch.vtensor<[8],f32>, %b: !torch.vtensor<[8],f32>, %c: !torch.vtensor<[8],f32>, %d: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = torch.aten.mul.Tensor %a, %b : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %1 = torch.aten.mul.Tensor %0, %c : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  %2 = torch.aten.mul.Tensor %1, %d : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  return %2 : !torch.vtensor<[8],f32>
}

// -----

// A group reads its inputs through views; a slice of a value another group
// computes would need that group recomputed at the sliced coordinates.

// CHECK-LABEL: func.func @no_fuse_slice_of_computed_value
// ARGS-LABEL: func.func @no_fuse_slice_of_computed_value
// SIZE-LABEL: func.func @no_fuse_slice_of_computed_value
// ARGS-WHY-LABEL: func.func @no_fuse_slice_of_computed_value
// SIZE-WHY-LABEL: func.func @no_fuse_slice_of_computed_value
// CHECK:         fusion.explain = ["consumer fusion.group: view of a computed value"]
// CHECK:         fusion.explain = ["producer fusion.group: view of a computed value"]
func.func @no_fuse_slice_of_computed_value(%a: !torch.vtensor<[1,8],f32>) -> !torch.vtensor<[1,4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.aten.exp %a : !torch.vtensor<[1,8],f32> -> !torch.vtensor<[1,8],f32>
  %1 = torch.aten.slice.Tensor %0, %int1, %int0, %int4, %int1 : !torch.vtensor<[1,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,4],f32>
  %2 = torch.aten.neg %1 : !torch.vtensor<[1,4],f32> -> !torch.vtensor<[1,4],f32>
  return %2 : !torch.vtensor<[1,4],f32>
}

// -----

// A reduction result without keepdim ([8] from [4,8]) cannot be broadcast
// back inside the kernel (it is stored one per row, not indexed by column).

// CHECK-LABEL: func.func @no_fuse_reduction_result_without_keepdim
// CHECK:         fusion.explain = ["consumer fusion.group: reduction result used without keepdim"]
// CHECK:         fusion.explain = ["producer fusion.group: reduction result used without keepdim"]

func.func @no_fuse_reduction_result_without_keepdim(%a: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %none = torch.constant.none
  %l = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.sum.dim_IntList %a, %l, %false, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8],f32>
  %1 = torch.aten.sub.Tensor %a, %0, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// Concat reasons: a list two cats read; a dim known only at run time. (exp
// and neg read %a: one horizontal group carries both explanations.)

// CHECK-LABEL: func.func @no_fuse_cat_reasons
// CHECK:         fusion.explain = ["consumer torch.aten.cat: cat with a non-constant dim or list, or a dynamic shape", "consumer torch.aten.cat: cat's list is read by another op", "consumer torch.aten.cat: cat's list is read by another op"]

func.func @no_fuse_cat_reasons(%a: !torch.vtensor<[4,8],f32>, %d: !torch.int) -> (!torch.vtensor<[4,16],f32>, !torch.vtensor<[8,8],f32>, !torch.vtensor<[8,8],f32>) {
  %int0 = torch.constant.int 0
  %0 = torch.aten.exp %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %l = torch.prim.ListConstruct %0, %0 : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %l, %d : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,16],f32>
  %2 = torch.aten.neg %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %m = torch.prim.ListConstruct %2, %2 : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) -> !torch.list<vtensor>
  %3 = torch.aten.cat %m, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[8,8],f32>
  %4 = torch.aten.cat %m, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[8,8],f32>
  return %1, %3, %4 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[8,8],f32>, !torch.vtensor<[8,8],f32>
}

// -----

// Why single ops stay outside: a result of another shape (the exp's `?`
// is not provably its input's 4: a different iteration space), a scalar known only at
// run time, non-constant dims or keepdim, argmax over all dims, argmax and
// sign of integers.

// CHECK-LABEL: func.func @no_fuse_op_reasons
// CHECK:         fusion.explain = ["consumer fusion.group: different iteration space", "consumer torch.aten.add.Scalar: operand #1 is neither a tensor nor a constant", "consumer torch.aten.sum.dim_IntList: reduction dims are not constant", "consumer torch.aten.sum.dim_IntList: keepdim is not constant"]
// CHECK:         fusion.explain = ["consumer torch.aten.argmax: argmax over all dims (flattened indices)", "consumer torch.aten.argmax: argmax is fused for floating types only", "consumer torch.aten.sign: result is int64; the op is fused for floating types only"]

func.func @no_fuse_op_reasons(%a: !torch.vtensor<[4,8],f32>, %s: !torch.float, %k: !torch.bool, %i: !torch.vtensor<[4,8],si64>, %dims: !torch.list<int>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[4,1],si64>, !torch.vtensor<[4,8],si64>) {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %l = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.neg %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[?,8],f32>
  %2 = torch.aten.add.Scalar %0, %s, %int1 : !torch.vtensor<[4,8],f32>, !torch.float, !torch.int -> !torch.vtensor<[4,8],f32>
  %3 = torch.aten.sum.dim_IntList %0, %dims, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %4 = torch.aten.sum.dim_IntList %0, %l, %k, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %5 = torch.aten.neg %i : !torch.vtensor<[4,8],si64> -> !torch.vtensor<[4,8],si64>
  %6 = torch.aten.argmax %5, %none, %true : !torch.vtensor<[4,8],si64>, !torch.none, !torch.bool -> !torch.vtensor<[],si64>
  %7 = torch.aten.argmax %5, %int1, %true : !torch.vtensor<[4,8],si64>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],si64>
  %8 = torch.aten.sign %5 : !torch.vtensor<[4,8],si64> -> !torch.vtensor<[4,8],si64>
  return %1, %2, %3, %4, %6, %7, %8 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[4,1],si64>, !torch.vtensor<[4,8],si64>
}

// -----

// Only ops directly in a function body are fused.

// CHECK-LABEL: func.func @no_fuse_different_block
// CHECK:         fusion.explain = ["consumer torch.aten.neg: inside a nested region (only function bodies are fused)"]
// CHECK:         torch.prim.If
// CHECK-NEXT:      torch.aten.neg

func.func @no_fuse_different_block(%a: !torch.vtensor<[4],f32>, %c: !torch.bool) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.exp %a : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %1 = torch.prim.If %c -> (!torch.vtensor<[4],f32>) {
    %2 = torch.aten.neg %0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    torch.prim.If.yield %2 : !torch.vtensor<[4],f32>
  } else {
    torch.prim.If.yield %0 : !torch.vtensor<[4],f32>
  }
  return %1 : !torch.vtensor<[4],f32>
}
