// RUN: mlirfuse-opt --list-passes | filecheck %s

// Every registered pass is listed under its flag, followed by its
// docstring; pipelines list the passes they expand to.

// CHECK-LABEL: Passes:
// CHECK:       --fusion-fuse-elementwise
// CHECK-NEXT:    Group maximal producer->consumer chains of elementwise torch ops into fusion.group ops.
// CHECK:       --fusion-canonicalize
// CHECK-NEXT:    Canonicalize fusion.group ops: inline scalar constants, CSE and DCE in bodies, merge duplicate operands, drop unused results, merge identical groups.
// CHECK:       --fusion-outline
// CHECK-NEXT:    Outline each fusion.group into a fusion.kernel symbol and call it with fusion.launch; structurally identical groups share one kernel.
// CHECK-LABEL: Pipelines:
// CHECK-NEXT:  --mlirfuse-pipeline
// CHECK:         = fusion-fuse-elementwise, fusion-canonicalize, fusion-outline
