"""Triton helpers for the elementwise ops whose eager formula is more than one expression.

Each is a `@triton.jit` function a kernel module defines when its body (or
another helper it uses) names it (`emitter.module_prelude`). They follow the
formulas of ATen's CPU kernels, so that integer rounding, signs of zeros and
NaN/inf cases come out as eager's, and they use only what both Triton's
interpreter and its compiler have: `+ - * / % // << >>`, `tl.where`, `tl.exp`,
`tl.log`, `tl.sin`, `tl.cos`, `tl.sqrt`, `tl.floor`, `tl.ceil` (no libdevice,
which the interpreter cannot run).

Triton's integer `//` and `%` truncate (C semantics), as `%` on floats is C's
fmod; eager's floor division and remainder round toward -inf, so they correct
the truncated result where the signs differ. Functions with no exact
elementary formula (atan, pow with a float exponent) are computed in f64 and
rounded once by the caller, which keeps f32 results within an ulp of eager's.
"""

MATH_HELPERS = {
    # sign bit of a float, also for -0.0 and NaNs with the bit set
    "signbit": """@triton.jit
def signbit(x):
    if x.dtype == tl.float64:
        return x.to(tl.int64, bitcast=True) < 0
    else:
        return x.to(tl.float32).to(tl.int32, bitcast=True) < 0
""",
    # C's fmod: a zero result takes the dividend's sign. Triton's float `%` on an
    # NVIDIA GPU gives +0.0 where a is negative (fmod(-3, -3) is -0.0 in eager;
    # found with real launches on an H100); the interpreter's numpy is right.
    "fmod": """@triton.jit
def fmod(a, b):
    m = a % b
    if m.dtype.is_floating():
        zero = tl.abs(m * 0)
        m = tl.where(m == 0, tl.where(signbit(a), -zero, zero), m)
    return m
""",
    # Python's a % b: the result takes the divisor's sign (ints and floats alike).
    "remainder": """@triton.jit
def remainder(a, b):
    mod = a % b
    return tl.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)
""",
    # c10::div_floor_integer
    "floordiv_int": """@triton.jit
def floordiv_int(a, b):
    quot = a // b
    rem = a % b
    return tl.where((rem != 0) & ((a < 0) != (b < 0)), quot - 1, quot)
""",
    # c10::div_floor_floating: exact for integral quotients, IEEE result for b == 0
    "floordiv_float": """@triton.jit
def floordiv_float(a, b):
    mod = a % b
    div = (a - mod) / b
    div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floored = tl.floor(div)
    floored = tl.where(div - floored > 0.5, floored + 1, floored)
    quot = a / b
    zero = tl.where(signbit(quot), -0.0, 0.0)
    return tl.where(b == 0, quot, tl.where(div != 0, floored, zero))
""",
    # f16/bf16 floor division as eager's kernel computes it: c10::div_floor_floating
    # in the dtype's arithmetic, every intermediate rounded to it (f32 in, f32 out)
    "floordiv_half": """@triton.jit
def floordiv_half(a, b, IS_BF16: tl.constexpr):
    mod = a % b
    div = round_half(round_half(a - mod, IS_BF16) / b, IS_BF16)
    div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), round_half(div - 1, IS_BF16), div)
    floored = tl.floor(div)
    floored = tl.where(round_half(div - floored, IS_BF16) > 0.5, round_half(floored + 1, IS_BF16), floored)
    quot = round_half(a / b, IS_BF16)
    zero = tl.where(signbit(quot), -0.0, 0.0)
    return tl.where(b == 0, quot, tl.where(div != 0, floored, zero))
""",
    "round_half": """@triton.jit
def round_half(x, IS_BF16: tl.constexpr):
    if IS_BF16:
        return round_to_bf16(x).to(tl.float32)
    else:
        return x.to(tl.float16).to(tl.float32)
""",
    "trunc": """@triton.jit
def trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))
""",
    # std::nearbyint: halves to even; the sign of a zero result is the input's
    "round_half_even": """@triton.jit
def round_half_even(x):
    r = tl.floor(x)
    d = x - r
    up = (d > 0.5) | ((d == 0.5) & (tl.floor(r * 0.5) * 2 != r))
    r = tl.where(up, r + 1, r)
    return tl.where(r == 0, tl.where(signbit(x), -0.0, 0.0), r)
""",
    # log(1 + x) without cancellation near 0 (Goldberg): log(u) * x / (u - 1) with u = 1 + x
    "log1p": """@triton.jit
def log1p(x):
    u = x + 1
    r = tl.where(u == 1, x, tl.log(u) * (x / (u - 1)))
    return tl.where(x > 1e15, tl.log(u), r)
""",
    # exp(x) - 1 without cancellation near 0 (Kahan): (u - 1) * x / log(u) with u = exp(x)
    "expm1": """@triton.jit
def expm1(x):
    u = tl.exp(x)
    r = (u - 1) * (x / tl.log(u))
    r = tl.where(u == 1, x, r)
    r = tl.where(u == 0, -1.0, r)
    return tl.where(x > 50, u, r)
""",
    "sinh": """@triton.jit
def sinh(x):
    ax = tl.abs(x)
    e = expm1(ax)
    r = tl.where(ax > 20, 0.5 * tl.exp(ax), 0.5 * (e + e / (e + 1)))
    return tl.where(x < 0, -r, tl.where(x == 0, x, r))
""",
    "cosh": """@triton.jit
def cosh(x):
    e = tl.exp(tl.abs(x))
    return 0.5 * (e + 1 / e)
""",
    "asinh": """@triton.jit
def asinh(x):
    a = tl.abs(x)
    r = log1p(a + a * a / (1 + tl.sqrt(1 + a * a)))
    r = tl.where(a > 1e18, tl.log(a) + 0.6931471805599453, r)
    return tl.where(x < 0, -r, tl.where(x == 0, x, r))
""",
    "acosh": """@triton.jit
def acosh(x):
    t = x - 1
    r = log1p(t + tl.sqrt(2 * t + t * t))
    r = tl.where(x > 1e18, tl.log(x) + 0.6931471805599453, r)
    return tl.where(t < 0, tl.sqrt(t), r)  # NaN below 1 (at -1.2e7 t + sqrt(...) cancels to 0: fuzz seed 2210162)
""",
    "atanh": """@triton.jit
def atanh(x):
    r = 0.5 * log1p(2 * x / (1 - x))
    return tl.where(x == 0, x, r)
""",
    # atan in f64 for any float input: a rough guess on [0, 1] refined by three
    # Newton steps on sin(y) - t cos(y) = 0 (error 1e-3 -> 1e-6 -> 1e-12 -> ulps).
    # y stays within [0, 0.9]: sin and cos are their Taylor polynomials to y^17 and
    # y^18 there (remainders below 2e-18), not libdevice's f64 sin/cos, whose
    # large-argument reduction keeps a 40-byte array on the stack (a "spill" in
    # every kernel using atan on sm_80/sm_90: fuzz seed 2700450 with --aot).
    "atan_f64": """@triton.jit
def atan_f64(x):
    x = x.to(tl.float64)
    a = tl.abs(x)
    big = a > 1
    t = tl.where(big, 1 / a, a)
    y = 0.7853981633974483 * t - t * (t - 1) * (0.2447 + 0.0663 * t)
    for _ in tl.static_range(3):
        y2 = y * y
        s = y * (1 + y2 * (-1 / 6 + y2 * (1 / 120 + y2 * (-1 / 5040 + y2 * (1 / 362880 + y2 * (-1 / 39916800 + y2 * (
            1 / 6227020800 + y2 * (-1 / 1307674368000 + y2 * (1 / 355687428096000)))))))))
        c = 1 + y2 * (-1 / 2 + y2 * (1 / 24 + y2 * (-1 / 720 + y2 * (1 / 40320 + y2 * (-1 / 3628800 + y2 * (
            1 / 479001600 + y2 * (-1 / 87178291200 + y2 * (1 / 20922789888000 + y2 * (-1 / 6402373705728000)))))))))
        y = y - (s - t * c) / (c + t * s)
    y = tl.where(big, 1.5707963267948966 - y, y)
    y = tl.where(a != a, x, y)
    return tl.where(x < 0, -y, tl.where(x == 0, x, y))
""",
    # std::atan2's quadrants, zeros and infinities; f64 result
    "atan2_f64": """@triton.jit
def atan2_f64(y, x):
    y = y.to(tl.float64)
    x = x.to(tl.float64)
    ay = tl.abs(y)
    ax = tl.abs(x)
    both_inf = (ay == ax) & (ay * 0 != 0) & (ay == ay)
    r = tl.where(both_inf, 0.7853981633974483, atan_f64(ay / ax))
    r = tl.where((ay == 0) & (ax == 0), 0.0, r)
    r = tl.where(signbit(x), 3.141592653589793 - r, r)
    r = tl.where((x != x) | (y != y), x + y, r)
    return tl.where(signbit(y), -r, r)
""",
    "asin_f64": """@triton.jit
def asin_f64(x):
    x = x.to(tl.float64)
    return atan2_f64(x, tl.sqrt((1 - x) * (1 + x)))
""",
    "acos_f64": """@triton.jit
def acos_f64(x):
    x = x.to(tl.float64)
    return atan2_f64(tl.sqrt((1 - x) * (1 + x)), x)
""",
    # std::pow for floats, in f64: |x|^y = exp(y log|x|), then the C special cases
    "pow_f64": """@triton.jit
def pow_f64(x, y):
    x = x.to(tl.float64)
    y = y.to(tl.float64)
    ax = tl.abs(x)
    r = tl.exp(y * tl.log(ax))
    whole = y == tl.floor(y)
    odd = whole & (tl.floor(y * 0.5) * 2 != y)
    r = tl.where(odd & signbit(x), -r, r)
    r = tl.where((x < 0) & ~whole & (ax * 0 == 0), tl.log(x), r)
    r = tl.where((ax == 1) & (y * 0 != 0) & (y == y), 1.0, r)
    return tl.where((x == 1) | (y == 0), 1.0, r)
""",
    # x * x as eager's f16 pow(x, 3) and pow(x, -2) take it in precision="eager": CUDA's kernel multiplies
    # c10::Half values, so the square is rounded to f16 before the last step; ATen's CPU kernel is std::pow
    # in f32, rounded once. An interpreted launch runs on CPU tensors, a compiled one on CUDA's.
    "on_cpu": """@triton.constexpr_function
def on_cpu():
    return triton.knobs.runtime.interpret
""",
    "half_square": """@triton.jit
def half_square(x):
    if on_cpu():
        return x * x
    else:
        return (x * x).to(tl.float16).to(tl.float32)
""",
    # ATen's powi: square and multiply, wrapping like the integer dtype; negative exponents give 0 except for bases 1 and -1
    "pow_int": """@triton.jit
def pow_int(x, y):
    result = x * 0 + 1
    base = x
    e = tl.where(y < 0, 0, y)
    for _ in range(63):  # a loop, not unrolled: 63 unrolled int64 squarings took 254 registers and spilled 32 bytes on sm_90
        result = tl.where((e & 1) != 0, result * base, result)
        base = base * base
        e = e >> 1
    negative = tl.where(x == 1, 1, tl.where(x == -1, 1 - 2 * (y & 1), 0))
    return tl.where(y < 0, negative.to(result.dtype), result)
""",
    # std::hypot in f64: max * sqrt(1 + (min/max)^2); an infinity wins over a NaN
    "hypot_f64": """@triton.jit
def hypot_f64(x, y):
    ax = tl.abs(x.to(tl.float64))
    ay = tl.abs(y.to(tl.float64))
    big = tl.maximum(ax, ay)
    small = tl.minimum(ax, ay)
    q = small / big
    r = big * tl.sqrt(1 + q * q)
    r = tl.where(big == 0, 0.0, r)
    r = tl.where((ax != ax) | (ay != ay), ax + ay, r)
    infinite = ((ax * 0 != 0) & (ax == ax)) | ((ay * 0 != 0) & (ay == ay))
    return tl.where(infinite, big, r)  # big ignores NaNs: the infinity
""",
    # logaddexp: both infinities of one sign give that infinity
    "logaddexp": """@triton.jit
def logaddexp(a, b):
    m = tl.maximum(a, b)
    r = m + log1p(tl.exp(-tl.abs(a - b)))
    return tl.where((a == b) & (a * 0 != 0), a, r)
""",
    "logaddexp2": """@triton.jit
def logaddexp2(a, b):
    m = tl.maximum(a, b)
    r = m + log1p(tl.exp2(-tl.abs(a - b))) * 1.4426950408889634
    return tl.where((a == b) & (a * 0 != 0), a, r)
""",
}

__all__ = ["MATH_HELPERS"]
