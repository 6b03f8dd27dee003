// RUN: mlirfuse-opt --list-passes | filecheck %s

// Every registered pass is listed under its flag, followed by its
// docstring; pipelines list the passes they expand to.

// CHECK-LABEL: Passes:
// CHECK-NEXT:  --fusion-functionalize
// CHECK-NEXT:    Rewrite in-place ops on fresh copies nothing else sees (no view, not a function argument) to value-semantic ops; whatever the alias analysis cannot prove safe is left alone.
// CHECK:       --fusion-fold-constant-indices
// CHECK-NEXT:    Fold a clone of a literal into the literal and an index by a one-element integer literal into a slice (select for a 0-d index).
// CHECK:       --fusion-fuse-attention
// CHECK-NEXT:    Group attention into one fusion.group of kind attention (one flash-attention kernel)
// CHECK:       --fusion-decompose
// CHECK-NEXT:    Decompose softmax, log_softmax, layer_norm, native_layer_norm, rms_norm, group_norm, inference batch_norm, var/std(_mean), logsumexp and max/min.dim into keepdim reductions and elementwise ops; take_along_dim into a gather, scatter_reduce sums into scatter_add, histc (and a cumsum of it) into a one-hot sum over the bins; a gather's rows viewed apart as a gather by the viewed index, a gather of a product as the product of gathers.
// CHECK:       --fusion-keepdim-rows
// CHECK-NEXT:    Compute per-row values of a reduction in its keepdim shape, so they join its kernel.
// CHECK:       --fusion-split-bias
// CHECK-NEXT:    Split the bias add out of linear, addmm (beta = alpha = 1) and conv2d/convolution into an add.Tensor that fuses with the following elementwise ops.
// CHECK:       --fusion-chunk-motion
// CHECK-NEXT:    Turn chunk/split into slices and move them above the elementwise ops that feed them, so the chunked math fuses into one kernel (the LSTM cell); move column slices of a GEMM onto its B operand (matmul-slices, default true: one GEMM per piece, grouped by fusion-fuse-matmul); move reshapes below elementwise ops with scalar operands (group_norm + activation).
// CHECK:       --fusion-sum-matmuls
// CHECK-NEXT:    Rewrite a sum of matmuls (add.Tensor chains of mm/matmul results, through 2-D transposes) as one matmul over their operands concatenated along K, where that moves fewer bytes even with the cats stored.
// CHECK:       --fusion-fuse-vertical
// CHECK-NEXT:    Group maximal producer->consumer chains of elementwise ops and reductions into fusion.group ops.
// CHECK:         max-args (tensor arguments per kernel, default 128), max-group-size
// CHECK:       --fusion-fuse-horizontal
// CHECK:       --fusion-fuse-concat
// CHECK:       --fusion-sink-exit-reshapes
// CHECK:       --fusion-fuse-matmul
// CHECK:       --fusion-explain-unfused
// CHECK:       --fusion-mark-persistent
// CHECK:       --fusion-extern-operands
// CHECK-NEXT:    Put each unfused op (matmul, linear, ...) together with the view chains feeding it into a fusion.group of kind extern: one ATen call reading strided operands, no copies.
// CHECK:       --fusion-canonicalize
// CHECK-NEXT:    Canonicalize fusion.group ops: inline scalar constants, CSE and DCE in bodies, merge duplicate operands, drop unused results (and those read only for their size or dtype), merge identical groups.
// CHECK:       --fusion-outline
// CHECK-NEXT:    Outline each fusion.group into a fusion.kernel symbol and call it with fusion.launch; structurally identical groups share one kernel.
// CHECK:       --test-dependence
// CHECK-NEXT:    Test pass: mark each op tagged `test.tag` with the tagged ops it depends on (`test.depends`); corrupt=true breaks the analysis on purpose.
// CHECK:       --test-alias
// CHECK-NEXT:    Test pass: mark each op tagged `test.tag` with its storage class, what it may alias, its writers and whether it is mutated; corrupt=true breaks the analysis on purpose.
// CHECK:       --test-shapes
// CHECK-NEXT:    Test pass: mark each op tagged `test.tag` with its result's shape, dtype, the tagged values of the same shape or broadcastable with it, and whether it is read only for its size; corrupt=true breaks the analysis on purpose.
// CHECK-LABEL: Pipelines:
// CHECK-NEXT:  --mlirfuse-pipeline
// CHECK:         = fusion-functionalize, fusion-fold-constant-indices, fusion-fuse-attention, fusion-decompose, fusion-keepdim-rows, fusion-split-bias, fusion-chunk-motion, fusion-sum-matmuls, fusion-fuse-vertical, fusion-fuse-horizontal, fusion-fuse-concat, fusion-sink-exit-reshapes, fusion-fuse-matmul, fusion-mark-persistent, fusion-extern-operands, fusion-canonicalize, fusion-outline
// CHECK:       --fusion-fuse-elementwise
// CHECK:         = fusion-fuse-vertical, fusion-fuse-horizontal, fusion-fuse-concat, fusion-sink-exit-reshapes, fusion-explain-unfused, fusion-mark-persistent
