// RUN: mlirfuse-opt %s --split-input-file --verify-diagnostics

// One case per verifier error of the fusion dialect.

func.func @group_two_blocks(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.group' op expects a body with exactly one block, found 2}}
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> ()
  ^bb1(%b: !torch.vtensor<[8],f32>):
    "fusion.yield"(%b) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @group_no_block(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.group' op expects a body with exactly one block, found 0}}
  %0 = "fusion.group"(%arg0) ({
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @group_block_arg_count(%arg0: !torch.vtensor<[8],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.group' op has 2 operands but its body has 1 block arguments}}
  %0 = "fusion.group"(%arg0, %arg1) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @group_block_arg_type(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f16> {
  // expected-error @+1 {{'fusion.group' op block argument #0 has type !torch.vtensor<[8],f16> but operand #0 has type !torch.vtensor<[8],f32>}}
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f16>):
    "fusion.yield"(%a) : (!torch.vtensor<[8],f16>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f16>
  return %0 : !torch.vtensor<[8],f16>
}

// -----

func.func @group_missing_yield(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.group' op expects its body to end in 'fusion.yield'}}
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @group_yield_count(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.group' op yields 2 values but has 1 results}}
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    "fusion.yield"(%a, %a) : (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @group_yield_type(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[4],f32> {
  // expected-error @+1 {{'fusion.group' op yields type !torch.vtensor<[8],f32> at #0 but result #0 has type !torch.vtensor<[4],f32>}}
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

func.func @group_unknown_kind(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.group' op has unknown kind "elementwise"; expected one of pointwise}}
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "elementwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @group_no_results(%arg0: !torch.vtensor<[8],f32>) {
  // expected-error @+1 {{'fusion.group' op must have at least one result}}
  "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    "fusion.yield"() : () -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> ()
  return
}

// -----

func.func @group_non_torch_op(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.group' op body may only hold torch ops, found 'arith.constant'}}
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %c = arith.constant 1.0 : f32
    "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @yield_outside_group(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.yield' op expects parent op 'fusion.group' or 'fusion.kernel'}}
  "fusion.yield"(%arg0) : (!torch.vtensor<[8],f32>) -> ()
  return %arg0 : !torch.vtensor<[8],f32>
}

// -----

// The verifier's walk does not enter bodies; the body check covers the yield.
func.func @yield_with_results(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    // expected-error @+1 {{'fusion.yield' op has no results}}
    %r = "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> (!torch.vtensor<[8],f32>)
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @kernel_in_function() {
  // expected-error @+1 {{'fusion.kernel' op must be defined at module level}}
  "fusion.kernel"() ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise", sym_name = "k"} : () -> ()
  return
}

// -----

// expected-error @+1 {{'fusion.kernel' op expects its body to end in 'fusion.yield'}}
"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>):
  %0 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
}) {kind = "pointwise", sym_name = "k"} : () -> ()

// -----

func.func @launch_unknown_kernel(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.launch' op refers to unknown kernel @missing}}
  %0 = "fusion.launch"(%arg0) {kernel = @missing} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>):
  %0 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  "fusion.yield"(%0) : (!torch.vtensor<[8],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()

func.func @launch_operand_type(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.launch' op operand types (!torch.vtensor<[4],f32>) do not match @k arguments (!torch.vtensor<[8],f32>)}}
  %0 = "fusion.launch"(%arg0) {kernel = @k} : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>):
  %0 = torch.aten.exp %a : !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
  "fusion.yield"(%0) : (!torch.vtensor<[8],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()

func.func @launch_result_type(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f16> {
  // expected-error @+1 {{'fusion.launch' op result types do not match what @k yields}}
  %0 = "fusion.launch"(%arg0) {kernel = @k} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f16>
  return %0 : !torch.vtensor<[8],f16>
}

// -----

func.func @group_uses_value_from_above(%arg0: !torch.vtensor<[8],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.group' op body uses a value defined outside it; groups are isolated from above}}
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    %1 = torch.aten.mul.Tensor %a, %arg1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[8],f32>
    "fusion.yield"(%1) : (!torch.vtensor<[8],f32>) -> ()
  }) {kind = "pointwise"} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @group_missing_kind(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.group' op requires a string attribute 'kind'}}
  %0 = "fusion.group"(%arg0) ({
  ^bb0(%a: !torch.vtensor<[8],f32>):
    "fusion.yield"(%a) : (!torch.vtensor<[8],f32>) -> ()
  }) : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

func.func @unknown_fusion_op(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{unknown operation 'fusion.fuse' in the fusion dialect}}
  %0 = "fusion.fuse"(%arg0) : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>):
  %c = torch.constant.float 5.000000e-01 {fusion.scalar = 0 : i64}
  %0 = torch.aten.mul.Scalar %a, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
  "fusion.yield"(%0) : (!torch.vtensor<[8],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()

func.func @launch_scalar_count(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.launch' op passes 0 scalar arguments but @k takes 1}}
  %0 = "fusion.launch"(%arg0) {kernel = @k} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>):
  %c = torch.constant.float 5.000000e-01
  %0 = torch.aten.mul.Scalar %a, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
  "fusion.yield"(%0) : (!torch.vtensor<[8],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()

func.func @launch_scalars_not_f64(%arg0: !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32> {
  // expected-error @+1 {{'fusion.launch' op attribute 'scalars' must be an array<f64: ...>}}
  %0 = "fusion.launch"(%arg0) {kernel = @k, scalars = [5.000000e-01]} : (!torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  return %0 : !torch.vtensor<[8],f32>
}

// -----

// pow's exponent picks the formula: it cannot be a launch's argument.
// expected-error @+1 {{'fusion.kernel' op scalar argument #0 is not a float constant every use of which prints it as a plain operand}}
"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>):
  %c = torch.constant.float 2.000000e+00 {fusion.scalar = 0 : i64}
  %0 = torch.aten.pow.Tensor_Scalar %a, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
  "fusion.yield"(%0) : (!torch.vtensor<[8],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()

// -----

// expected-error @+1 {{'fusion.kernel' op numbers its scalar arguments in body order: expected 'fusion.scalar = 0', found 1 : i64}}
"fusion.kernel"() ({
^bb0(%a: !torch.vtensor<[8],f32>):
  %c = torch.constant.float 5.000000e-01 {fusion.scalar = 1 : i64}
  %0 = torch.aten.mul.Scalar %a, %c : !torch.vtensor<[8],f32>, !torch.float -> !torch.vtensor<[8],f32>
  "fusion.yield"(%0) : (!torch.vtensor<[8],f32>) -> ()
}) {kind = "pointwise", sym_name = "k"} : () -> ()
