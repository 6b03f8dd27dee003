"""What a fused kernel computes at NaN, ±inf and ±0: the specification, not one machine's eager.

Eager PyTorch's answer at these points is not one answer. It depends on the
CPU (an AVX-512 machine's vectorized f32 gelu gives NaN at +inf, an AVX2
machine's +inf), on the tensor's length (ATen's scalar loop for short or
broadcast tensors, its vectorized loop otherwise), on the dtype (f16 `pow` is
C's `pow`, f32 `pow(x, 0.5)` is `sqrt`) and, on a GPU, on CUDA's
implementation. A kernel cannot follow all of them, so each op's value at the
IEEE special inputs is fixed here: the IEEE-natural result of the formula the
kernel evaluates, which is CUDA eager's formula where the kernels' target and
the CPU differ (gelu). Tests and the fuzz harness accept this value or
whatever eager gives on the machine they run on, and fail on anything else.

`TABLE` holds one row per unary op as eager spells it (the row's label shows
the arguments used for ops that take some); `DTYPE_ROWS` the rows that differ
by dtype; `EAGER_DIFFERS` where some eager path is known to give another value.
`python -m mlirfuse.ops.special_values` prints the table as Markdown
(docs/special-values.md is that output).
"""

from __future__ import annotations

import math

# The inputs the table's columns are for, as written in it.
INPUTS: tuple[str, ...] = ("inf", "-inf", "nan", "-0.0", "0.0")

# label -> the kernel's result at each of INPUTS, for every float dtype unless DTYPE_ROWS says otherwise.
TABLE: dict[str, tuple[str, str, str, str, str]] = {
    "neg": ("-inf", "inf", "nan", "0.0", "-0.0"),
    "abs": ("inf", "inf", "nan", "0.0", "0.0"),
    "relu": ("inf", "0.0", "nan", "-0.0", "0.0"),
    "exp": ("inf", "0.0", "nan", "1.0", "1.0"),
    "exp2": ("inf", "0.0", "nan", "1.0", "1.0"),
    "log": ("inf", "nan", "nan", "-inf", "-inf"),
    "log2": ("inf", "nan", "nan", "-inf", "-inf"),
    "sqrt": ("inf", "nan", "nan", "-0.0", "0.0"),
    "rsqrt": ("0.0", "nan", "nan", "-inf", "inf"),
    "sin": ("nan", "nan", "nan", "-0.0", "0.0"),
    "cos": ("nan", "nan", "nan", "1.0", "1.0"),
    "erf": ("1.0", "-1.0", "nan", "-0.0", "0.0"),
    "floor": ("inf", "-inf", "nan", "-0.0", "0.0"),
    "ceil": ("inf", "-inf", "nan", "-0.0", "0.0"),
    "reciprocal": ("0.0", "-0.0", "nan", "-inf", "inf"),
    "sigmoid": ("1.0", "0.0", "nan", "0.5", "0.5"),
    "tanh": ("1.0", "-1.0", "nan", "-0.0", "0.0"),
    "sign": ("1.0", "-1.0", "0.0", "0.0", "0.0"),
    "silu": ("inf", "nan", "nan", "-0.0", "0.0"),
    "gelu": ("inf", "nan", "nan", "-0.0", "0.0"),
    "gelu(approximate='tanh')": ("inf", "nan", "nan", "-0.0", "0.0"),
    "hardsigmoid": ("1.0", "0.0", "nan", "0.5", "0.5"),
    "hardswish": ("inf", "nan", "nan", "-0.0", "0.0"),
    "leaky_relu": ("inf", "-inf", "nan", "-0.0", "0.0"),
    "hardtanh": ("1.0", "-1.0", "nan", "-0.0", "0.0"),
    "clamp(x, -0.5, 0.5)": ("0.5", "-0.5", "nan", "-0.0", "0.0"),
    "clamp_min(x, 0.1)": ("inf", "0.1", "nan", "0.1", "0.1"),
    "clamp_max(x, -0.1)": ("-0.1", "-inf", "nan", "-0.1", "-0.1"),
    "x ** 2": ("inf", "inf", "nan", "0.0", "0.0"),
    "x ** 3": ("inf", "-inf", "nan", "-0.0", "0.0"),
    "x ** 0.5": ("inf", "nan", "nan", "-0.0", "0.0"),
    "x ** -1": ("0.0", "-0.0", "nan", "-inf", "inf"),
    "x ** -0.5": ("0.0", "nan", "nan", "-inf", "inf"),
    "x ** -2": ("0.0", "0.0", "nan", "inf", "inf"),
    "x + 2.5": ("inf", "-inf", "nan", "2.5", "2.5"),
    "x * 0.0": ("nan", "nan", "nan", "-0.0", "0.0"),
    "x + (-0.0)": ("inf", "-inf", "nan", "-0.0", "0.0"),
    "2 - x": ("-inf", "inf", "nan", "2.0", "2.0"),
    "x / 3": ("inf", "-inf", "nan", "-0.0", "0.0"),
}

# (label, dtype name) -> the row for that dtype: eager's f16 pow is C's pow (pow(-inf, 0.5) = inf,
# pow(-0.0, 0.5) = +0.0), its f32/bf16/f64 pow by 0.5 is sqrt; the kernel follows each.
DTYPE_ROWS: dict[tuple[str, str], tuple[str, str, str, str, str]] = {
    ("x ** 0.5", "float16"): ("inf", "inf", "nan", "0.0", "0.0"),
    ("x ** -0.5", "float16"): ("0.0", "0.0", "nan", "inf", "inf"),
}

# label -> where an eager path is known to give something else (what the table does not copy).
EAGER_DIFFERS: dict[str, str] = {
    "gelu": (
        "The kernel evaluates CUDA eager's x * 0.5 * (1 + erf(x / sqrt 2)) in f32 (f64 for f64): -0.0 wherever "
        "erf rounds to -1 (x < -5.5 in f32), x itself at the largest finite x. Eager's CPU kernels differ by "
        "CPU and path: the f32/bf16 vectorized loop gives NaN at +inf and inf near the largest finite f32 on "
        "AVX-512 CPUs, and +0.0 where erf is -1 on AVX2 CPUs; the scalar loop (one element, broadcast "
        "inputs) agrees with this table."
    ),
    "x ** 0.5": "f16 follows C's pow (DTYPE_ROWS); f32, bf16 and f64 follow sqrt, as eager does per dtype.",
    "x ** -0.5": "f16 follows C's pow (DTYPE_ROWS); f32, bf16 and f64 follow 1 / sqrt, as eager does per dtype.",
    "sign": "sign(NaN) is 0.0, as eager's sign gives on CPU and CUDA (not NaN).",
}


def row(label: str, dtype: str) -> tuple[str, ...]:
    """The kernel's results at INPUTS for `label` in `dtype` (a torch dtype's name: "float32")."""
    return DTYPE_ROWS.get((label, dtype), TABLE[label])


def value(text: str) -> float:
    """A table entry as a float ("-0.0" keeps its sign)."""
    return float(text) if text != "nan" else math.nan


def markdown() -> str:
    """The table for docs/special-values.md."""
    lines = [
        "# Special values: what a fused kernel computes at ±inf, NaN and ±0",
        "",
        "Generated by `python -m mlirfuse.ops.special_values` from `mlirfuse/ops/special_values.py`; see its docstring "
        "for why this is specified rather than copied from eager. Tests accept these values or the eager "
        "result of the machine they run on, nothing else.",
        "",
        "| op | " + " | ".join(f"x = {x}" for x in INPUTS) + " |",
        "|---|" + "---|" * len(INPUTS),
    ]
    lines += [f"| `{label}` | " + " | ".join(results) + " |" for label, results in TABLE.items()]
    lines += ["", "Rows that differ by dtype:", "", "| op | dtype | " + " | ".join(f"x = {x}" for x in INPUTS) + " |",
              "|---|---|" + "---|" * len(INPUTS)]
    lines += [f"| `{label}` | {dtype} | " + " | ".join(results) + " |" for (label, dtype), results in DTYPE_ROWS.items()]
    lines += ["", "Where eager is known to differ:", ""]
    lines += [f"- `{label}`: {text}" for label, text in EAGER_DIFFERS.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
