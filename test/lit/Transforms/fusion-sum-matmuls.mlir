// RUN: mlirfuse-opt %s --split-input-file --fusion-sum-matmuls | filecheck %s
// RUN: mlirfuse-opt %s --split-input-file --fusion-sum-matmuls=max-terms=2 | filecheck %s --check-prefix=TERMS
// RUN: mlirfuse-opt %s --split-input-file --pass-pipeline='builtin.module(fusion-sum-matmuls, fusion-fuse-elementwise, fusion-fuse-matmul)' | filecheck %s --check-prefix=FUSE

// A weight gradient summed over three steps, as AOTAutograd's backward of an
// unrolled recurrence spells it: permute(t(mm(g_t.t(), x_t))) per step, added
// up. Each partial product is [64, 16]; its operands hold 80 elements: one mm
// over cat([g_t.t()], 1) and cat([x_t], 0) (K = the steps) replaces them all.
// fusion-fuse-matmul then reads both cats piece by piece: one GEMM group.

// CHECK-LABEL: func.func @fuse_weight_gradient_over_steps
// CHECK-SAME:    (%[[G0:[^:]+]]: !torch.vtensor<[1,64],f32>, %[[X0:[^:]+]]: !torch.vtensor<[1,16],f32>, %[[G1:[^:]+]]: !torch.vtensor<[1,64],f32>, %[[X1:[^:]+]]: !torch.vtensor<[1,16],f32>, %[[G2:[^:]+]]: !torch.vtensor<[1,64],f32>, %[[X2:[^:]+]]: !torch.vtensor<[1,16],f32>)
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK-NOT:     torch.aten.permute
// CHECK:         %[[T0:.+]] = torch.aten.t %[[G0]]
// CHECK:         %[[T1:.+]] = torch.aten.t %[[G1]]
// CHECK:         %[[T2:.+]] = torch.aten.t %[[G2]]
// CHECK:         %[[AL:.+]] = torch.prim.ListConstruct %[[T0]], %[[T1]], %[[T2]] :
// CHECK:         %[[A:.+]] = torch.aten.cat %[[AL]], %{{.+}} : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[64,3],f32>
// CHECK:         %[[BL:.+]] = torch.prim.ListConstruct %[[X0]], %[[X1]], %[[X2]] :
// CHECK:         %[[B:.+]] = torch.aten.cat %[[BL]], %{{.+}} : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[3,16],f32>
// CHECK:         %[[MM:.+]] = torch.aten.mm %[[A]], %[[B]] : !torch.vtensor<[64,3],f32>, !torch.vtensor<[3,16],f32> -> !torch.vtensor<[64,16],f32>
// CHECK-NOT:     torch.aten.mm
// CHECK-NEXT:    return %[[MM]]

// max-terms=2: the first two steps are one GEMM, the third stays its own, added.
// TERMS-LABEL: func.func @fuse_weight_gradient_over_steps
// TERMS:         %[[MM:.+]] = torch.aten.mm %{{.+}}, %{{.+}} : !torch.vtensor<[64,2],f32>, !torch.vtensor<[2,16],f32> -> !torch.vtensor<[64,16],f32>
// TERMS:         %[[ADD:.+]] = torch.aten.add.Tensor %[[MM]], %{{.+}}, %{{.+}} :
// TERMS-NEXT:    return %[[ADD]]

// FUSE-LABEL: func.func @fuse_weight_gradient_over_steps
// FUSE:         %[[GR:.+]] = "fusion.group"
// FUSE:           torch.aten.cat
// FUSE:           torch.aten.cat
// FUSE:           torch.aten.mm
// FUSE:         }) {kind = "matmul"}
// FUSE-NEXT:    return %[[GR]]
func.func @fuse_weight_gradient_over_steps(%g0: !torch.vtensor<[1,64],f32>, %x0: !torch.vtensor<[1,16],f32>, %g1: !torch.vtensor<[1,64],f32>, %x1: !torch.vtensor<[1,16],f32>, %g2: !torch.vtensor<[1,64],f32>, %x2: !torch.vtensor<[1,16],f32>) -> !torch.vtensor<[64,16],f32> {
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %perm = torch.prim.ListConstruct %int1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.t %g0 : !torch.vtensor<[1,64],f32> -> !torch.vtensor<[64,1],f32>
  %1 = torch.aten.mm %0, %x0 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %2 = torch.aten.t %1 : !torch.vtensor<[64,16],f32> -> !torch.vtensor<[16,64],f32>
  %3 = torch.aten.permute %2, %perm : !torch.vtensor<[16,64],f32>, !torch.list<int> -> !torch.vtensor<[64,16],f32>
  %4 = torch.aten.t %g1 : !torch.vtensor<[1,64],f32> -> !torch.vtensor<[64,1],f32>
  %5 = torch.aten.mm %4, %x1 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %6 = torch.aten.t %5 : !torch.vtensor<[64,16],f32> -> !torch.vtensor<[16,64],f32>
  %7 = torch.aten.permute %6, %perm : !torch.vtensor<[16,64],f32>, !torch.list<int> -> !torch.vtensor<[64,16],f32>
  %8 = torch.aten.add.Tensor %3, %7, %int1 : !torch.vtensor<[64,16],f32>, !torch.vtensor<[64,16],f32>, !torch.int -> !torch.vtensor<[64,16],f32>
  %9 = torch.aten.t %g2 : !torch.vtensor<[1,64],f32> -> !torch.vtensor<[64,1],f32>
  %10 = torch.aten.mm %9, %x2 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %11 = torch.aten.add.Tensor %8, %10, %int1 : !torch.vtensor<[64,16],f32>, !torch.vtensor<[64,16],f32>, !torch.int -> !torch.vtensor<[64,16],f32>
  return %11 : !torch.vtensor<[64,16],f32>
}

// -----

// An odd number of transposes after a product: (a @ b).t() = b.t() @ a.t(),
// so its pieces are the transposed operands. Another addend (not a product)
// stays added to the merged one.

// CHECK-LABEL: func.func @fuse_transposed_products_and_another_addend
// CHECK-SAME:    (%[[A0:[^:]+]]: !torch.vtensor<[32,2],f32>, %[[B0:[^:]+]]: !torch.vtensor<[2,24],f32>, %[[A1:[^:]+]]: !torch.vtensor<[32,2],f32>, %[[B1:[^:]+]]: !torch.vtensor<[2,24],f32>, %[[Y:[^:]+]]: !torch.vtensor<[24,32],f32>)
// CHECK:         %[[TB0:.+]] = torch.aten.t %[[B0]] : !torch.vtensor<[2,24],f32> -> !torch.vtensor<[24,2],f32>
// CHECK:         %[[TA0:.+]] = torch.aten.t %[[A0]] : !torch.vtensor<[32,2],f32> -> !torch.vtensor<[2,32],f32>
// CHECK:         %[[TB1:.+]] = torch.aten.t %[[B1]]
// CHECK:         %[[TA1:.+]] = torch.aten.t %[[A1]]
// CHECK:         torch.prim.ListConstruct %[[TB0]], %[[TB1]] :
// CHECK:         torch.prim.ListConstruct %[[TA0]], %[[TA1]] :
// CHECK:         %[[MM:.+]] = torch.aten.mm %{{.+}}, %{{.+}} : !torch.vtensor<[24,4],f32>, !torch.vtensor<[4,32],f32> -> !torch.vtensor<[24,32],f32>
// CHECK:         %[[ADD:.+]] = torch.aten.add.Tensor %[[MM]], %[[Y]], %{{.+}} :
// CHECK-NEXT:    return %[[ADD]]
func.func @fuse_transposed_products_and_another_addend(%a0: !torch.vtensor<[32,2],f32>, %b0: !torch.vtensor<[2,24],f32>, %a1: !torch.vtensor<[32,2],f32>, %b1: !torch.vtensor<[2,24],f32>, %y: !torch.vtensor<[24,32],f32>) -> !torch.vtensor<[24,32],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.mm %a0, %b0 : !torch.vtensor<[32,2],f32>, !torch.vtensor<[2,24],f32> -> !torch.vtensor<[32,24],f32>
  %1 = torch.aten.t %0 : !torch.vtensor<[32,24],f32> -> !torch.vtensor<[24,32],f32>
  %2 = torch.aten.add.Tensor %1, %y, %int1 : !torch.vtensor<[24,32],f32>, !torch.vtensor<[24,32],f32>, !torch.int -> !torch.vtensor<[24,32],f32>
  %3 = torch.aten.mm %a1, %b1 : !torch.vtensor<[32,2],f32>, !torch.vtensor<[2,24],f32> -> !torch.vtensor<[32,24],f32>
  %4 = torch.aten.t %3 : !torch.vtensor<[32,24],f32> -> !torch.vtensor<[24,32],f32>
  %5 = torch.aten.add.Tensor %2, %4, %int1 : !torch.vtensor<[24,32],f32>, !torch.vtensor<[24,32],f32>, !torch.int -> !torch.vtensor<[24,32],f32>
  return %5 : !torch.vtensor<[24,32],f32>
}

// -----

// Two sums over the same A pieces (an LSTM's W_ih and W_hh gradients, both
// read the gates' gradients; here the second spells its own g1.t()): one A
// cat, read by both GEMMs, which fusion-fuse-matmul groups into one kernel
// reading the pieces once.

// CHECK-LABEL: func.func @fuse_two_sums_sharing_a
// CHECK-COUNT-2: torch.aten.t
// CHECK-NOT:     torch.aten.t
// CHECK:         %[[A:.+]] = torch.aten.cat %{{.+}} -> !torch.vtensor<[64,2],f32>
// CHECK:         torch.aten.mm %[[A]], %{{.+}} -> !torch.vtensor<[64,16],f32>
// CHECK-NOT:     torch.aten.cat %{{.+}} -> !torch.vtensor<[64,2],f32>
// CHECK:         torch.aten.mm %[[A]], %{{.+}} -> !torch.vtensor<[64,16],f32>

// FUSE-LABEL: func.func @fuse_two_sums_sharing_a
// FUSE:         %[[GR:.+]]:2 = "fusion.group"
// FUSE-COUNT-2:   torch.aten.mm
// FUSE:         }) {kind = "matmul"}
// FUSE-NEXT:    return %[[GR]]#1, %[[GR]]#0
func.func @fuse_two_sums_sharing_a(%g0: !torch.vtensor<[1,64],f32>, %x0: !torch.vtensor<[1,16],f32>, %h0: !torch.vtensor<[1,16],f32>, %g1: !torch.vtensor<[1,64],f32>, %x1: !torch.vtensor<[1,16],f32>, %h1: !torch.vtensor<[1,16],f32>) -> (!torch.vtensor<[64,16],f32>, !torch.vtensor<[64,16],f32>) {
  %int1 = torch.constant.int 1
  %t0 = torch.aten.t %g0 : !torch.vtensor<[1,64],f32> -> !torch.vtensor<[64,1],f32>
  %t1 = torch.aten.t %g1 : !torch.vtensor<[1,64],f32> -> !torch.vtensor<[64,1],f32>
  %0 = torch.aten.mm %t0, %x0 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %1 = torch.aten.mm %t0, %h0 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %2 = torch.aten.mm %t1, %x1 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %t1_again = torch.aten.t %g1 : !torch.vtensor<[1,64],f32> -> !torch.vtensor<[64,1],f32>
  %3 = torch.aten.mm %t1_again, %h1 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %4 = torch.aten.add.Tensor %0, %2, %int1 : !torch.vtensor<[64,16],f32>, !torch.vtensor<[64,16],f32>, !torch.int -> !torch.vtensor<[64,16],f32>
  %5 = torch.aten.add.Tensor %1, %3, %int1 : !torch.vtensor<[64,16],f32>, !torch.vtensor<[64,16],f32>, !torch.int -> !torch.vtensor<[64,16],f32>
  return %4, %5 : !torch.vtensor<[64,16],f32>, !torch.vtensor<[64,16],f32>
}

// -----

// Limits. Operands outweighing their products: a forward's x @ W1 + h @ W2
// reads two [32, 64] weights for a [4, 64] result, so even two partial
// products move fewer bytes than stored cats would (fusion-fuse-matmul sums
// the two GEMMs in their grouped kernel's epilogue instead).

// CHECK-LABEL: func.func @no_fuse_operands_outweigh_products
// CHECK-NOT:     torch.aten.cat
// CHECK:         torch.aten.mm
// CHECK:         torch.aten.mm
// CHECK:         torch.aten.add.Tensor
func.func @no_fuse_operands_outweigh_products(%x: !torch.vtensor<[4,32],f32>, %w1: !torch.vtensor<[32,64],f32>, %h: !torch.vtensor<[4,32],f32>, %w2: !torch.vtensor<[32,64],f32>) -> !torch.vtensor<[4,64],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.mm %x, %w1 : !torch.vtensor<[4,32],f32>, !torch.vtensor<[32,64],f32> -> !torch.vtensor<[4,64],f32>
  %1 = torch.aten.mm %h, %w2 : !torch.vtensor<[4,32],f32>, !torch.vtensor<[32,64],f32> -> !torch.vtensor<[4,64],f32>
  %2 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,64],f32>, !torch.int -> !torch.vtensor<[4,64],f32>
  return %2 : !torch.vtensor<[4,64],f32>
}

// -----

// A product also read elsewhere (returned) is stored anyway: it stays, and
// with one product left there is nothing to merge. A scaled add (alpha 2)
// is no plain sum.

// CHECK-LABEL: func.func @no_fuse_product_read_elsewhere
// CHECK-NOT:     torch.aten.cat
// CHECK:         torch.aten.add.Tensor
// CHECK-LABEL: func.func @no_fuse_scaled_add
// CHECK-NOT:     torch.aten.cat
// CHECK:         torch.aten.add.Tensor
func.func @no_fuse_product_read_elsewhere(%a0: !torch.vtensor<[64,1],f32>, %b0: !torch.vtensor<[1,16],f32>, %a1: !torch.vtensor<[64,1],f32>, %b1: !torch.vtensor<[1,16],f32>) -> (!torch.vtensor<[64,16],f32>, !torch.vtensor<[64,16],f32>) {
  %int1 = torch.constant.int 1
  %0 = torch.aten.mm %a0, %b0 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %1 = torch.aten.mm %a1, %b1 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %2 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[64,16],f32>, !torch.vtensor<[64,16],f32>, !torch.int -> !torch.vtensor<[64,16],f32>
  return %2, %0 : !torch.vtensor<[64,16],f32>, !torch.vtensor<[64,16],f32>
}
func.func @no_fuse_scaled_add(%a0: !torch.vtensor<[64,1],f32>, %b0: !torch.vtensor<[1,16],f32>, %a1: !torch.vtensor<[64,1],f32>, %b1: !torch.vtensor<[1,16],f32>) -> !torch.vtensor<[64,16],f32> {
  %int2 = torch.constant.int 2
  %0 = torch.aten.mm %a0, %b0 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %1 = torch.aten.mm %a1, %b1 : !torch.vtensor<[64,1],f32>, !torch.vtensor<[1,16],f32> -> !torch.vtensor<[64,16],f32>
  %2 = torch.aten.add.Tensor %0, %1, %int2 : !torch.vtensor<[64,16],f32>, !torch.vtensor<[64,16],f32>, !torch.int -> !torch.vtensor<[64,16],f32>
  return %2 : !torch.vtensor<[64,16],f32>
}
