// RUN: mlirfuse-opt %s --split-input-file --fusion-split-bias | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-split-bias, fusion-fuse-elementwise)' | filecheck %s --check-prefix=FUSE

// nn.Linear imports as linear(x, w, b): the bias add leaves the matmul as
// an add.Tensor with alpha 1, the [16] bias broadcasting over the rows. Each
// case feeds a relu: splitting pays only when the add can fuse with it.

// CHECK-LABEL: func.func @split_linear_bias
// CHECK-SAME:    (%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[W:[^:]+]]: !torch.vtensor<[16,8],f32>, %[[B:[^:]+]]: !torch.vtensor<[16],f32>)
// CHECK-NEXT:    %[[NONE:.+]] = torch.constant.none
// CHECK-NEXT:    %[[MM:.+]] = torch.aten.linear %[[X]], %[[W]], %[[NONE]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[16,8],f32>, !torch.none -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    %[[ALPHA:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[ADD:.+]] = torch.aten.add.Tensor %[[MM]], %[[B]], %[[ALPHA]] : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    torch.aten.relu %[[ADD]]
func.func @split_linear_bias(%x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[16,8],f32>, %b: !torch.vtensor<[16],f32>) -> !torch.vtensor<[4,16],f32> {
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[16,8],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[4,16],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  return %1 : !torch.vtensor<[4,16],f32>
}

// -----

// A batched (rank-3) input: the add keeps the linear's result type.

// CHECK-LABEL: func.func @split_linear_bias_rank3
// CHECK-SAME:    (%[[X:[^:]+]]: !torch.vtensor<[2,4,8],f32>, %[[W:[^:]+]]: !torch.vtensor<[16,8],f32>, %[[B:[^:]+]]: !torch.vtensor<[16],f32>)
// CHECK:         %[[MM:.+]] = torch.aten.linear %[[X]], %[[W]], %{{.+}} : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[16,8],f32>, !torch.none -> !torch.vtensor<[2,4,16],f32>
// CHECK:         %[[ADD:.+]] = torch.aten.add.Tensor %[[MM]], %[[B]], %{{.+}} -> !torch.vtensor<[2,4,16],f32>
// CHECK-NEXT:    torch.aten.relu %[[ADD]]
func.func @split_linear_bias_rank3(%x: !torch.vtensor<[2,4,8],f32>, %w: !torch.vtensor<[16,8],f32>, %b: !torch.vtensor<[16],f32>) -> !torch.vtensor<[2,4,16],f32> {
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[16,8],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[2,4,16],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[2,4,16],f32> -> !torch.vtensor<[2,4,16],f32>
  return %1 : !torch.vtensor<[2,4,16],f32>
}

// -----

// addmm(b, m1, m2) with beta = alpha = 1 is mm(m1, m2) + b; the scale
// constants it no longer reads are gone.

// CHECK-LABEL: func.func @split_addmm_bias
// CHECK-SAME:    (%[[B:[^:]+]]: !torch.vtensor<[16],f32>, %[[M1:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[M2:[^:]+]]: !torch.vtensor<[8,16],f32>)
// CHECK-NOT:     torch.aten.addmm
// CHECK-NEXT:    %[[MM:.+]] = torch.aten.mm %[[M1]], %[[M2]] : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,16],f32> -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    %[[ALPHA:.+]] = torch.constant.int 1
// CHECK-NEXT:    %[[ADD:.+]] = torch.aten.add.Tensor %[[MM]], %[[B]], %[[ALPHA]] : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    torch.aten.relu %[[ADD]]
func.func @split_addmm_bias(%b: !torch.vtensor<[16],f32>, %m1: !torch.vtensor<[4,8],f32>, %m2: !torch.vtensor<[8,16],f32>) -> !torch.vtensor<[4,16],f32> {
  %int1 = torch.constant.int 1
  %int1_0 = torch.constant.int 1
  %0 = torch.aten.addmm %b, %m1, %m2, %int1, %int1_0 : !torch.vtensor<[16],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,16],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,16],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  return %1 : !torch.vtensor<[4,16],f32>
}

// -----

// beta = alpha = 1.0 spelled as floats is the same rewrite.

// CHECK-LABEL: func.func @split_addmm_float_scales
// CHECK-SAME:    (%[[B:[^:]+]]: !torch.vtensor<[4,16],f32>, %[[M1:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[M2:[^:]+]]: !torch.vtensor<[8,16],f32>)
// CHECK-NEXT:    %[[MM:.+]] = torch.aten.mm %[[M1]], %[[M2]]
// CHECK:         %[[ADD:.+]] = torch.aten.add.Tensor %[[MM]], %[[B]], %{{.+}} : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    torch.aten.relu %[[ADD]]
func.func @split_addmm_float_scales(%b: !torch.vtensor<[4,16],f32>, %m1: !torch.vtensor<[4,8],f32>, %m2: !torch.vtensor<[8,16],f32>) -> !torch.vtensor<[4,16],f32> {
  %float1 = torch.constant.float 1.000000e+00
  %0 = torch.aten.addmm %b, %m1, %m2, %float1, %float1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,16],f32>, !torch.float, !torch.float -> !torch.vtensor<[4,16],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  return %1 : !torch.vtensor<[4,16],f32>
}

// -----

// gelu(fc1(x)): after the split the bias add and the gelu are one group,
// and only the bias-free matmul stays outside.

// FUSE-LABEL:  func.func @fuse_bias_gelu
// FUSE-SAME:     (%[[X:[^:]+]]: !torch.vtensor<[4,8],f32>, %[[W:[^:]+]]: !torch.vtensor<[16,8],f32>, %[[B:[^:]+]]: !torch.vtensor<[16],f32>)
// FUSE-NEXT:     %[[NONE:.+]] = torch.constant.none
// FUSE-NEXT:     %[[MM:.+]] = torch.aten.linear %[[X]], %[[W]], %[[NONE]]
// FUSE-NEXT:     %[[G:.+]] = "fusion.group"(%[[MM]], %[[B]]) ({
// FUSE-NEXT:     ^bb0(%[[Y:.+]]: !torch.vtensor<[4,16],f32>, %[[BIAS:.+]]: !torch.vtensor<[16],f32>):
// FUSE:            %[[ADD:.+]] = torch.aten.add.Tensor %[[Y]], %[[BIAS]], %{{.+}} : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32>, !torch.int -> !torch.vtensor<[4,16],f32>
// FUSE:            %[[GELU:.+]] = torch.aten.gelu %[[ADD]], %{{.+}}
// FUSE-NEXT:       "fusion.yield"(%[[GELU]])
// FUSE-NEXT:     }) {kind = "pointwise"}
// FUSE-NEXT:     return %[[G]]

// CHECK-LABEL: func.func @fuse_bias_gelu
// CHECK:         torch.aten.linear %{{.+}}, %{{.+}}, %{{.+}} : {{.+}}, !torch.none -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    torch.constant.int 1
// CHECK-NEXT:    torch.aten.add.Tensor
func.func @fuse_bias_gelu(%x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[16,8],f32>, %b: !torch.vtensor<[16],f32>) -> !torch.vtensor<[4,16],f32> {
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[16,8],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[4,16],f32>
  %str = torch.constant.str "none"
  %1 = torch.aten.gelu %0, %str : !torch.vtensor<[4,16],f32>, !torch.str -> !torch.vtensor<[4,16],f32>
  return %1 : !torch.vtensor<[4,16],f32>
}

// -----

// nn.Linear(bias=False): the bias is already None, nothing to split.

// CHECK-LABEL: func.func @no_split_linear_without_bias
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK:         %[[MM:.+]] = torch.aten.linear %{{.+}}, %{{.+}}, %{{.+}} : {{.+}}, !torch.none -> !torch.vtensor<[4,16],f32>
// CHECK-NEXT:    return %[[MM]]
func.func @no_split_linear_without_bias(%x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[16,8],f32>) -> !torch.vtensor<[4,16],f32> {
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[4,8],f32>, !torch.vtensor<[16,8],f32>, !torch.none -> !torch.vtensor<[4,16],f32>
  return %0 : !torch.vtensor<[4,16],f32>
}

// -----

// Kernels are specialized to static shapes: a `?` batch keeps linear whole.

// CHECK-LABEL: func.func @no_split_dynamic_shape
// CHECK-SAME:    (%[[X:[^:]+]]: !torch.vtensor<[?,8],f32>, %[[W:[^:]+]]: !torch.vtensor<[16,8],f32>, %[[B:[^:]+]]: !torch.vtensor<[16],f32>)
// CHECK-NEXT:    %[[MM:.+]] = torch.aten.linear %[[X]], %[[W]], %[[B]]
// CHECK-NEXT:    return %[[MM]]
func.func @no_split_dynamic_shape(%x: !torch.vtensor<[?,8],f32>, %w: !torch.vtensor<[16,8],f32>, %b: !torch.vtensor<[16],f32>) -> !torch.vtensor<[?,16],f32> {
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[?,8],f32>, !torch.vtensor<[16,8],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[?,16],f32>
  return %0 : !torch.vtensor<[?,16],f32>
}

// -----

// beta = 2 scales the bias: not a plain add, addmm stays.

// CHECK-LABEL: func.func @no_split_addmm_beta_not_one
// CHECK-NOT:     torch.aten.mm
// CHECK:         %[[OUT:.+]] = torch.aten.addmm
// CHECK-NEXT:    return %[[OUT]]
func.func @no_split_addmm_beta_not_one(%b: !torch.vtensor<[16],f32>, %m1: !torch.vtensor<[4,8],f32>, %m2: !torch.vtensor<[8,16],f32>) -> !torch.vtensor<[4,16],f32> {
  %int2 = torch.constant.int 2
  %int1 = torch.constant.int 1
  %0 = torch.aten.addmm %b, %m1, %m2, %int2, %int1 : !torch.vtensor<[16],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,16],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,16],f32>
  return %0 : !torch.vtensor<[4,16],f32>
}

// -----

// alpha = 0.5 scales the product: addmm stays.

// CHECK-LABEL: func.func @no_split_addmm_alpha_not_one
// CHECK-NOT:     torch.aten.mm
// CHECK:         %[[OUT:.+]] = torch.aten.addmm
// CHECK-NEXT:    return %[[OUT]]
func.func @no_split_addmm_alpha_not_one(%b: !torch.vtensor<[16],f32>, %m1: !torch.vtensor<[4,8],f32>, %m2: !torch.vtensor<[8,16],f32>) -> !torch.vtensor<[4,16],f32> {
  %int1 = torch.constant.int 1
  %float = torch.constant.float 5.000000e-01
  %0 = torch.aten.addmm %b, %m1, %m2, %int1, %float : !torch.vtensor<[16],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,16],f32>, !torch.int, !torch.float -> !torch.vtensor<[4,16],f32>
  return %0 : !torch.vtensor<[4,16],f32>
}

// -----

// A scale known only at run time might not be 1: addmm stays.

// CHECK-LABEL: func.func @no_split_addmm_nonconstant_beta
// CHECK-NOT:     torch.aten.mm
// CHECK:         %[[OUT:.+]] = torch.aten.addmm
// CHECK-NEXT:    return %[[OUT]]
func.func @no_split_addmm_nonconstant_beta(%b: !torch.vtensor<[16],f32>, %m1: !torch.vtensor<[4,8],f32>, %m2: !torch.vtensor<[8,16],f32>, %beta: !torch.int) -> !torch.vtensor<[4,16],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.addmm %b, %m1, %m2, %beta, %int1 : !torch.vtensor<[16],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,16],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,16],f32>
  return %0 : !torch.vtensor<[4,16],f32>
}

// -----

// A result that feeds no elementwise op (here a view, as before q/k/v
// split) keeps its bias: a separate add would be one more kernel.

// CHECK-LABEL: func.func @no_split_without_fusible_consumer
// CHECK:         torch.aten.linear %{{.+}}, %{{.+}}, %{{.+}} : !torch.vtensor<[4,8],f32>, !torch.vtensor<[16,8],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[4,16],f32>
// CHECK-NOT:     torch.aten.add.Tensor
func.func @no_split_without_fusible_consumer(%x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[16,8],f32>, %b: !torch.vtensor<[16],f32>) -> !torch.vtensor<[64],f32> {
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[16,8],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[4,16],f32>
  %int64 = torch.constant.int 64
  %1 = torch.prim.ListConstruct %int64 : (!torch.int) -> !torch.list<int>
  %2 = torch.aten.view %0, %1 : !torch.vtensor<[4,16],f32>, !torch.list<int> -> !torch.vtensor<[64],f32>
  return %2 : !torch.vtensor<[64],f32>
}

// -----

// nn.Conv2d imports as conv2d(x, w, b, stride, padding, dilation, groups):
// the bias leaves as an add of the [C] bias viewed [C, 1, 1]; with the relu
// it is one group that reads the bias through the view.

// CHECK-LABEL: func.func @split_conv2d_bias
// CHECK-DAG:     %[[B:.+]] = torch.aten.view %arg2, %{{.+}} -> !torch.vtensor<[4,1,1],f32>
// CHECK-DAG:     %[[NONE:.+]] = torch.constant.none
// CHECK:         %[[C:.+]] = torch.aten.conv2d %arg0, %arg1, %[[NONE]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : {{.+}} -> !torch.vtensor<[2,4,8,8],f32>
// CHECK:         %[[ADD:.+]] = torch.aten.add.Tensor %[[C]], %[[B]]
// CHECK-NEXT:    torch.aten.relu %[[ADD]]
// FUSE-LABEL: func.func @split_conv2d_bias
// FUSE:         %[[C:.+]] = torch.aten.conv2d %arg0, %arg1, %{{.+}}
// FUSE-NEXT:    "fusion.group"(%arg2, %[[C]]) ({
// FUSE:           torch.aten.view
// FUSE:           torch.aten.add.Tensor
// FUSE-NEXT:      torch.aten.relu
func.func @split_conv2d_bias(%x: !torch.vtensor<[2,3,8,8],f32>, %w: !torch.vtensor<[4,3,3,3],f32>, %b: !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,8,8],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.conv2d %x, %w, %b, %0, %1, %2, %int1 : !torch.vtensor<[2,3,8,8],f32>, !torch.vtensor<[4,3,3,3],f32>, !torch.vtensor<[4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,4,8,8],f32>
  %4 = torch.aten.relu %3 : !torch.vtensor<[2,4,8,8],f32> -> !torch.vtensor<[2,4,8,8],f32>
  return %4 : !torch.vtensor<[2,4,8,8],f32>
}

// -----

// A conv feeding another conv keeps its bias.

// CHECK-LABEL: func.func @no_split_conv2d_feeding_conv
// CHECK:         torch.aten.conv2d %arg0, %arg1, %arg2
// CHECK-NOT:     torch.aten.add.Tensor
func.func @no_split_conv2d_feeding_conv(%x: !torch.vtensor<[2,3,8,8],f32>, %w: !torch.vtensor<[3,3,1,1],f32>, %b: !torch.vtensor<[3],f32>) -> !torch.vtensor<[2,3,8,8],f32> {
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %s = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %x, %w, %b, %s, %p, %s, %int1 : !torch.vtensor<[2,3,8,8],f32>, !torch.vtensor<[3,3,1,1],f32>, !torch.vtensor<[3],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,3,8,8],f32>
  %1 = torch.aten.conv2d %0, %w, %b, %s, %p, %s, %int1 : !torch.vtensor<[2,3,8,8],f32>, !torch.vtensor<[3,3,1,1],f32>, !torch.vtensor<[3],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,3,8,8],f32>
  return %1 : !torch.vtensor<[2,3,8,8],f32>
}

// -----

// AOTAutograd's linear over [2, 8, 16]: view to [16, 16], addmm, view back
// to [2, 8, 32]. Written back as one matmul over x's rows plus the bias add
// (which fuses with what follows); the [16, 32] product another reader
// (a saved activation) takes stays a view of the new result.
// CHECK-LABEL: func.func @unflatten_row_addmm
// CHECK:         %[[T:.+]] = torch.aten.t %arg1
// CHECK:         %[[M:.+]] = torch.aten.matmul %arg0, %[[T]] : !torch.vtensor<[2,8,16],f32>, !torch.vtensor<[16,32],f32> -> !torch.vtensor<[2,8,32],f32>
// CHECK:         %[[Y:.+]] = torch.aten.add.Tensor %[[M]], %arg2
// CHECK:         %[[F:.+]] = torch.aten.view %[[Y]], %{{.+}} -> !torch.vtensor<[16,32],f32>
// CHECK-NOT:     torch.aten.addmm
// CHECK:         return %[[Y]], %[[F]]
func.func @unflatten_row_addmm(%x: !torch.vtensor<[2,8,16],f32>, %w: !torch.vtensor<[32,16],f32>, %b: !torch.vtensor<[32],f32>) -> (!torch.vtensor<[2,8,32],f32>, !torch.vtensor<[16,32],f32>) {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int8 = torch.constant.int 8
  %int16 = torch.constant.int 16
  %int32 = torch.constant.int 32
  %flat = torch.prim.ListConstruct %int16, %int16 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %x, %flat : !torch.vtensor<[2,8,16],f32>, !torch.list<int> -> !torch.vtensor<[16,16],f32>
  %1 = torch.aten.t %w : !torch.vtensor<[32,16],f32> -> !torch.vtensor<[16,32],f32>
  %2 = torch.aten.addmm %b, %0, %1, %int1, %int1 : !torch.vtensor<[32],f32>, !torch.vtensor<[16,16],f32>, !torch.vtensor<[16,32],f32>, !torch.int, !torch.int -> !torch.vtensor<[16,32],f32>
  %back = torch.prim.ListConstruct %int2, %int8, %int32 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.view %2, %back : !torch.vtensor<[16,32],f32>, !torch.list<int> -> !torch.vtensor<[2,8,32],f32>
  return %3, %2 : !torch.vtensor<[2,8,32],f32>, !torch.vtensor<[16,32],f32>
}

// -----

// The product viewed back to other rows than x's ([4, 4, 32] from
// [2, 8, 16]) is not x's linear: left as it is.
// CHECK-LABEL: func.func @no_unflatten_to_other_rows
// CHECK:         torch.aten.mm
// CHECK-NOT:     torch.aten.matmul
func.func @no_unflatten_to_other_rows(%x: !torch.vtensor<[2,8,16],f32>, %w: !torch.vtensor<[16,32],f32>) -> !torch.vtensor<[4,4,32],f32> {
  %int4 = torch.constant.int 4
  %int16 = torch.constant.int 16
  %int32 = torch.constant.int 32
  %flat = torch.prim.ListConstruct %int16, %int16 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %x, %flat : !torch.vtensor<[2,8,16],f32>, !torch.list<int> -> !torch.vtensor<[16,16],f32>
  %1 = torch.aten.mm %0, %w : !torch.vtensor<[16,16],f32>, !torch.vtensor<[16,32],f32> -> !torch.vtensor<[16,32],f32>
  %back = torch.prim.ListConstruct %int4, %int4, %int32 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.view %1, %back : !torch.vtensor<[16,32],f32>, !torch.list<int> -> !torch.vtensor<[4,4,32],f32>
  return %2 : !torch.vtensor<[4,4,32],f32>
}
