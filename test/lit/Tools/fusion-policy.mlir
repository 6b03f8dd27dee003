// RUN: mlirfuse-opt %s --mlirfuse-pipeline | filecheck %s --check-prefix=DEFAULT
// RUN: mlirfuse-opt %s --fusion-explain --fusion-policy=%S/../../../examples/fusion_policy.py:frugal_prologues --mlirfuse-pipeline | filecheck %s --check-prefix=FRUGAL
// RUN: not mlirfuse-opt %s --fusion-policy=%S/no-such-policy.py:frugal 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not mlirfuse-opt %s --fusion-policy=%S/../../../examples/fusion_policy.py:nothing 2>&1 | filecheck %s --check-prefix=NONAME

// A fusion policy (mlirfuse/passes/policy.py) sees every legal merge and may
// veto it. With none, gelu(x) is the GEMM's A prologue (one kernel); the
// example policy keeps transcendentals out of per-tile prologues: the gelu
// becomes a pointwise kernel of its own, and --fusion-explain says whose
// decision that was.

// DEFAULT:       "fusion.kernel"
// DEFAULT:         torch.aten.gelu
// DEFAULT:         torch.aten.linear
// DEFAULT:       kind = "matmul"
// DEFAULT-NOT:   "fusion.kernel"

// FRUGAL:        "fusion.kernel"
// FRUGAL:          torch.aten.gelu
// FRUGAL:        kind = "pointwise"
// FRUGAL:        "fusion.kernel"
// FRUGAL-NOT:      torch.aten.gelu
// FRUGAL:          torch.aten.linear
// FRUGAL:        kind = "matmul"
// FRUGAL:        fusion.explain = [{{.*}}policy frugal_prologues: gelu would be recomputed per tile (the merge saves 16384 bytes)

// MISSING: mlirfuse-opt: error: --fusion-policy: policy file '{{.*}}no-such-policy.py' does not exist
// NONAME: mlirfuse-opt: error: --fusion-policy: {{.*}}fusion_policy.py has no policy function 'nothing'

func.func @gelu_linear(%x: !torch.vtensor<[64,32],f32>, %w: !torch.vtensor<[48,32],f32>) -> !torch.vtensor<[64,48],f32> {
  %none = torch.constant.none
  %str = torch.constant.str "none"
  %0 = torch.aten.gelu %x, %str : !torch.vtensor<[64,32],f32>, !torch.str -> !torch.vtensor<[64,32],f32>
  %1 = torch.aten.linear %0, %w, %none : !torch.vtensor<[64,32],f32>, !torch.vtensor<[48,32],f32>, !torch.none -> !torch.vtensor<[64,48],f32>
  return %1 : !torch.vtensor<[64,48],f32>
}
