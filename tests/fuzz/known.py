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

# class id -> what it is; "issue 9" marks classes filed there, "fuzz" classes found by this fuzzer.
CLASSES = {
    "bool-add": "issue 9: bool + bool (eager: logical or) computes False where eager gives True",
    "gelu-inf": "issue 9: gelu(inf) differs from eager",
    "cat-split-broadcast": "issue 9: cat(split(a - b)) with a broadcast operand returns wrong values",
    "extern-double-erase": "issue 9: fusion-extern-operands erases a view feeding two operands twice (atan2(v, v)): segfault",
    "cat-computed-transposed": "issue 9: cat of a computed value with a transposed input writes out of bounds / wrong values",
    "bool-to-bf16": "issue 9: bool -> bf16 cast inside a kernel",
    "max-dim-bool": "issue 9: max/min(dim) on bool calls argmax/argmin on bool",
    "dead-norm-cast": "issue 9: dead layer_norm(x).to(f16): 'expected supported reductions in a reduction kernel'",
    "concat-one-cat": "issue 9: 'a concat kernel holds exactly one torch.aten.cat'",
    "dominance": "issue 9: the fuser builds a group that breaks dominance (unsqueeze, where, softmax(dim=-2))",
    "int-div-trunc": "issue 9: integer div(rounding_mode='trunc')",
    "int-to-bf16-nan": "fuzz (root cause of issue 9's bool -> bf16): round_to_bf16 bitcasts an integer value as f32 bits: int -> bf16 casts give NaN, sign() in bf16 wrong",
    "cat-mixed-dtype": "fuzz: cat of pieces with different dtypes (type promotion): wrong values, or heap corruption (SIGABRT)",
    "tanh-formula": "fuzz: tanh lowered as 2*sigmoid(2x)-1: tanh(-0.0) gives +0.0, tanh(1e-3) has relative error 5e-5 (f32)",
    "div-trunc-negative-zero": "fuzz: float div(rounding_mode='trunc') loses the sign of a zero quotient",
    "rms-norm-default-eps": "fuzz: F.rms_norm(x16, shape) without eps: the decomposition adds finfo(f16).eps, eager (computing in f32) adds finfo(f32).eps",
    "low-precision-norm": "fuzz: f16 layer_norm over a short row 1 ulp away from both eager and a float64 reference (arguable)",
    "var-mean-inf": "fuzz (arguable): var_mean's mean of a row of equal infinities is ±inf fused, NaN in eager (Welford)",
    "pow-half-special": "fuzz: pow(x, ±0.5) lowered as sqrt/rsqrt: pow(-inf, -0.5) is NaN, eager (IEEE pow) gives 0",
    "maximum-signed-zero": "fuzz (minor): maximum(-0.0, 0) returns a zero of the other sign than eager",
}

# signature regex -> class id, for signatures that identify their class
SIGNATURES = {
    r"argm(ax|in)\(\): does not support bool input": "max-dim-bool",
    r"expected supported reductions in a reduction kernel": "dead-norm-cast",
    r"a concat kernel holds exactly one": "concat-one-cat",
    r"dominat": "dominance",
    r"NumToTensor": "int-div-trunc",
    r"InterpreterError: ValueError\('cannot reshape array": "bool-to-bf16",
}

# CI run seeds (MLIRFUSE_FUZZ_SEED=0) -> (signature regex, class id, deterministic). Heap
# corruption aborts only sometimes: such a seed passing is not taken as the bug fixed.
CI_SEEDS = {
    2: (r"^mismatch: nan \(bfloat16\)$", "int-to-bf16-nan", True),
    7: (r"^process died: SIGABRT", "cat-mixed-dtype", False),
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
