// RUN: mlirfuse-opt %s --split-input-file --fusion-fuse-attention | filecheck %s

// scaled_dot_product_attention with is_causal: the op and the views
// splitting the heads become one attention group reading the projections.

// CHECK-LABEL: func.func @fuse_sdpa_causal
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK-NEXT:    ^bb0(%[[Q:.+]]: !torch.vtensor<[1,5,16],f32>, %[[K:.+]]: !torch.vtensor<[1,5,16],f32>, %[[V:.+]]: !torch.vtensor<[1,5,16],f32>):
// CHECK:           %[[QV:.+]] = torch.aten.view %[[Q]]
// CHECK-NEXT:      %[[QT:.+]] = torch.aten.transpose.int %[[QV]]
// CHECK:           %[[KV:.+]] = torch.aten.view %[[K]]
// CHECK-NEXT:      %[[KT:.+]] = torch.aten.transpose.int %[[KV]]
// CHECK:           %[[VV:.+]] = torch.aten.view %[[V]]
// CHECK-NEXT:      %[[VT:.+]] = torch.aten.transpose.int %[[VV]]
// CHECK-NEXT:      %[[O:.+]] = torch.aten.scaled_dot_product_attention %[[QT]], %[[KT]], %[[VT]]
// CHECK-NEXT:      "fusion.yield"(%[[O]])
// CHECK-NEXT:    }) {kind = "attention"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_sdpa_causal(%q: !torch.vtensor<[1,5,16],f32>, %k: !torch.vtensor<[1,5,16],f32>, %v: !torch.vtensor<[1,5,16],f32>) -> !torch.vtensor<[1,2,5,8],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int5 = torch.constant.int 5
  %int8 = torch.constant.int 8
  %none = torch.constant.none
  %float0 = torch.constant.float 0.000000e+00
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %s = torch.prim.ListConstruct %int1, %int5, %int2, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %q, %s : !torch.vtensor<[1,5,16],f32>, !torch.list<int> -> !torch.vtensor<[1,5,2,8],f32>
  %1 = torch.aten.transpose.int %0, %int1, %int2 : !torch.vtensor<[1,5,2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,2,5,8],f32>
  %2 = torch.aten.view %k, %s : !torch.vtensor<[1,5,16],f32>, !torch.list<int> -> !torch.vtensor<[1,5,2,8],f32>
  %3 = torch.aten.transpose.int %2, %int1, %int2 : !torch.vtensor<[1,5,2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,2,5,8],f32>
  %4 = torch.aten.view %v, %s : !torch.vtensor<[1,5,16],f32>, !torch.list<int> -> !torch.vtensor<[1,5,2,8],f32>
  %5 = torch.aten.transpose.int %4, %int1, %int2 : !torch.vtensor<[1,5,2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,2,5,8],f32>
  %6 = torch.aten.scaled_dot_product_attention %1, %3, %5, %none, %float0, %true, %none, %false : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[1,2,5,8],f32>
  return %6 : !torch.vtensor<[1,2,5,8],f32>
}

// -----

// sdpa with a bool mask broadcast over the heads and grouped-query heads
// (enable_gqa: 4 query heads, 2 kv heads): the mask is one more input.

// CHECK-LABEL: func.func @fuse_sdpa_bool_mask_gqa
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2, %arg3) ({
// CHECK:           torch.aten.scaled_dot_product_attention
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "attention"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_sdpa_bool_mask_gqa(%q: !torch.vtensor<[1,4,7,8],bf16>, %k: !torch.vtensor<[1,2,9,8],bf16>, %v: !torch.vtensor<[1,2,9,8],bf16>, %m: !torch.vtensor<[1,1,7,9],i1>) -> !torch.vtensor<[1,4,7,8],bf16> {
  %float0 = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %scale = torch.constant.float 2.500000e-01
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %m, %float0, %false, %scale, %true : !torch.vtensor<[1,4,7,8],bf16>, !torch.vtensor<[1,2,9,8],bf16>, !torch.vtensor<[1,2,9,8],bf16>, !torch.vtensor<[1,1,7,9],i1>, !torch.float, !torch.bool, !torch.float, !torch.bool -> !torch.vtensor<[1,4,7,8],bf16>
  return %0 : !torch.vtensor<[1,4,7,8],bf16>
}

// -----

// Explicit attention as GPT-2's eager code writes it: q @ kᵀ, a scale, an
// additive mask, softmax over the keys, a dtype cast, eval-mode dropout
// (exported as a clone), @ v. Everything from
// kᵀ to the second matmul is one group; the mask is an input.

// CHECK-LABEL: func.func @fuse_explicit_scale_mask
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg1, %arg0, %arg3, %arg2) ({
// CHECK-NEXT:    ^bb0(
// CHECK:           %[[KT:.+]] = torch.aten.transpose.int
// CHECK-NEXT:      %[[S:.+]] = torch.aten.matmul %{{.+}}, %[[KT]]
// CHECK-NEXT:      %[[SC:.+]] = torch.aten.mul.Scalar %[[S]]
// CHECK-NEXT:      %[[SM:.+]] = torch.aten.add.Tensor %[[SC]]
// CHECK-NEXT:      %[[P:.+]] = torch.aten.softmax.int %[[SM]]
// CHECK-NEXT:      %[[PC:.+]] = torch.aten.to.dtype %[[P]]
// CHECK-NEXT:      %[[PD:.+]] = torch.aten.clone %[[PC]]
// CHECK-NEXT:      %[[O:.+]] = torch.aten.matmul %[[PD]]
// CHECK-NEXT:      "fusion.yield"(%[[O]])
// CHECK-NEXT:    }) {kind = "attention"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_explicit_scale_mask(%q: !torch.vtensor<[1,2,5,8],f32>, %k: !torch.vtensor<[1,2,5,8],f32>, %v: !torch.vtensor<[1,2,5,8],f32>, %mask: !torch.vtensor<[1,1,5,5],f32>) -> !torch.vtensor<[1,2,5,8],f32> {
  %int-1 = torch.constant.int -1
  %int-2 = torch.constant.int -2
  %int1 = torch.constant.int 1
  %int6 = torch.constant.int 6
  %false = torch.constant.bool false
  %none = torch.constant.none
  %scale = torch.constant.float 0.35355339059327379
  %0 = torch.aten.transpose.int %k, %int-1, %int-2 : !torch.vtensor<[1,2,5,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,2,8,5],f32>
  %1 = torch.aten.matmul %q, %0 : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,8,5],f32> -> !torch.vtensor<[1,2,5,5],f32>
  %2 = torch.aten.mul.Scalar %1, %scale : !torch.vtensor<[1,2,5,5],f32>, !torch.float -> !torch.vtensor<[1,2,5,5],f32>
  %3 = torch.aten.add.Tensor %2, %mask, %int1 : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[1,1,5,5],f32>, !torch.int -> !torch.vtensor<[1,2,5,5],f32>
  %4 = torch.aten.softmax.int %3, %int-1, %none : !torch.vtensor<[1,2,5,5],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,2,5,5],f32>
  %5 = torch.aten.to.dtype %4, %int6, %false, %false, %none : !torch.vtensor<[1,2,5,5],f32>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,2,5,5],f32>
  %c = torch.aten.clone %5, %none : !torch.vtensor<[1,2,5,5],f32>, !torch.none -> !torch.vtensor<[1,2,5,5],f32>
  %6 = torch.aten.matmul %c, %v : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[1,2,5,8],f32> -> !torch.vtensor<[1,2,5,8],f32>
  return %6 : !torch.vtensor<[1,2,5,8],f32>
}

// -----

// nanoGPT's causal mask: a slice of a buffer compared with 0, then
// masked_fill(-inf). The comparison joins the group (read only there) and
// the buffer is read through the slice's strides.

// CHECK-LABEL: func.func @fuse_explicit_masked_fill
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg3, %arg2) ({
// CHECK:           torch.aten.slice.Tensor
// CHECK:           torch.aten.eq.Scalar
// CHECK:           torch.aten.masked_fill.Scalar
// CHECK:           torch.aten.softmax.int
// CHECK:           torch.aten.matmul
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "attention"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_explicit_masked_fill(%q: !torch.vtensor<[1,2,5,8],f32>, %kt: !torch.vtensor<[1,2,8,5],f32>, %v: !torch.vtensor<[1,2,5,8],f32>, %bias: !torch.vtensor<[1,1,16,16],f32>) -> !torch.vtensor<[1,2,5,8],f32> {
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int5 = torch.constant.int 5
  %none = torch.constant.none
  %ninf = torch.constant.float 0xFFF0000000000000
  %0 = torch.aten.matmul %q, %kt : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,8,5],f32> -> !torch.vtensor<[1,2,5,5],f32>
  %1 = torch.aten.slice.Tensor %bias, %int2, %int0, %int5, %int1 : !torch.vtensor<[1,1,16,16],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,5,16],f32>
  %2 = torch.aten.slice.Tensor %1, %int3, %int0, %int5, %int1 : !torch.vtensor<[1,1,5,16],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,1,5,5],f32>
  %3 = torch.aten.eq.Scalar %2, %int0 : !torch.vtensor<[1,1,5,5],f32>, !torch.int -> !torch.vtensor<[1,1,5,5],i1>
  %4 = torch.aten.masked_fill.Scalar %0, %3, %ninf : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[1,1,5,5],i1>, !torch.float -> !torch.vtensor<[1,2,5,5],f32>
  %5 = torch.aten.softmax.int %4, %int-1, %none : !torch.vtensor<[1,2,5,5],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,2,5,5],f32>
  %6 = torch.aten.matmul %5, %v : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[1,2,5,8],f32> -> !torch.vtensor<[1,2,5,8],f32>
  return %6 : !torch.vtensor<[1,2,5,8],f32>
}

// -----

// Llama's eager attention with GQA: repeat_kv (as exported: unsqueeze,
// expand, clone, _unsafe_view) of k joins the group: kv head h // 2 serves
// query head h, nothing is copied.

// CHECK-LABEL: func.func @fuse_explicit_repeat_kv
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg1, %arg0, %arg2) ({
// CHECK:           torch.aten.unsqueeze
// CHECK-NEXT:      torch.aten.expand
// CHECK-NEXT:      torch.aten.clone
// CHECK-NEXT:      torch.aten._unsafe_view
// CHECK:           torch.aten.matmul
// CHECK:           torch.aten.matmul
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "attention"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_explicit_repeat_kv(%q: !torch.vtensor<[1,4,5,8],f32>, %k: !torch.vtensor<[1,2,5,8],f32>, %v: !torch.vtensor<[1,4,5,8],f32>) -> !torch.vtensor<[1,4,5,8],f32> {
  %int-1 = torch.constant.int -1
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int5 = torch.constant.int 5
  %int8 = torch.constant.int 8
  %false = torch.constant.bool false
  %none = torch.constant.none
  %0 = torch.aten.unsqueeze %k, %int2 : !torch.vtensor<[1,2,5,8],f32>, !torch.int -> !torch.vtensor<[1,2,1,5,8],f32>
  %e = torch.prim.ListConstruct %int1, %int2, %int2, %int5, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.expand %0, %e, %false : !torch.vtensor<[1,2,1,5,8],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,2,5,8],f32>
  %int0 = torch.constant.int 0
  %c = torch.aten.clone %1, %int0 : !torch.vtensor<[1,2,2,5,8],f32>, !torch.int -> !torch.vtensor<[1,2,2,5,8],f32>
  %r = torch.prim.ListConstruct %int1, %int4, %int5, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten._unsafe_view %c, %r : !torch.vtensor<[1,2,2,5,8],f32>, !torch.list<int> -> !torch.vtensor<[1,4,5,8],f32>
  %3 = torch.aten.transpose.int %2, %int2, %int3 : !torch.vtensor<[1,4,5,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,4,8,5],f32>
  %4 = torch.aten.matmul %q, %3 : !torch.vtensor<[1,4,5,8],f32>, !torch.vtensor<[1,4,8,5],f32> -> !torch.vtensor<[1,4,5,5],f32>
  %5 = torch.aten.softmax.int %4, %int-1, %none : !torch.vtensor<[1,4,5,5],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,4,5,5],f32>
  %6 = torch.aten.matmul %5, %v : !torch.vtensor<[1,4,5,5],f32>, !torch.vtensor<[1,4,5,8],f32> -> !torch.vtensor<[1,4,5,8],f32>
  return %6 : !torch.vtensor<[1,4,5,8],f32>
}

// -----

// Dropout on the weights: the kernel has no random numbers. Nothing is
// grouped; the sdpa op says why.

// CHECK-LABEL: func.func @no_fuse_sdpa_dropout
// CHECK-NOT:     fusion.group
// CHECK:         torch.aten.scaled_dot_product_attention {{.*}} {fusion.explain = ["attention not fused: dropout_p 0.1 is not 0 (the kernel has no random numbers)"]}
func.func @no_fuse_sdpa_dropout(%q: !torch.vtensor<[1,2,5,8],f32>, %k: !torch.vtensor<[1,2,5,8],f32>, %v: !torch.vtensor<[1,2,5,8],f32>) -> !torch.vtensor<[1,2,5,8],f32> {
  %none = torch.constant.none
  %p = torch.constant.float 1.000000e-01
  %false = torch.constant.bool false
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %none, %p, %false, %none, %false : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[1,2,5,8],f32>
  return %0 : !torch.vtensor<[1,2,5,8],f32>
}

// -----

// An integer mask: sdpa takes bool or float masks only.

// CHECK-LABEL: func.func @no_fuse_sdpa_int_mask
// CHECK-NOT:     fusion.group
// CHECK:         torch.aten.scaled_dot_product_attention {{.*}} {fusion.explain = ["attention not fused: attn_mask of dtype int64 (only bool or float masks)"]}
func.func @no_fuse_sdpa_int_mask(%q: !torch.vtensor<[1,2,5,8],f32>, %k: !torch.vtensor<[1,2,5,8],f32>, %v: !torch.vtensor<[1,2,5,8],f32>, %m: !torch.vtensor<[5,5],si64>) -> !torch.vtensor<[1,2,5,8],f32> {
  %none = torch.constant.none
  %p = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %m, %p, %false, %none, %false : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[5,5],si64>, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[1,2,5,8],f32>
  return %0 : !torch.vtensor<[1,2,5,8],f32>
}

// -----

// A mask with a `?` where the scores are static: not known to broadcast (a `?` size must stand where the
// scores have one, or be static).

// CHECK-LABEL: func.func @no_fuse_explicit_dynamic_mask
// CHECK-NOT:     fusion.group
// CHECK:         torch.aten.matmul {{.*}} {fusion.explain = ["attention not fused: a mask of shape [None, 5] does not broadcast to the scores [1, 2, 5, 5]"]}
func.func @no_fuse_explicit_dynamic_mask(%q: !torch.vtensor<[1,2,5,8],f32>, %kt: !torch.vtensor<[1,2,8,5],f32>, %v: !torch.vtensor<[1,2,5,8],f32>, %mask: !torch.vtensor<[?,5],f32>) -> !torch.vtensor<[1,2,5,8],f32> {
  %int-1 = torch.constant.int -1
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.matmul %q, %kt : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,8,5],f32> -> !torch.vtensor<[1,2,5,5],f32>
  %1 = torch.aten.add.Tensor %0, %mask, %int1 : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[?,5],f32>, !torch.int -> !torch.vtensor<[1,2,5,5],f32>
  %2 = torch.aten.softmax.int %1, %int-1, %none : !torch.vtensor<[1,2,5,5],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,2,5,5],f32>
  %3 = torch.aten.matmul %2, %v : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[1,2,5,8],f32> -> !torch.vtensor<[1,2,5,8],f32>
  return %3 : !torch.vtensor<[1,2,5,8],f32>
}

// -----

// The attention weights are also returned (output_attentions): grouping would
// compute them twice.

// CHECK-LABEL: func.func @no_fuse_weights_read_elsewhere
// CHECK-NOT:     fusion.group
// CHECK:         torch.aten.matmul {{.*}} {fusion.explain = ["attention not fused: the attention weights are read outside the attention"]}
func.func @no_fuse_weights_read_elsewhere(%q: !torch.vtensor<[1,2,5,8],f32>, %kt: !torch.vtensor<[1,2,8,5],f32>, %v: !torch.vtensor<[1,2,5,8],f32>) -> (!torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,5],f32>) {
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %0 = torch.aten.matmul %q, %kt : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,8,5],f32> -> !torch.vtensor<[1,2,5,5],f32>
  %1 = torch.aten.softmax.int %0, %int-1, %none : !torch.vtensor<[1,2,5,5],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,2,5,5],f32>
  %2 = torch.aten.matmul %1, %v : !torch.vtensor<[1,2,5,5],f32>, !torch.vtensor<[1,2,5,8],f32> -> !torch.vtensor<[1,2,5,8],f32>
  return %2, %1 : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,5],f32>
}

// -----

// A plain matmul is no attention: nothing happens, nothing is said.

// CHECK-LABEL: func.func @no_fuse_plain_matmul
// CHECK-NOT:     fusion
func.func @no_fuse_plain_matmul(%a: !torch.vtensor<[4,8],f32>, %b: !torch.vtensor<[8,3],f32>) -> !torch.vtensor<[4,3],f32> {
  %0 = torch.aten.matmul %a, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,3],f32> -> !torch.vtensor<[4,3],f32>
  return %0 : !torch.vtensor<[4,3],f32>
}

// -----

// `?` batch, query and key lengths (a dynamic batch and sequence): one attention group; the kernel takes the
// sizes per launch. Head dims must be static.

// CHECK-LABEL: func.func @fuse_explicit_dynamic_lengths
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg3, %arg2) ({
// CHECK:           torch.aten.matmul
// CHECK:           torch.aten.add.Tensor
// CHECK:           torch.aten.softmax.int
// CHECK:           torch.aten.matmul
// CHECK:         }) {kind = "attention"}
func.func @fuse_explicit_dynamic_lengths(%q: !torch.vtensor<[?,2,?,8],f32>, %kt: !torch.vtensor<[?,2,8,?],f32>, %v: !torch.vtensor<[?,2,?,8],f32>, %mask: !torch.vtensor<[1,1,?,?],f32>) -> !torch.vtensor<[?,2,?,8],f32> {
  %int-1 = torch.constant.int -1
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.matmul %q, %kt : !torch.vtensor<[?,2,?,8],f32>, !torch.vtensor<[?,2,8,?],f32> -> !torch.vtensor<[?,2,?,?],f32>
  %1 = torch.aten.add.Tensor %0, %mask, %int1 : !torch.vtensor<[?,2,?,?],f32>, !torch.vtensor<[1,1,?,?],f32>, !torch.int -> !torch.vtensor<[?,2,?,?],f32>
  %2 = torch.aten.softmax.int %1, %int-1, %none : !torch.vtensor<[?,2,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[?,2,?,?],f32>
  %3 = torch.aten.matmul %2, %v : !torch.vtensor<[?,2,?,?],f32>, !torch.vtensor<[?,2,?,8],f32> -> !torch.vtensor<[?,2,?,8],f32>
  return %3 : !torch.vtensor<[?,2,?,8],f32>
}

// -----

// A `?` head dim stays unfused.

// CHECK-LABEL: func.func @no_fuse_dynamic_head_dim
// CHECK-NOT:     fusion.group
// CHECK:         torch.aten.scaled_dot_product_attention {{.*}} {fusion.explain = ["attention not fused: q, k and v must be f32, f16 or bf16 tensors with static head dims"]}
func.func @no_fuse_dynamic_head_dim(%q: !torch.vtensor<[1,2,5,?],f32>, %k: !torch.vtensor<[1,2,5,?],f32>, %v: !torch.vtensor<[1,2,5,?],f32>) -> !torch.vtensor<[1,2,5,?],f32> {
  %none = torch.constant.none
  %p = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %none, %p, %false, %none, %false : !torch.vtensor<[1,2,5,?],f32>, !torch.vtensor<[1,2,5,?],f32>, !torch.vtensor<[1,2,5,?],f32>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[1,2,5,?],f32>
  return %0 : !torch.vtensor<[1,2,5,?],f32>
}

// -----

// RoPE on q and k (`q * cos + rotate_half(q) * sin`, rotate_half a cat of
// the negated upper half and the lower half) read only by the attention:
// a prologue of the attention group, which reads the projections, cos and
// sin (broadcast over the heads through their unsqueeze).

// CHECK-LABEL: func.func @fuse_sdpa_rope_prologue
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg3, %arg4, %arg0, %arg1, %arg2) ({
// CHECK-COUNT-2:   torch.aten.cat
// CHECK:           torch.aten.scaled_dot_product_attention
// CHECK-NEXT:      "fusion.yield"
// CHECK-NEXT:    }) {kind = "attention"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_sdpa_rope_prologue(%q: !torch.vtensor<[1,5,16],f32>, %k: !torch.vtensor<[1,5,16],f32>, %v: !torch.vtensor<[1,5,16],f32>, %cos: !torch.vtensor<[1,5,8],f32>, %sin: !torch.vtensor<[1,5,8],f32>) -> !torch.vtensor<[1,2,5,8],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int5 = torch.constant.int 5
  %int8 = torch.constant.int 8
  %int-1 = torch.constant.int -1
  %end = torch.constant.int 9223372036854775807
  %none = torch.constant.none
  %float0 = torch.constant.float 0.000000e+00
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %shape = torch.prim.ListConstruct %int1, %int5, %int2, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %c = torch.aten.unsqueeze %cos, %int1 : !torch.vtensor<[1,5,8],f32>, !torch.int -> !torch.vtensor<[1,1,5,8],f32>
  %s = torch.aten.unsqueeze %sin, %int1 : !torch.vtensor<[1,5,8],f32>, !torch.int -> !torch.vtensor<[1,1,5,8],f32>
  %0 = torch.aten.view %q, %shape : !torch.vtensor<[1,5,16],f32>, !torch.list<int> -> !torch.vtensor<[1,5,2,8],f32>
  %1 = torch.aten.transpose.int %0, %int1, %int2 : !torch.vtensor<[1,5,2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,2,5,8],f32>
  %2 = torch.aten.mul.Tensor %1, %c : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,1,5,8],f32> -> !torch.vtensor<[1,2,5,8],f32>
  %3 = torch.aten.slice.Tensor %1, %int3, %int0, %int4, %int1 : !torch.vtensor<[1,2,5,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,5,4],f32>
  %4 = torch.aten.slice.Tensor %1, %int3, %int4, %end, %int1 : !torch.vtensor<[1,2,5,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,5,4],f32>
  %5 = torch.aten.neg %4 : !torch.vtensor<[1,2,5,4],f32> -> !torch.vtensor<[1,2,5,4],f32>
  %6 = torch.prim.ListConstruct %5, %3 : (!torch.vtensor<[1,2,5,4],f32>, !torch.vtensor<[1,2,5,4],f32>) -> !torch.list<vtensor>
  %7 = torch.aten.cat %6, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,2,5,8],f32>
  %8 = torch.aten.mul.Tensor %7, %s : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,1,5,8],f32> -> !torch.vtensor<[1,2,5,8],f32>
  %9 = torch.aten.add.Tensor %2, %8, %int1 : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.int -> !torch.vtensor<[1,2,5,8],f32>
  %10 = torch.aten.view %k, %shape : !torch.vtensor<[1,5,16],f32>, !torch.list<int> -> !torch.vtensor<[1,5,2,8],f32>
  %11 = torch.aten.transpose.int %10, %int1, %int2 : !torch.vtensor<[1,5,2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,2,5,8],f32>
  %12 = torch.aten.mul.Tensor %11, %c : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,1,5,8],f32> -> !torch.vtensor<[1,2,5,8],f32>
  %13 = torch.aten.slice.Tensor %11, %int3, %int0, %int4, %int1 : !torch.vtensor<[1,2,5,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,5,4],f32>
  %14 = torch.aten.slice.Tensor %11, %int3, %int4, %end, %int1 : !torch.vtensor<[1,2,5,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,2,5,4],f32>
  %15 = torch.aten.neg %14 : !torch.vtensor<[1,2,5,4],f32> -> !torch.vtensor<[1,2,5,4],f32>
  %16 = torch.prim.ListConstruct %15, %13 : (!torch.vtensor<[1,2,5,4],f32>, !torch.vtensor<[1,2,5,4],f32>) -> !torch.list<vtensor>
  %17 = torch.aten.cat %16, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,2,5,8],f32>
  %18 = torch.aten.mul.Tensor %17, %s : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,1,5,8],f32> -> !torch.vtensor<[1,2,5,8],f32>
  %19 = torch.aten.add.Tensor %12, %18, %int1 : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.int -> !torch.vtensor<[1,2,5,8],f32>
  %20 = torch.aten.view %v, %shape : !torch.vtensor<[1,5,16],f32>, !torch.list<int> -> !torch.vtensor<[1,5,2,8],f32>
  %21 = torch.aten.transpose.int %20, %int1, %int2 : !torch.vtensor<[1,5,2,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,2,5,8],f32>
  %22 = torch.aten.scaled_dot_product_attention %9, %19, %21, %none, %float0, %true, %none, %false : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[1,2,5,8],f32>
  return %22 : !torch.vtensor<[1,2,5,8],f32>
}

// -----

// A scale and a cast on q (`(q * 0.5).to(bf16)`) join as a prologue; k,
// scaled by a computed tensor broadcast over the heads, joins without what
// computes that tensor (the exp, over a smaller index space: an input).

// CHECK-LABEL: func.func @fuse_sdpa_scale_cast_prologue
// CHECK:         %[[E:.+]] = torch.aten.exp %arg3
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0, %arg1, %[[E]], %arg2) ({
// CHECK:           torch.aten.mul.Scalar
// CHECK-NEXT:      torch.aten._to_copy
// CHECK-NEXT:      torch.aten.mul.Tensor
// CHECK-NEXT:      torch.aten.scaled_dot_product_attention
// CHECK:         }) {kind = "attention"}
// CHECK-NEXT:    return %[[G]]
func.func @fuse_sdpa_scale_cast_prologue(%q: !torch.vtensor<[1,2,5,8],f32>, %k: !torch.vtensor<[1,2,5,8],bf16>, %v: !torch.vtensor<[1,2,5,8],bf16>, %w: !torch.vtensor<[1,1,5,8],bf16>) -> !torch.vtensor<[1,2,5,8],bf16> {
  %int15 = torch.constant.int 15
  %none = torch.constant.none
  %half = torch.constant.float 5.000000e-01
  %float0 = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %0 = torch.aten.mul.Scalar %q, %half : !torch.vtensor<[1,2,5,8],f32>, !torch.float -> !torch.vtensor<[1,2,5,8],f32>
  %1 = torch.aten._to_copy %0, %int15, %none, %none, %none, %false, %none : !torch.vtensor<[1,2,5,8],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[1,2,5,8],bf16>
  %2 = torch.aten.exp %w : !torch.vtensor<[1,1,5,8],bf16> -> !torch.vtensor<[1,1,5,8],bf16>
  %3 = torch.aten.mul.Tensor %k, %2 : !torch.vtensor<[1,2,5,8],bf16>, !torch.vtensor<[1,1,5,8],bf16> -> !torch.vtensor<[1,2,5,8],bf16>
  %4 = torch.aten.scaled_dot_product_attention %1, %3, %v, %none, %float0, %false, %none, %false : !torch.vtensor<[1,2,5,8],bf16>, !torch.vtensor<[1,2,5,8],bf16>, !torch.vtensor<[1,2,5,8],bf16>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[1,2,5,8],bf16>
  return %4 : !torch.vtensor<[1,2,5,8],bf16>
}

// -----

// k's prologue result is returned too (a cache would store it): it is
// computed outside and read by the attention, with the reason on the group.

// CHECK-LABEL: func.func @no_fuse_prologue_read_elsewhere
// CHECK:         %[[K:.+]] = torch.aten.mul.Scalar %arg1
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0, %[[K]], %arg2) ({
// CHECK:         }) {fusion.explain = ["prologue not fused: k is computed by 'torch.aten.mul.Scalar', whose result is read outside the attention too"], kind = "attention"}
// CHECK-NEXT:    return %[[G]], %[[K]]
func.func @no_fuse_prologue_read_elsewhere(%q: !torch.vtensor<[1,2,5,8],f32>, %k: !torch.vtensor<[1,2,5,8],f32>, %v: !torch.vtensor<[1,2,5,8],f32>) -> (!torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>) {
  %none = torch.constant.none
  %two = torch.constant.float 2.000000e+00
  %float0 = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %0 = torch.aten.mul.Scalar %k, %two : !torch.vtensor<[1,2,5,8],f32>, !torch.float -> !torch.vtensor<[1,2,5,8],f32>
  %1 = torch.aten.scaled_dot_product_attention %q, %0, %v, %none, %float0, %false, %none, %false : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[1,2,5,8],f32>
  return %1, %0 : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>
}

// -----

// q computed by a cumsum along the head dim: not pointwise over q's index
// space, so q is an input, with the reason on the group.

// CHECK-LABEL: func.func @no_fuse_prologue_not_pointwise
// CHECK:         %[[Q:.+]] = torch.aten.cumsum %arg0
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%[[Q]], %arg1, %arg2) ({
// CHECK:         }) {fusion.explain = ["prologue not fused: q is computed by 'torch.aten.cumsum', which is not pointwise over q's index space"], kind = "attention"}
func.func @no_fuse_prologue_not_pointwise(%q: !torch.vtensor<[1,2,5,8],f32>, %k: !torch.vtensor<[1,2,5,8],f32>, %v: !torch.vtensor<[1,2,5,8],f32>) -> !torch.vtensor<[1,2,5,8],f32> {
  %none = torch.constant.none
  %int-1 = torch.constant.int -1
  %float0 = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %0 = torch.aten.cumsum %q, %int-1, %none : !torch.vtensor<[1,2,5,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,2,5,8],f32>
  %1 = torch.aten.scaled_dot_product_attention %0, %k, %v, %none, %float0, %false, %none, %false : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[1,2,5,8],f32>
  return %1 : !torch.vtensor<[1,2,5,8],f32>
}

// -----

// The output's heads merged back into the rows and copied
// (`o.transpose(1, 2).contiguous()`): the copy is the group's result, which
// the kernel stores in that layout. A view after the copy stays outside.

// CHECK-LABEL: func.func @fuse_sdpa_relaid_output
// CHECK:         %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           %[[O:.+]] = torch.aten.scaled_dot_product_attention
// CHECK-NEXT:      %[[T:.+]] = torch.aten.transpose.int %[[O]]
// CHECK-NEXT:      %[[C:.+]] = torch.aten.clone %[[T]]
// CHECK-NEXT:      "fusion.yield"(%[[C]])
// CHECK-NEXT:    }) {kind = "attention"}
// CHECK:         %[[V:.+]] = torch.aten.view %[[G]]
// CHECK-NEXT:    return %[[V]]
func.func @fuse_sdpa_relaid_output(%q: !torch.vtensor<[1,2,5,8],f32>, %k: !torch.vtensor<[1,2,5,8],f32>, %v: !torch.vtensor<[1,2,5,8],f32>) -> !torch.vtensor<[1,5,16],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int5 = torch.constant.int 5
  %int16 = torch.constant.int 16
  %none = torch.constant.none
  %float0 = torch.constant.float 0.000000e+00
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %none, %float0, %true, %none, %false : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[1,2,5,8],f32>
  %1 = torch.aten.transpose.int %0, %int1, %int2 : !torch.vtensor<[1,2,5,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,5,2,8],f32>
  %2 = torch.aten.clone %1, %none : !torch.vtensor<[1,5,2,8],f32>, !torch.none -> !torch.vtensor<[1,5,2,8],f32>
  %s = torch.prim.ListConstruct %int1, %int5, %int16 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.view %2, %s : !torch.vtensor<[1,5,2,8],f32>, !torch.list<int> -> !torch.vtensor<[1,5,16],f32>
  return %3 : !torch.vtensor<[1,5,16],f32>
}

// -----

// The transposed output read by two ops: not a copy only the attention
// feeds, so the output is stored as it is and the transpose stays outside.

// CHECK-LABEL: func.func @no_fuse_relaid_output_read_twice
// CHECK:         }) {kind = "attention"}
// CHECK-NEXT:    %[[T:.+]] = torch.aten.transpose.int
// CHECK-NEXT:    torch.aten.clone %[[T]]
func.func @no_fuse_relaid_output_read_twice(%q: !torch.vtensor<[1,2,5,8],f32>, %k: !torch.vtensor<[1,2,5,8],f32>, %v: !torch.vtensor<[1,2,5,8],f32>) -> (!torch.vtensor<[1,5,2,8],f32>, !torch.vtensor<[1,5,2,8],f32>) {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %none = torch.constant.none
  %float0 = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %none, %float0, %false, %none, %false : !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.vtensor<[1,2,5,8],f32>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[1,2,5,8],f32>
  %1 = torch.aten.transpose.int %0, %int1, %int2 : !torch.vtensor<[1,2,5,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,5,2,8],f32>
  %2 = torch.aten.clone %1, %none : !torch.vtensor<[1,5,2,8],f32>, !torch.none -> !torch.vtensor<[1,5,2,8],f32>
  %3 = torch.aten.exp %1 : !torch.vtensor<[1,5,2,8],f32> -> !torch.vtensor<[1,5,2,8],f32>
  return %2, %3 : !torch.vtensor<[1,5,2,8],f32>, !torch.vtensor<[1,5,2,8],f32>
}
