// RUN: mlirfuse-opt %s --split-input-file --fusion-functionalize | filecheck %s

// The positive cases give exactly what torch-mlir's own
// torch-reduce-op-variants, torch-maximize-value-semantics and canonicalize
// give on the same input (checked with the wheel's torch-mlir-opt).

// The storage is a private copy: relu_ becomes relu on the copied value;
// the read before the write gets the value copied, the read after it the
// relu. No non-value tensor is left.

// CHECK-LABEL: func.func @functionalize_relu
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4],f32>)
// CHECK-NEXT:    %[[RELU:.+]] = torch.aten.relu %[[X]] : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    return %[[X]], %[[RELU]]
func.func @functionalize_relu(%arg0: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %t = torch.copy.to_tensor %arg0 : !torch.tensor<[4],f32>
  %before = torch.copy.to_vtensor %t : !torch.vtensor<[4],f32>
  %0 = torch.aten.relu_ %t : !torch.tensor<[4],f32> -> !torch.tensor<[4],f32>
  %after = torch.copy.to_vtensor %t : !torch.vtensor<[4],f32>
  return %before, %after : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// A chain of writes, one through the result of the previous in-place op.
// The other operand of add_ (the caller's storage, only read) is read into
// a value where add_ read it. Each read gets the value held at its place.

// CHECK-LABEL: func.func @functionalize_chain
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4],f32>, %[[ARG1:.+]]: !torch.tensor<[4],f32>)
// CHECK:         %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[TWO:.+]] = torch.constant.float
// CHECK-NEXT:    %[[Y:.+]] = torch.copy.to_vtensor %[[ARG1]] : !torch.vtensor<[4],f32>
// CHECK-NEXT:    %[[ADD:.+]] = torch.aten.add.Tensor %[[X]], %[[Y]], %[[ONE]] : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    %[[MUL:.+]] = torch.aten.mul.Scalar %[[ADD]], %[[TWO]] : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    return %[[ADD]], %[[MUL]], %[[MUL]]
func.func @functionalize_chain(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.tensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %int1 = torch.constant.int 1
  %float2 = torch.constant.float 2.000000e+00
  %t = torch.copy.to_tensor %arg0 : !torch.tensor<[4],f32>
  %0 = torch.aten.add_.Tensor %t, %arg1, %int1 : !torch.tensor<[4],f32>, !torch.tensor<[4],f32>, !torch.int -> !torch.tensor<[4],f32>
  %1 = torch.copy.to_vtensor %t : !torch.vtensor<[4],f32>
  %2 = torch.aten.mul_.Scalar %0, %float2 : !torch.tensor<[4],f32>, !torch.float -> !torch.tensor<[4],f32>
  %3 = torch.copy.to_vtensor %2 : !torch.vtensor<[4],f32>
  %4 = torch.copy.to_vtensor %t : !torch.vtensor<[4],f32>
  return %1, %3, %4 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// torch-mlir's own spelling of a write (torch-reduce-op-variants emits
// it): after the overwrite the storage holds the overwriting value.

// CHECK-LABEL: func.func @functionalize_overwrite
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4],f32>, %[[Y:.+]]: !torch.vtensor<[4],f32>)
// CHECK-NEXT:    %[[EXP:.+]] = torch.aten.exp %[[Y]]
// CHECK-NEXT:    return %[[X]], %[[EXP]]
func.func @functionalize_overwrite(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %t = torch.copy.to_tensor %arg0 : !torch.tensor<[4],f32>
  %0 = torch.copy.to_vtensor %t : !torch.vtensor<[4],f32>
  torch.overwrite.tensor.contents %arg1 overwrites %t : !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>
  %1 = torch.copy.to_vtensor %t : !torch.vtensor<[4],f32>
  %2 = torch.aten.exp %1 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0, %2 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// add_ reads %a as its second operand, so %a cannot go first; once %b is
// functionalized that read is a copy.to_vtensor, and %a goes too.

// CHECK-LABEL: func.func @functionalize_two_copies
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4],f32>, %[[Y:.+]]: !torch.vtensor<[4],f32>)
// CHECK-NEXT:    %[[ONE:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[ADD:.+]] = torch.aten.add.Tensor %[[Y]], %[[X]], %[[ONE]]
// CHECK-NEXT:    return %[[ADD]], %[[X]]
func.func @functionalize_two_copies(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %int1 = torch.constant.int 1
  %a = torch.copy.to_tensor %arg0 : !torch.tensor<[4],f32>
  %b = torch.copy.to_tensor %arg1 : !torch.tensor<[4],f32>
  %0 = torch.aten.add_.Tensor %b, %a, %int1 : !torch.tensor<[4],f32>, !torch.tensor<[4],f32>, !torch.int -> !torch.tensor<[4],f32>
  %1 = torch.copy.to_vtensor %b : !torch.vtensor<[4],f32>
  %2 = torch.copy.to_vtensor %a : !torch.vtensor<[4],f32>
  return %1, %2 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// Value semantics, as torch.export produces it: nothing to do.

// CHECK-LABEL: func.func @no_functionalize_value_semantics
// CHECK-SAME:    (%[[X:.+]]: !torch.vtensor<[4],f32>)
// CHECK-NEXT:    %[[RELU:.+]] = torch.aten.relu %[[X]]
// CHECK-NEXT:    return %[[RELU]]
func.func @no_functionalize_value_semantics(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

// A view names the storage: the write through it changes what %t holds,
// so everything stays.

// CHECK-LABEL: func.func @no_functionalize_aliased_by_view
// CHECK:         torch.copy.to_tensor
// CHECK-NEXT:    torch.aten.view
// CHECK-NEXT:    torch.aten.mul_.Scalar
// CHECK-NEXT:    torch.copy.to_vtensor
// CHECK-NOT:     torch.aten.mul.Scalar
func.func @no_functionalize_aliased_by_view(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int32 = torch.constant.int 32
  %float2 = torch.constant.float 2.000000e+00
  %list = torch.prim.ListConstruct %int32 : (!torch.int) -> !torch.list<int>
  %t = torch.copy.to_tensor %arg0 : !torch.tensor<[4,8],f32>
  %v = torch.aten.view %t, %list : !torch.tensor<[4,8],f32>, !torch.list<int> -> !torch.tensor<[32],f32>
  %0 = torch.aten.mul_.Scalar %v, %float2 : !torch.tensor<[32],f32>, !torch.float -> !torch.tensor<[32],f32>
  %1 = torch.copy.to_vtensor %t : !torch.vtensor<[4,8],f32>
  return %1 : !torch.vtensor<[4,8],f32>
}

// -----

// The caller's storage: its writes must be seen outside.

// CHECK-LABEL: func.func @no_functionalize_function_argument
// CHECK-NEXT:    torch.aten.relu_ %arg0
// CHECK-NEXT:    torch.copy.to_vtensor %arg0
// CHECK-NOT:     torch.aten.relu %
func.func @no_functionalize_function_argument(%arg0: !torch.tensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.relu_ %arg0 : !torch.tensor<[4],f32> -> !torch.tensor<[4],f32>
  %1 = torch.copy.to_vtensor %arg0 : !torch.vtensor<[4],f32>
  return %1 : !torch.vtensor<[4],f32>
}

// -----

// bernoulli_.float has no functional form in torch-mlir (there is no
// torch.aten.bernoulli.float), so the storage stays.

// CHECK-LABEL: func.func @no_functionalize_unknown_inplace_op
// CHECK:         torch.copy.to_tensor
// CHECK-NEXT:    torch.aten.bernoulli_.float
// CHECK-NEXT:    torch.copy.to_vtensor
func.func @no_functionalize_unknown_inplace_op(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %none = torch.constant.none
  %float = torch.constant.float 5.000000e-01
  %t = torch.copy.to_tensor %arg0 : !torch.tensor<[4],f32>
  %0 = torch.aten.bernoulli_.float %t, %float, %none : !torch.tensor<[4],f32>, !torch.float, !torch.none -> !torch.tensor<[4],f32>
  %1 = torch.copy.to_vtensor %t : !torch.vtensor<[4],f32>
  return %1 : !torch.vtensor<[4],f32>
}

// -----

// Written in one arm of an `if` only: what %t holds after it depends on
// the condition, so it stays (torch-mlir's maximize-value-semantics also
// leaves this case).

// CHECK-LABEL: func.func @no_functionalize_write_in_region
// CHECK:         torch.copy.to_tensor
// CHECK:           torch.overwrite.tensor.contents
// CHECK:         torch.copy.to_vtensor
func.func @no_functionalize_write_in_region(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>, %cond: !torch.bool) -> !torch.vtensor<[4],f32> {
  %t = torch.copy.to_tensor %arg0 : !torch.tensor<[4],f32>
  torch.prim.If %cond -> () {
    torch.overwrite.tensor.contents %arg1 overwrites %t : !torch.vtensor<[4],f32>, !torch.tensor<[4],f32>
    torch.prim.If.yield
  } else {
    torch.prim.If.yield
  }
  %0 = torch.copy.to_vtensor %t : !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

// A reader that is not a copy.to_vtensor (the mm reads the storage
// between two writes), and a storage returned to the caller: both stay.

// CHECK-LABEL: func.func @no_functionalize_other_readers
// CHECK:         torch.aten.relu_
// CHECK-NEXT:    torch.aten.mm
// CHECK-NEXT:    torch.aten.neg_
// CHECK:         torch.aten.sigmoid_
// CHECK-NEXT:    return
func.func @no_functionalize_other_readers(%arg0: !torch.vtensor<[4,4],f32>) -> (!torch.tensor<[4,4],f32>, !torch.vtensor<[4,4],f32>, !torch.tensor<[4,4],f32>) {
  %t = torch.copy.to_tensor %arg0 : !torch.tensor<[4,4],f32>
  %0 = torch.aten.relu_ %t : !torch.tensor<[4,4],f32> -> !torch.tensor<[4,4],f32>
  %1 = torch.aten.mm %t, %t : !torch.tensor<[4,4],f32>, !torch.tensor<[4,4],f32> -> !torch.tensor<[4,4],f32>
  %2 = torch.aten.neg_ %t : !torch.tensor<[4,4],f32> -> !torch.tensor<[4,4],f32>
  %3 = torch.copy.to_vtensor %t : !torch.vtensor<[4,4],f32>
  %u = torch.copy.to_tensor %arg0 : !torch.tensor<[4,4],f32>
  %4 = torch.aten.sigmoid_ %u : !torch.tensor<[4,4],f32> -> !torch.tensor<[4,4],f32>
  return %1, %3, %u : !torch.tensor<[4,4],f32>, !torch.vtensor<[4,4],f32>, !torch.tensor<[4,4],f32>
}
