// RUN: mlirfuse-opt %s --split-input-file --fusion-explain --pass-pipeline='builtin.module(fusion-fuse-vertical, fusion-fuse-horizontal, fusion-fuse-concat, fusion-mark-persistent)' | filecheck %s

// Concat as an exit node: a cat of pointwise group results is written by
// one kernel straight into slices of the cat's buffer (see
// Lowering/triton-concat.mlir); the cat result is never read inside.

// Pieces of different sizes along the cat dim: the groups computing them and
// the cat become one concat group; the cat is only yielded (an exit node),
// the input piece %c joins as a group input, the exported sigmoid stays a
// result.

// CHECK-LABEL: func.func @fuse_concat_exit
// CHECK-NEXT:    %[[G:.+]]:2 = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK-NEXT:    ^bb0(%[[A:.+]]: !torch.vtensor<[4,8],f32>, %[[B:.+]]: !torch.vtensor<[4,16],f32>, %[[C:.+]]: !torch.vtensor<[4,4],f32>):
// CHECK-NEXT:      %[[S:.+]] = torch.aten.sigmoid %[[A]]
// CHECK-NEXT:      %[[T:.+]] = torch.aten.tanh %[[B]]
// CHECK:           %[[L:.+]] = torch.prim.ListConstruct %[[S]], %[[T]], %[[C]]
// CHECK-NEXT:      %[[CAT:.+]] = torch.aten.cat %[[L]]
// CHECK-NEXT:      "fusion.yield"(%[[CAT]], %[[S]])
// CHECK-NEXT:    }) {kind = "concat"}
// CHECK-NEXT:    return %[[G]]#0, %[[G]]#1

func.func @fuse_concat_exit(%a: !torch.vtensor<[4,8],f32>, %b: !torch.vtensor<[4,16],f32>, %c: !torch.vtensor<[4,4],f32>) -> (!torch.vtensor<[4,28],f32>, !torch.vtensor<[4,8],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.sigmoid %a : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.tanh %b : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
  %l = torch.prim.ListConstruct %0, %1, %c : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,16],f32>, !torch.vtensor<[4,4],f32>) -> !torch.list<vtensor>
  %2 = torch.aten.cat %l, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,28],f32>
  return %2, %0 : !torch.vtensor<[4,28],f32>, !torch.vtensor<[4,8],f32>
}

// -----

// Horizontal and concat at once: two independent groups reading %a.

// CHECK-LABEL: func.func @fuse_concat_same_size_pieces
// CHECK-COUNT-1: "fusion.group"
// CHECK-NOT:     "fusion.group"
// CHECK:           torch.aten.relu
// CHECK:           torch.aten.mul.Tensor
// CHECK:           torch.aten.cat
// CHECK:         }) {kind = "concat"}

func.func @fuse_concat_same_size_pieces(%a: !torch.vtensor<[2,8],f32>, %b: !torch.vtensor<[2,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.relu %a : !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
  %1 = torch.aten.mul.Tensor %a, %b : !torch.vtensor<[2,8],f32>, !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
  %l = torch.prim.ListConstruct %0, %1 : (!torch.vtensor<[2,8],f32>, !torch.vtensor<[2,8],f32>) -> !torch.list<vtensor>
  %2 = torch.aten.cat %l, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,8],f32>
  return %2 : !torch.vtensor<[4,8],f32>
}

// -----

// The second piece is computed from the first through mm: one group for
// both would have to run before and after mm.

// CHECK-LABEL: func.func @no_fuse_concat_cycle
// CHECK:         fusion.explain = ["consumer torch.aten.mm: unsupported op", "consumer torch.aten.cat: cycle"], kind = "pointwise"
// CHECK:         torch.aten.mm
// CHECK:         fusion.explain = ["producer torch.aten.mm: unsupported op", "consumer torch.aten.cat: cycle"], kind = "pointwise"
// CHECK:         torch.aten.cat

func.func @no_fuse_concat_cycle(%x: !torch.vtensor<[4,8],f32>, %w: !torch.vtensor<[8,8],f32>) -> !torch.vtensor<[4,16],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.sigmoid %x : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %1 = torch.aten.mm %0, %w : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[4,8],f32>
  %2 = torch.aten.tanh %1 : !torch.vtensor<[4,8],f32> -> !torch.vtensor<[4,8],f32>
  %l = torch.prim.ListConstruct %0, %2 : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) -> !torch.list<vtensor>
  %3 = torch.aten.cat %l, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,16],f32>
  return %3 : !torch.vtensor<[4,16],f32>
}

// -----

// A reduction result is a row per output element: not a concat piece (yet).

// CHECK-LABEL: func.func @no_fuse_concat_of_reduction
// CHECK:         fusion.explain = ["consumer torch.aten.cat: cat of a reduction result"], kind = "persistent-reduction"
// CHECK:         torch.aten.cat

func.func @no_fuse_concat_of_reduction(%x: !torch.vtensor<[4,8],f32>, %y: !torch.vtensor<[4,1],f32>) -> !torch.vtensor<[4,2],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %none = torch.constant.none
  %d = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.sum.dim_IntList %x, %d, %true, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,1],f32>
  %l = torch.prim.ListConstruct %0, %y : (!torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %l, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,2],f32>
  return %1 : !torch.vtensor<[4,2],f32>
}

// -----

// No piece is computed: not a concat exit; fusion-fuse-vertical makes the
// cat of inputs a pointwise group that reads each piece in its range.

// CHECK-LABEL: func.func @no_fuse_concat_of_inputs
// CHECK:         "fusion.group"(%arg0, %arg1)
// CHECK:           torch.aten.cat
// CHECK:         }) {kind = "pointwise"}

func.func @no_fuse_concat_of_inputs(%x: !torch.vtensor<[4,8],f32>, %y: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[8,8],f32> {
  %int0 = torch.constant.int 0
  %l = torch.prim.ListConstruct %x, %y : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>) -> !torch.list<vtensor>
  %0 = torch.aten.cat %l, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[8,8],f32>
  return %0 : !torch.vtensor<[8,8],f32>
}

// -----
// A piece computed from another cat (fuzz seed 71100085): the piece's
// group holds that cat, and a concat kernel writes exactly one cat; the
// outer cat is instead the exit of one pointwise group over its shape,
// which evaluates each piece at the piece's coordinates (the inner cat, a
// result of the piece's group, included).

// CHECK-LABEL: func.func @fuse_cat_exit_of_a_cat_piece
// CHECK-NEXT:    %[[G:.+]] = "fusion.group"(%arg0, %arg1, %arg2) ({
// CHECK:           %[[IN:.+]] = torch.aten.cat %{{.*}}, %int0
// CHECK:           torch.aten.relu %[[IN]]
// CHECK:           torch.aten.abs
// CHECK:           %[[OUT:.+]] = torch.aten.cat %{{.*}}, %int-1
// CHECK-NEXT:      "fusion.yield"(%[[OUT]])
// CHECK-NEXT:    }) {kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]

func.func @fuse_cat_exit_of_a_cat_piece(%x: !torch.vtensor<[1],f32>, %y: !torch.vtensor<[1],f32>, %z: !torch.vtensor<[1],f32>) -> !torch.vtensor<[5],f32> {
  %int0 = torch.constant.int 0
  %l0 = torch.prim.ListConstruct %x, %y : (!torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>) -> !torch.list<vtensor>
  %0 = torch.aten.cat %l0, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>
  %2 = torch.aten.abs %z : !torch.vtensor<[1],f32> -> !torch.vtensor<[1],f32>
  %l1 = torch.prim.ListConstruct %1, %2, %0 : (!torch.vtensor<[2],f32>, !torch.vtensor<[1],f32>, !torch.vtensor<[2],f32>) -> !torch.list<vtensor>
  %int-1 = torch.constant.int -1
  %3 = torch.aten.cat %l1, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[5],f32>
  return %3 : !torch.vtensor<[5],f32>
}

// -----

// A piece's group already reads a cat of its inputs (fuzz seed 515123:
// cat(x1, x2) * 2 and the cat itself are pieces of an outer cat): not a
// concat group (the verifier rejects one holding two cats) but a pointwise
// group whose result is the outer cat.

// CHECK-LABEL: func.func @fuse_cat_exit_of_a_cat_reading_group
// CHECK-COUNT-1: "fusion.group"
// CHECK-NOT:     "fusion.group"
// CHECK:           torch.aten.mul.Scalar
// CHECK:           %[[OUT:.+]] = torch.aten.cat %{{.*}}, %int-1
// CHECK-NEXT:      "fusion.yield"(%[[OUT]])
// CHECK-NEXT:    }) {kind = "pointwise"}

func.func @fuse_cat_exit_of_a_cat_reading_group(%arg0: !torch.vtensor<[5,3],f32>, %arg1: !torch.vtensor<[5,3],f32>, %arg2: !torch.vtensor<[5,3],f32>) -> !torch.vtensor<[5,15],f32> {
  %0 = torch.prim.ListConstruct %arg0, %arg1 : (!torch.vtensor<[5,3],f32>, !torch.vtensor<[5,3],f32>) -> !torch.list<vtensor>
  %int1 = torch.constant.int 1
  %1 = torch.aten.cat %0, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[5,6],f32>
  %int2 = torch.constant.int 2
  %2 = torch.aten.mul.Scalar %1, %int2 : !torch.vtensor<[5,6],f32>, !torch.int -> !torch.vtensor<[5,6],f32>
  %3 = torch.prim.ListConstruct %2, %arg2, %1 : (!torch.vtensor<[5,6],f32>, !torch.vtensor<[5,3],f32>, !torch.vtensor<[5,6],f32>) -> !torch.list<vtensor>
  %int-1 = torch.constant.int -1
  %4 = torch.aten.cat %3, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[5,15],f32>
  return %4 : !torch.vtensor<[5,15],f32>
}

// -----

// A partial rotary embedding (GPT-NeoX, Phi): q and k each rotate their
// first 4 features (rotate-half: a cat inside the rotating group) and keep
// the rest; `cat(rotated, pass-through)` of each is what attention reads.
// Both cats and the group computing both rotations become one pointwise
// group over [2, 8] with the two cats as its results; the pass-through
// slices are its inputs.

// CHECK-LABEL: func.func @fuse_cat_exits_partial_rotary
// CHECK:         %[[G:.+]]:2 = "fusion.group"
// CHECK-COUNT-2:   torch.aten.neg
// CHECK:           %[[Q:.+]] = torch.aten.cat %{{.*}} -> !torch.vtensor<[2,8],f32>
// CHECK:           %[[K:.+]] = torch.aten.cat %{{.*}} -> !torch.vtensor<[2,8],f32>
// CHECK-NEXT:      "fusion.yield"(%[[K]], %[[Q]])
// CHECK-NEXT:    }) {{.*}}kind = "pointwise"}
// CHECK-NEXT:    return %[[G]]#1, %[[G]]#0

func.func @fuse_cat_exits_partial_rotary(%q: !torch.vtensor<[2,8],f32>, %k: !torch.vtensor<[2,8],f32>, %c: !torch.vtensor<[2,4],f32>) -> (!torch.vtensor<[2,8],f32>, !torch.vtensor<[2,8],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %int8 = torch.constant.int 8
  %qr = torch.aten.slice.Tensor %q, %int1, %int0, %int4, %int1 : !torch.vtensor<[2,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4],f32>
  %qp = torch.aten.slice.Tensor %q, %int1, %int4, %int8, %int1 : !torch.vtensor<[2,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4],f32>
  %q1 = torch.aten.slice.Tensor %qr, %int1, %int0, %int2, %int1 : !torch.vtensor<[2,4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,2],f32>
  %q2 = torch.aten.slice.Tensor %qr, %int1, %int2, %int4, %int1 : !torch.vtensor<[2,4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,2],f32>
  %qn = torch.aten.neg %q2 : !torch.vtensor<[2,2],f32> -> !torch.vtensor<[2,2],f32>
  %ql = torch.prim.ListConstruct %qn, %q1 : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %qh = torch.aten.cat %ql, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,4],f32>
  %qm = torch.aten.mul.Tensor %qh, %c : !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
  %qa = torch.aten.add.Tensor %qr, %qm, %int1 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32>, !torch.int -> !torch.vtensor<[2,4],f32>
  %qo = torch.prim.ListConstruct %qa, %qp : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32>) -> !torch.list<vtensor>
  %0 = torch.aten.cat %qo, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,8],f32>
  %kr = torch.aten.slice.Tensor %k, %int1, %int0, %int4, %int1 : !torch.vtensor<[2,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4],f32>
  %kp = torch.aten.slice.Tensor %k, %int1, %int4, %int8, %int1 : !torch.vtensor<[2,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,4],f32>
  %k1 = torch.aten.slice.Tensor %kr, %int1, %int0, %int2, %int1 : !torch.vtensor<[2,4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,2],f32>
  %k2 = torch.aten.slice.Tensor %kr, %int1, %int2, %int4, %int1 : !torch.vtensor<[2,4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,2],f32>
  %kn = torch.aten.neg %k2 : !torch.vtensor<[2,2],f32> -> !torch.vtensor<[2,2],f32>
  %kl = torch.prim.ListConstruct %kn, %k1 : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %kh = torch.aten.cat %kl, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,4],f32>
  %km = torch.aten.mul.Tensor %kh, %c : !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
  %ka = torch.aten.add.Tensor %kr, %km, %int1 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32>, !torch.int -> !torch.vtensor<[2,4],f32>
  %ko = torch.prim.ListConstruct %ka, %kp : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %ko, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,8],f32>
  return %0, %1 : !torch.vtensor<[2,8],f32>, !torch.vtensor<[2,8],f32>
}

// -----

// The rotations' group feeds cats of two shapes: a pointwise kernel has one
// iteration space, and a concat kernel writes one cat of computed values
// without a cat of its own; both cats stay outside.

// CHECK-LABEL: func.func @no_fuse_cat_exits_of_different_shapes
// CHECK:         fusion.explain = ["consumer torch.aten.cat: a piece's group holds a cat of its own (a concat kernel writes one cat); nor a pointwise exit: cats of different shapes or dtypes (one iteration space)"
// CHECK:         torch.aten.cat %{{.*}} -> !torch.vtensor<[2,6],f32>
// CHECK:         torch.aten.cat %{{.*}} -> !torch.vtensor<[4,4],f32>

func.func @no_fuse_cat_exits_of_different_shapes(%x: !torch.vtensor<[2,2],f32>, %y: !torch.vtensor<[2,2],f32>, %p: !torch.vtensor<[2,4],f32>) -> (!torch.vtensor<[2,6],f32>, !torch.vtensor<[4,4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %l0 = torch.prim.ListConstruct %x, %y : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %0 = torch.aten.cat %l0, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,4],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
  %2 = torch.aten.tanh %0 : !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
  %l1 = torch.prim.ListConstruct %1, %x : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %3 = torch.aten.cat %l1, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,6],f32>
  %l2 = torch.prim.ListConstruct %2, %p : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32>) -> !torch.list<vtensor>
  %4 = torch.aten.cat %l2, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,4],f32>
  return %3, %4 : !torch.vtensor<[2,6],f32>, !torch.vtensor<[4,4],f32>
}

// -----

// The piece's group stores a value of its own shape too (the rotated piece
// is also returned): one kernel over the cat's shape has no place for it.

// CHECK-LABEL: func.func @no_fuse_cat_exit_of_a_group_storing_another_shape
// CHECK:         fusion.explain = ["consumer torch.aten.cat: a piece's group holds a cat of its own (a concat kernel writes one cat); nor a pointwise exit: a piece's group stores a value of another shape (one iteration space)"
// CHECK:         torch.aten.cat %{{.*}} -> !torch.vtensor<[2,6],f32>

func.func @no_fuse_cat_exit_of_a_group_storing_another_shape(%x: !torch.vtensor<[2,2],f32>, %y: !torch.vtensor<[2,2],f32>) -> (!torch.vtensor<[2,6],f32>, !torch.vtensor<[2,4],f32>) {
  %int1 = torch.constant.int 1
  %l0 = torch.prim.ListConstruct %x, %y : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %0 = torch.aten.cat %l0, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,4],f32>
  %1 = torch.aten.exp %0 : !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
  %l1 = torch.prim.ListConstruct %1, %x : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[2,2],f32>) -> !torch.list<vtensor>
  %2 = torch.aten.cat %l1, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,6],f32>
  return %2, %1 : !torch.vtensor<[2,6],f32>, !torch.vtensor<[2,4],f32>
}

// -----

// A piece empty along the cat dim (x[:, 5:5], a slice past the end, an
// empty input; issue 21): ATen's cat skips it, a concat kernel's masked-in
// lanes would read outside it, so the cat stays an ATen call.

// CHECK-LABEL: func.func @no_fuse_concat_of_an_empty_piece
// CHECK:         fusion.explain = ["consumer torch.aten.cat: a piece is empty (ATen's cat skips it; a kernel would read outside it)"], kind = "pointwise"
// CHECK:         torch.aten.cat
// CHECK-SAME:    -> !torch.vtensor<[3,4],f32>

func.func @no_fuse_concat_of_an_empty_piece(%x: !torch.vtensor<[0,4],f32>, %y: !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[3,4],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.sin %y : !torch.vtensor<[3,4],f32> -> !torch.vtensor<[3,4],f32>
  %1 = torch.prim.ListConstruct %x, %0 : (!torch.vtensor<[0,4],f32>, !torch.vtensor<[3,4],f32>) -> !torch.list<vtensor>
  %2 = torch.aten.cat %1, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[3,4],f32>
  return %2 : !torch.vtensor<[3,4],f32>
}

// -----

// A cat only a GEMM reads, along its K dim (an LSTM's cat([x, tanh(h)])
// before its Linear): no concat group; fusion-fuse-matmul reads it piece by
// piece (see Transforms/fusion-fuse-matmul.mlir, @fuse_ksplit_computed_piece).

// CHECK-LABEL: func.func @no_fuse_concat_read_by_a_gemm_along_k
// CHECK:         fusion.explain = ["consumer torch.aten.cat: GEMMs read the cat along K: fusion-fuse-matmul reads it piece by piece (K-split), it is never stored"], kind = "pointwise"
// CHECK-NOT:     kind = "concat"
// CHECK:         torch.aten.cat
func.func @no_fuse_concat_read_by_a_gemm_along_k(%x: !torch.vtensor<[4,16],f32>, %h: !torch.vtensor<[4,32],f32>, %w: !torch.vtensor<[64,48],f32>) -> !torch.vtensor<[4,64],f32> {
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %t = torch.aten.tanh %h : !torch.vtensor<[4,32],f32> -> !torch.vtensor<[4,32],f32>
  %0 = torch.prim.ListConstruct %x, %t : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,32],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %0, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[4,48],f32>
  %2 = torch.aten.linear %1, %w, %none : !torch.vtensor<[4,48],f32>, !torch.vtensor<[64,48],f32>, !torch.none -> !torch.vtensor<[4,64],f32>
  return %2 : !torch.vtensor<[4,64],f32>
}
