// RUN: mlirfuse-opt %s --split-input-file --mlirfuse-pipeline --emit-triton | filecheck %s

// Falcon's fused qkv (new_decoder_architecture, 2 kv heads for 4 query
// heads): k and v (the query is an argument here) are `qkv[:, :, :, [-2]]` / `[-1]` (literals: the lifted
// index constants), broadcast over the group's 2 query heads and flattened:
// expand -> clone -> _unsafe_view -> transpose(1, 2). The expand of the
// size-1 dim and the merge are a kv-head repeat: the attention kernel reads
// head b1 // 2 of the qkv tensor itself through strides (a squeeze standing
// for the repeat), no copy of k or v, no gather.

// CHECK-LABEL: def fused_view_slice_expand_clone__unsafe_view_0(in1, in0_v0, in0_v1, out0, {{.*}}
// CHECK:         kt = tl.load(in0_v0 + (b0 * in0_v0_st0 + (b1 // 2) * in0_v0_st1 + {{.*}}  # load %arg0.view([2, 8, 2, 4, 8]).slice(3, 2, 3, 1).squeeze(3).transpose(1, 2)
// CHECK:         vt = tl.load(in0_v1 + (b0 * in0_v1_st0 + (b1 // 2) * in0_v1_st1 + {{.*}}  # load %arg0.view([2, 8, 2, 4, 8]).slice(3, 3, 4, 1).squeeze(3).transpose(1, 2)
func.func @fuse_falcon_kv_repeat(%q: !torch.vtensor<[2,4,8,8],f32>, %qkv: !torch.vtensor<[2,8,64],f32>) -> !torch.vtensor<[2,4,8,8],f32> {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int8 = torch.constant.int 8
  %s5 = torch.prim.ListConstruct %int2, %int8, %int2, %int4, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %x = torch.aten.view %qkv, %s5 : !torch.vtensor<[2,8,64],f32>, !torch.list<int> -> !torch.vtensor<[2,8,2,4,8],f32>
  %ck = torch.vtensor.literal(dense<-2> : tensor<1xsi64>) : !torch.vtensor<[1],si64>
  %cv = torch.vtensor.literal(dense<-1> : tensor<1xsi64>) : !torch.vtensor<[1],si64>
  %ik = torch.aten.clone %ck, %none : !torch.vtensor<[1],si64>, !torch.none -> !torch.vtensor<[1],si64>
  %lk = torch.prim.ListConstruct %none, %none, %none, %ik : (!torch.none, !torch.none, !torch.none, !torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %k0 = torch.aten.index.Tensor %x, %lk : !torch.vtensor<[2,8,2,4,8],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,8,2,1,8],f32>
  %iv = torch.aten.clone %cv, %none : !torch.vtensor<[1],si64>, !torch.none -> !torch.vtensor<[1],si64>
  %lv = torch.prim.ListConstruct %none, %none, %none, %iv : (!torch.none, !torch.none, !torch.none, !torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %v0 = torch.aten.index.Tensor %x, %lv : !torch.vtensor<[2,8,2,4,8],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,8,2,1,8],f32>
  %e5 = torch.prim.ListConstruct %int2, %int8, %int2, %int2, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %k1 = torch.aten.expand %k0, %e5, %false : !torch.vtensor<[2,8,2,1,8],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,8,2,2,8],f32>
  %v1 = torch.aten.expand %v0, %e5, %false : !torch.vtensor<[2,8,2,1,8],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,8,2,2,8],f32>
  %s4 = torch.prim.ListConstruct %int2, %int8, %int4, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %k2 = torch.aten.clone %k1, %int0 : !torch.vtensor<[2,8,2,2,8],f32>, !torch.int -> !torch.vtensor<[2,8,2,2,8],f32>
  %k3 = torch.aten._unsafe_view %k2, %s4 : !torch.vtensor<[2,8,2,2,8],f32>, !torch.list<int> -> !torch.vtensor<[2,8,4,8],f32>
  %v2 = torch.aten.clone %v1, %int0 : !torch.vtensor<[2,8,2,2,8],f32>, !torch.int -> !torch.vtensor<[2,8,2,2,8],f32>
  %v3 = torch.aten._unsafe_view %v2, %s4 : !torch.vtensor<[2,8,2,2,8],f32>, !torch.list<int> -> !torch.vtensor<[2,8,4,8],f32>
  %k = torch.aten.transpose.int %k3, %int1, %int2 : !torch.vtensor<[2,8,4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,4,8,8],f32>
  %v = torch.aten.transpose.int %v3, %int1, %int2 : !torch.vtensor<[2,8,4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,4,8,8],f32>
  %o = torch.aten.scaled_dot_product_attention %q, %k, %v, %none, %float0, %false, %none, %false : !torch.vtensor<[2,4,8,8],f32>, !torch.vtensor<[2,4,8,8],f32>, !torch.vtensor<[2,4,8,8],f32>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[2,4,8,8],f32>
  return %o : !torch.vtensor<[2,4,8,8],f32>
}

// -----

// A broadcast merged into the key positions (not the heads) is no kv-head
// repeat: the value is read through its views.

// CHECK-LABEL: def fused_expand__unsafe_view_0(
// CHECK:         vt = tl.load(in0_v0 + (b0 * in0_v0_st0 + b1 * in0_v0_st1 + {{.*}}  # load %arg0.expand([2, 4, 4, 2, 8], False)._unsafe_view([2, 4, 8, 8])
func.func @no_fuse_repeat_of_key_positions(%q: !torch.vtensor<[2,4,8,8],f32>, %v0: !torch.vtensor<[2,4,4,1,8],f32>) -> !torch.vtensor<[2,4,8,8],f32> {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %float0 = torch.constant.float 0.000000e+00
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %int8 = torch.constant.int 8
  %e5 = torch.prim.ListConstruct %int2, %int4, %int4, %int2, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v1 = torch.aten.expand %v0, %e5, %false : !torch.vtensor<[2,4,4,1,8],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,4,4,2,8],f32>
  %s4 = torch.prim.ListConstruct %int2, %int4, %int8, %int8 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten._unsafe_view %v1, %s4 : !torch.vtensor<[2,4,4,2,8],f32>, !torch.list<int> -> !torch.vtensor<[2,4,8,8],f32>
  %o = torch.aten.scaled_dot_product_attention %q, %q, %v, %none, %float0, %false, %none, %false : !torch.vtensor<[2,4,8,8],f32>, !torch.vtensor<[2,4,8,8],f32>, !torch.vtensor<[2,4,8,8],f32>, !torch.none, !torch.float, !torch.bool, !torch.none, !torch.bool -> !torch.vtensor<[2,4,8,8],f32>
  return %o : !torch.vtensor<[2,4,8,8],f32>
}
