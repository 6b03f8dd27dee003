"""Bug classes the fuzzer has found, so the bounded CI run fails only on new ones.

`SIGNATURES` labels outcome signatures (see `harness.normalize`) that name
their class by themselves (an exception message). Wrong answers all look
alike ("mismatch: value (float32)"), so the CI run lists the seeds of its
fixed range that hit a classified bug in `CI_SEEDS`, each with the
signature it must still show: a listed seed that passes, or fails
differently, fails the run, so whoever fixes a class removes its seeds here
(and flips the xfail of its test in `regressions/`).
"""

import re

# Classes fixed since (each keeps its regression test in `regressions/`, now a plain
# passing test): bool-add, gelu-inf, cat-split-broadcast, extern-double-erase,
# cat-computed-transposed, bool-to-bf16, max-dim-bool, dead-norm-cast, concat-one-cat,
# dominance, int-div-trunc, int-to-bf16-nan, cat-mixed-dtype (pieces are cast to the
# cat's dtype on store; the SIGABRT was the one-wide piece store), div-trunc-negative-zero
# (div with a rounding mode runs through ATen), tanh-formula, pow-half-special,
# rms-norm-default-eps, low-precision-norm (f16/bf16 norms computed in f32),
# layer-norm-signed-zero (a missing bias is eager's zero bias), sdpa-nan-inf (NaN/inf in q, k or v:
# the kernel follows the CPU sdpa backend eager picks, tests/test_attention.py; seeds 70404117,
# 70404465, 70404531, 70404629, 70404923).

# Open classes: class id -> what it is; "issue 9" marks classes filed there, "fuzz" classes
# found by this fuzzer.
CLASSES: dict[str, str] = {
    "fuzz-f16-swiglu-cast": (
        "float16 F.silu(F.linear(x, w)) * F.linear(x, u) cast .to(torch.float32) inside a cat: the float32 "
        "output differs from eager by up to 4.5e-3 (eager rounds the float16 product before the cast; the "
        "fused value is neither that nor the float64 reference)"
    ),
    "fuzz-f32-gemm-chain-cancellation": (
        "three chained float32 GEMMs (linear -> matmul -> silu(linear) * linear) where one output element "
        "(9.83) cancels from terms near 1e3: eager is 6.5e-4 from the float64 reference, the fused kernels "
        "2.4e-3, both at the f32 rounding noise of the terms, but the harness allows 1.3e-6 relative to the "
        "element itself (fuzz seed 71200059; a comparison scaled by eager's own error would pass it)"
    ),
}

# Differences from eager accepted as not wrong, with the reason; their regression tests
# assert the documented behaviour. The fuzzer still reports them when a case hits them.
ACCEPTED = {
    "gemm-signed-zero": (
        "a GEMM whose every product is -0.0 (K = 1 and a -0.0 weight): eager gives -0.0; the Triton "
        "interpreter computes tl.dot with numpy's matmul, whose sums start at +0.0, so the fused kernel "
        "gives +0.0 on CPU. The kernel starts its accumulator at -0.0 and pads K with -0.0 products, so a "
        "dot that adds into its accumulator keeps eager's sign (unverified on a GPU). Values are equal. "
        "Attention's p @ v likewise: a row whose every p * v product is -0.0 (one key with v = -0.0) gives "
        "+0.0 in the interpreter (fuzz seed 71300020)."
    ),
    "group-norm-inf-weight": (
        "group_norm with an infinite weight: eager's kernels compute x * (rstd * w) + (b - mean * rstd * w), "
        "inf - inf = NaN, where the fused (x - mean) * rstd * w + b gives ±inf. Eager's form cancels where "
        "|mean| >> std (a one-element group gives b only up to the rounding of x * rstd * w); the fused form "
        "is exact there, which the float64 reference confirms (fuzz seed 67301045)."
    ),
    "var-mean-inf": (
        "var_mean's mean of a row holding infinities: eager's comes from Welford's update, NaN or "
        "±inf depending on where the infinities sit ([inf, 1] gives NaN, [1, inf] gives inf); the "
        "fused mean is sum / N, torch.mean's value. The variance is NaN in both."
    ),
    "f16-upcast-rounding": (
        "a float16/bfloat16 computation cast to float32 (fuzz seed 515058, (linear(x, w, b) + y).to(float32)): "
        "eager rounds after every op, the fused kernel computes in f32 and rounds once at the cast, so the "
        "float32 outputs differ by an ulp or two of float16, beyond float32's tolerance; both are within "
        "float16 noise of the float64 reference (eager 0.75 ulp, fused 1.4 ulp there)."
    ),
    "maximum-signed-zero": (
        "maximum/minimum of equal zeros: eager's CPU kernel returns the first operand in its scalar "
        "loop (tensors shorter than a vector) and the second in its vectorized loop; the fused "
        "kernel returns the second, as eager does on any tensor a vector long."
    ),
    "gelu-signed-zero": (
        "gelu of a negative x whose result underflows to zero (x < -14 in f32) or of -0.0: eager's f32 "
        "vectorized loop gives +0.0 (contiguous tensors of 2 or more elements), its scalar loop (one "
        "element, a broadcast input) and its f16/bf16 kernels -0.0; the fused f32 0.5 * x + 0.5 * x * "
        "erf(x / sqrt 2) gives +0.0 as the vectorized loop does (fuzz seeds 71100011, 515099), so a "
        "one-element or broadcast f32 input differs. Values are equal."
    ),
}

# signature regex -> class id, for signatures that identify their class
SIGNATURES: dict[str, str] = {}

# CI run seeds (MLIRFUSE_FUZZ_SEED=0) -> (signature regex, class id, deterministic). Heap
# corruption aborts only sometimes: such a seed passing is not taken as the bug fixed.
CI_SEEDS: dict[int, tuple[str, str, bool]] = {
    38: (r"signed-zero", "gemm-signed-zero", True),  # silu(linear(x, w)) * linear(x, u) with K = 1, u holding -0.0
}


def known_class(signature: str, seed: int | None = None) -> str | None:
    """The class id of a failure, or None if it is new."""
    if seed is not None and seed in CI_SEEDS:
        pattern, cls, _ = CI_SEEDS[seed]
        if re.search(pattern, signature):
            return cls
    for pattern, cls in SIGNATURES.items():
        if re.search(pattern, signature):
            return cls
    return None
