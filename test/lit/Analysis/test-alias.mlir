// RUN: mlirfuse-opt %s --split-input-file --allow-unregistered-dialect --verify-analyses --test-alias | filecheck %s
// RUN: not mlirfuse-opt %s --split-input-file --allow-unregistered-dialect --verify-analyses --pass-pipeline='builtin.module(test-alias{corrupt=true})' 2>&1 | filecheck %s --check-prefix=CORRUPT

// A view of a fresh copy shares its storage, so an in-place op through the
// view mutates the copy too. copy.to_vtensor reads the storage into a
// fresh value nothing writes. The in-place add writes the caller's storage
// (a !torch.tensor argument), not the copy it only reads.

// CHECK-LABEL: func.func @views_and_writes
// CHECK:         torch.copy.to_tensor {{.*}}{test.alias_class = "buf", test.may_alias = "view, scale", test.mutated = true, test.tag = "buf", test.writers = "scale"}
// CHECK:         torch.aten.view {{.*}}{test.alias_class = "buf", test.may_alias = "buf, scale", test.mutated = true, test.tag = "view", test.writers = "scale"}
// CHECK:         torch.aten.mul_.Scalar {{.*}}{test.alias_class = "buf", test.may_alias = "buf, view", test.mutated = true, test.tag = "scale", test.writers = "scale"}
// CHECK:         torch.copy.to_vtensor {{.*}}{test.alias_class = "read", test.may_alias = "", test.mutated = false, test.tag = "read", test.writers = ""}
// CHECK:         torch.aten.add_.Tensor {{.*}}{test.alias_class = "arg1", test.may_alias = "", test.mutated = true, test.tag = "acc", test.writers = "acc"}
func.func @views_and_writes(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.tensor<[4,8],f32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[32],f32>) {
  %int32 = torch.constant.int 32
  %int1 = torch.constant.int 1
  %float2 = torch.constant.float 2.000000e+00
  %t = torch.copy.to_tensor %arg0 {test.tag = "buf"} : !torch.tensor<[4,8],f32>
  %list = torch.prim.ListConstruct %int32 : (!torch.int) -> !torch.list<int>
  %v = torch.aten.view %t, %list {test.tag = "view"} : !torch.tensor<[4,8],f32>, !torch.list<int> -> !torch.tensor<[32],f32>
  %m = torch.aten.mul_.Scalar %v, %float2 {test.tag = "scale"} : !torch.tensor<[32],f32>, !torch.float -> !torch.tensor<[32],f32>
  %r = torch.copy.to_vtensor %t {test.tag = "read"} : !torch.vtensor<[4,8],f32>
  %a = torch.aten.add_.Tensor %arg1, %t, %int1 {test.tag = "acc"} : !torch.tensor<[4,8],f32>, !torch.tensor<[4,8],f32>, !torch.int -> !torch.tensor<[4,8],f32>
  %rv = torch.copy.to_vtensor %m : !torch.vtensor<[32],f32>
  return %r, %rv : !torch.vtensor<[4,8],f32>, !torch.vtensor<[32],f32>
}

// A tagged op that writes a tensor and whose result nobody reads (the
// add_) is erased by corrupt=true behind the analysis's back:
// --verify-analyses names the stale value, the writer and the class whose
// writers changed.

// CORRUPT: error: --verify-analyses: after 'test-alias' the maintained analyses differ from recomputed ones:
// CORRUPT-NEXT: alias: 1 entries for values no longer in the IR: 'torch.aten.add_.Tensor' #8
// CORRUPT-NEXT: alias: argument #1 of @views_and_writes: the caller's storage, written by 'torch.aten.add_.Tensor' #8 in the maintained analysis, the caller's storage, never written in the IR
// CORRUPT-NEXT: alias: 1 writers no longer in the IR: 'torch.aten.add_.Tensor' #8

// -----

// Two !torch.tensor arguments may be one tensor (the caller may pass it
// twice): relu_ on one may write the other. A value-semantic argument is
// nobody's alias.

// CHECK-LABEL: func.func @arguments_may_alias
// CHECK:         torch.aten.relu_ {{.*}}{test.alias_class = "arg0", test.may_alias = "b", test.mutated = true, test.tag = "a", test.writers = "a"}
// CHECK:         torch.aten.unsqueeze {{.*}}{test.alias_class = "arg1", test.may_alias = "a", test.mutated = true, test.tag = "b", test.writers = "a"}
// CHECK:         torch.aten.unsqueeze {{.*}}{test.alias_class = "arg2", test.may_alias = "", test.mutated = false, test.tag = "c", test.writers = ""}
func.func @arguments_may_alias(%arg0: !torch.tensor<[4],f32>, %arg1: !torch.tensor<[4],f32>, %arg2: !torch.vtensor<[4],f32>) -> (!torch.tensor<[4],f32>, !torch.tensor<[1,4],f32>, !torch.vtensor<[1,4],f32>) {
  %int0 = torch.constant.int 0
  %0 = torch.aten.relu_ %arg0 {test.tag = "a"} : !torch.tensor<[4],f32> -> !torch.tensor<[4],f32>
  %1 = torch.aten.unsqueeze %arg1, %int0 {test.tag = "b"} : !torch.tensor<[4],f32>, !torch.int -> !torch.tensor<[1,4],f32>
  %2 = torch.aten.unsqueeze %arg2, %int0 {test.tag = "c"} : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[1,4],f32>
  return %0, %1, %2 : !torch.tensor<[4],f32>, !torch.tensor<[1,4],f32>, !torch.vtensor<[1,4],f32>
}

// -----

// Writers without an in-place name: overwrite.tensor.contents writes its
// second operand, an op the analysis does not know writes any non-value
// tensor it is given, and a torch.operator is read by its name. Neither
// the function's value argument nor the copy.to_vtensor is written.

// CHECK-LABEL: func.func @other_writers
// CHECK:         torch.copy.to_tensor {{.*}}{test.alias_class = "x", test.may_alias = "", test.mutated = true, test.tag = "x", test.writers = "opaque, overwrite"}
// CHECK:         torch.copy.to_tensor {{.*}}{test.alias_class = "y", test.may_alias = "fill", test.mutated = true, test.tag = "y", test.writers = "fill"}
// CHECK:         torch.operator "aten.fill_.Tensor"{{.*}}{test.alias_class = "y", test.may_alias = "y", test.mutated = true, test.tag = "fill", test.writers = "fill"}
// CHECK:         torch.copy.to_vtensor {{.*}}{test.alias_class = "read", test.may_alias = "", test.mutated = false, test.tag = "read", test.writers = ""}
func.func @other_writers(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %x = torch.copy.to_tensor %arg0 {test.tag = "x"} : !torch.tensor<[4],f32>
  %y = torch.copy.to_tensor %arg0 {test.tag = "y"} : !torch.tensor<[4],f32>
  torch.overwrite.tensor.contents %arg1 overwrites %x {test.tag = "overwrite"} : !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>
  "test.opaque"(%x) {test.tag = "opaque"} : (!torch.tensor<[4],f32>) -> ()
  %0 = torch.operator "aten.fill_.Tensor"(%y, %arg1) {test.tag = "fill"} : (!torch.tensor<[4],f32>, !torch.vtensor<[4],f32>) -> !torch.tensor<[4],f32>
  %1 = torch.copy.to_vtensor %x {test.tag = "read"} : !torch.vtensor<[4],f32>
  return %1 : !torch.vtensor<[4],f32>
}

// -----

// Value semantics (what torch.export produces): a view still names its
// operand's storage, but nothing is ever written.

// CHECK-LABEL: func.func @value_semantics
// CHECK:         torch.aten.exp {{.*}}{test.alias_class = "e", test.may_alias = "t", test.mutated = false, test.tag = "e", test.writers = ""}
// CHECK:         torch.aten.transpose.int {{.*}}{test.alias_class = "e", test.may_alias = "e", test.mutated = false, test.tag = "t", test.writers = ""}
// CHECK:         torch.aten.neg {{.*}}{test.alias_class = "n", test.may_alias = "", test.mutated = false, test.tag = "n", test.writers = ""}
func.func @value_semantics(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[8,4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.exp %arg0 {test.tag = "e"} : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.transpose.int %0, %int0, %int1 {test.tag = "t"} : !torch.vtensor<[4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,4],f32>
  %2 = torch.aten.neg %1 {test.tag = "n"} : !torch.vtensor<[8,4],f32> -> !torch.vtensor<[8,4],f32>
  return %2 : !torch.vtensor<[8,4],f32>
}

// -----

// A write inside an `if` arm is a write by the `if`.

// CHECK-LABEL: func.func @write_in_region
// CHECK:         torch.copy.to_tensor {{.*}}{test.alias_class = "buf", test.may_alias = "", test.mutated = true, test.tag = "buf", test.writers = "if"}
func.func @write_in_region(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>, %cond: !torch.bool) -> !torch.vtensor<[4],f32> {
  %t = torch.copy.to_tensor %arg0 {test.tag = "buf"} : !torch.tensor<[4],f32>
  torch.prim.If %cond -> () {
    torch.overwrite.tensor.contents %arg1 overwrites %t : !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>
    torch.prim.If.yield
  } else {
    torch.prim.If.yield
  } {test.tag = "if"}
  %0 = torch.copy.to_vtensor %t : !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
