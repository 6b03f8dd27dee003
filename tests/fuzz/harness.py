"""Run one fuzz case against eager and classify the outcome.

Outcomes: `ok`; `mismatch` (a wrong answer: values, dtype, shape, NaN/inf
positions or signed zeros differ from eager); `accepted` (differs from eager
only as eager run with another of its kernels does, see known.ALTERNATIVES);
`unsupported` (a documented `UnsupportedModelError` / `CompilationError`
that names the op it cannot handle); `crash` (any other exception, or the
process dying on a signal, or a hang). Each non-ok outcome carries a
*signature*: the class it belongs to, stable across cases (numbers and SSA
names stripped), which the shrinker keeps fixed while it minimizes.

`Worker` runs cases in a long-lived subprocess (`python -m tests.fuzz.worker`)
so a segfault or heap corruption kills the worker, not the fuzzer.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Workers run with the analyses checked and every launch bounds-checked (issue 9: the fuzz run passes with both on).
ENV = {
    "TRITON_INTERPRET": "1",
    "TRITON_DEFAULT_FP_FUSION": "1",
    "MLIRFUSE_VERIFY_ANALYSES": "1",
    "MLIRFUSE_CHECK_BOUNDS": "1",
}

# MLIRFUSE_FUZZ_DEVICE=cuda: the compiled model runs there, with real launches (compiled kernels, not the
# interpreter); eager's outputs and the float64 reference stay on the CPU, as everywhere else, but an output
# that is not the CPU's eager value may be eager's on the device (accepted: device-eager).
DEVICE_VARIABLE = "MLIRFUSE_FUZZ_DEVICE"
# MLIRFUSE_FUZZ_AOT=1 (bench/fuzz.py --aot): every case that matches eager also has every kernel it made
# (pointwise, reduction, scan, concat, pooling, GEMM, attention) compiled for sm_80 and sm_90; ptxas's spill
# stores or loads there (or local memory) are a `spill` outcome, a compile failure a crash: what a GPU would meet, found without one (issue 21).
AOT_VARIABLE = "MLIRFUSE_FUZZ_AOT"
# MLIRFUSE_FUZZ_PRECISION=eager (bench/fuzz.py --precision eager): cases compile with precision="eager" (every
# f16/bf16 intermediate rounded as eager stores it); a float16/bfloat16 output of a case whose kernels are all
# pointwise must then equal eager bit for bit, and the half-intermediate-rounding class is not accepted.
PRECISION_VARIABLE = "MLIRFUSE_FUZZ_PRECISION"
AOT_ARCHS = (80, 90)

_OP_NAME = re.compile(r"\b(?:torch\.)?(?:aten|prims?|torch)\.\w+")


def normalize(message: str) -> str:
    """The class of an error message: first line, numbers, SSA values, locations and shapes stripped."""
    line = message.strip().splitlines()[0] if message.strip() else ""
    line = re.sub(r"loc\([^)]*\)", "loc", line)
    line = re.sub(r"%[\w#]+", "%v", line)
    line = re.sub(r"\[[\d, ]*\]", "[..]", line)
    line = re.sub(r"\d+", "N", line)
    line = re.sub(r"0x[0-9a-f]+", "0x", line)
    return line[:160]


def compare_one(actual, expected, reference=None, low=None, noise=None) -> tuple[str, str] | None:
    """None if `actual` matches eager's `expected`, else (kind, message).

    `reference`: the same output computed eagerly in float64 (then cast);
    a low-precision value that is close to it is not a wrong answer even if
    eager's own rounding differs (eager rounds after every op, a fused
    kernel once).

    `low`: the lowest float dtype on eager's path to this output (see
    `eager_outputs`), given with a `reference` of the whole graph in
    float64. A float32 output computed from float16/bfloat16 values carries
    their rounding, so it is judged at `low`'s tolerance; and an element no
    farther from the reference than eager's is no wrong answer (eager's own
    error, e.g. after a cancellation, is the noise it can be judged by).

    `noise`: how far the float64 reference moves, per element, when the
    inputs move by their dtype's rounding (see `reference_noise`); an
    element within 4x that of the reference is within the rounding noise
    of an ill-conditioned value (terms near 1e3 cancelling to 10).
    """
    import torch

    if not isinstance(actual, torch.Tensor):
        return "type", f"expected a tensor, got {type(actual).__name__}"
    if actual.shape != expected.shape:
        return "shape", f"shape {list(actual.shape)} != eager {list(expected.shape)}"
    if actual.dtype != expected.dtype:
        return "dtype", f"dtype {actual.dtype} != eager {expected.dtype}"
    if expected.is_floating_point() or expected.is_complex():
        en, an = torch.isnan(expected), torch.isnan(actual)
        if not torch.equal(en, an):
            ok_ref = reference is not None and torch.equal(torch.isnan(reference), an)
            if not ok_ref:
                i = (en != an).nonzero()[0].tolist()
                return "nan", f"NaN positions differ, first at {i}: got {actual[tuple(i)].item()}, eager {expected[tuple(i)].item()}"
        ei = torch.isinf(expected) & ~en
        ai = torch.isinf(actual) & ~an
        if not torch.equal(ei, ai) or not torch.equal(expected[ei], actual[ai] if torch.equal(ei, ai) else expected[ei]):
            ok_ref = reference is not None and torch.equal(torch.isinf(reference), ai) and torch.equal(reference[ai], actual[ai])
            if not ok_ref:
                i = ((ei != ai) | (ei & (expected != actual))).nonzero()[0].tolist()
                return "inf", f"inf positions differ, first at {i}: got {actual[tuple(i)].item()}, eager {expected[tuple(i)].item()}"
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True)
    except AssertionError as e:
        if reference is not None and expected.is_floating_point() and _each_close_to_either(actual, expected, reference, low, noise):
            return None
        return "value", str(e).strip().splitlines()[0] + " " + " ".join(str(e).split("\n")[1:4])
    real = ~torch.isnan(expected) if expected.is_floating_point() else None
    if real is not None and torch.equal(actual[real], expected[real]):
        # Bit-exact values: zeros must carry eager's sign too.
        zeros = expected == 0
        if not torch.equal(torch.signbit(actual[zeros]), torch.signbit(expected[zeros])):
            return "signed-zero", "a zero's sign differs from eager"
    return None


# assert_close's default (rtol, atol) per dtype
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def _each_close_to_either(actual, expected, reference, low=None, noise=None) -> bool:
    """Every element is close to eager's or to the float64 reference's (see `compare_one` for `low`).

    Eager rounds after every op and a fused kernel once, so within one
    output some elements can match eager and others only the reference.
    In float16/bfloat16 an element that a dot product or softmax sum
    cancels to near zero carries the rounding error of the output's large
    elements: there `atol` scales with the largest finite reference value.
    """
    import torch

    dtype = low or str(expected.dtype).removeprefix("torch.")
    rtol, atol = _TOLERANCES.get(dtype, (0.0, 0.0))
    finite = reference[torch.isfinite(reference)]
    if dtype in ("float16", "bfloat16") and finite.numel():
        atol = max(atol, rtol * finite.double().abs().max().item())
    a, e, r = actual.double(), expected.double(), reference.double()
    close = torch.isclose(a, e, rtol, atol, equal_nan=True)
    close |= torch.isclose(a, r, rtol, atol, equal_nan=True)
    if low is not None:
        close |= (a - r).abs() <= (e - r).abs()  # NaN (a non-finite element) compares False
    if noise is not None:
        close |= (a - r).abs() <= 4 * noise
    return bool(close.all())


_PRECISION = ("float64", "float32", "float16", "bfloat16")  # most precise first


def _lowest(dtypes) -> str | None:
    """The float dtype of least precision among `dtypes` (names), None if none is a float."""
    floats = [d for d in dtypes if d in _PRECISION]
    return max(floats, key=_PRECISION.index) if floats else None


def eager_outputs(model, inputs):
    """Eager's outputs and, for each, the lowest float dtype any tensor on its path had (None: no float).

    Ops run as they are, under a `TorchFunctionMode` that only takes notes:
    every result is tagged with the least precise float dtype among its
    tensor arguments' tags and its own dtype.
    """
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._pytree import tree_leaves
    from torch.utils.weak import WeakTensorKeyDictionary

    tags = WeakTensorKeyDictionary()

    def tag(t):
        own = str(t.dtype).removeprefix("torch.") if t.is_floating_point() else None
        return _lowest([own, tags.get(t)])

    class Notes(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            result = func(*args, **kwargs)
            seen = _lowest([tag(t) for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)])
            for t in tree_leaves(result):
                if isinstance(t, torch.Tensor):
                    tags[t] = _lowest([tag(t), seen])
            return result

    with torch.no_grad(), Notes():
        outputs = model(*inputs)
    return outputs, [tag(t) if isinstance(t, torch.Tensor) else None for t in outputs]


def _upcast_reference(model, inputs):
    """The graph run eagerly in float64: every float tensor, dtype argument and float cast made float64.

    None where eager rejects that (the caller then judges by eager alone).
    """
    import torch

    from .known import run_widened

    try:
        return run_widened(model, inputs, (torch.float32, torch.float16, torch.bfloat16), torch.float64)
    except Exception:
        return None


_MANTISSA = {"float32": 24, "float16": 11, "bfloat16": 8, "float64": 53}


# Ops whose float result is exact (a copy, a selection, a sign or an order): the noise estimate leaves them alone.
_EXACT_OPS = frozenset((
    "clone", "copy", "_to_copy", "cat", "stack", "index", "index_select", "gather", "scatter", "select", "slice",
    "expand", "permute", "view", "reshape", "_unsafe_view", "where", "neg", "abs", "relu", "maximum", "minimum",
    "amax", "amin", "max", "min", "sort", "topk", "masked_fill", "fill", "zeros_like", "ones_like", "full",
    "full_like", "constant_pad_nd", "flip", "roll", "repeat", "t", "transpose", "unsqueeze", "squeeze", "split",
    "split_with_sizes", "lift_fresh", "lift_fresh_copy", "alias", "detach", "empty", "empty_like", "zeros", "ones",
    "clamp", "clamp_min", "clamp_max", "sign", "floor", "ceil", "round", "trunc", "scalar_tensor", "arange",
    "hardtanh", "threshold", "pad", "narrow", "unbind", "diagonal", "as_strided", "new_zeros", "new_ones",
))


def _rounding_each_op(generator):
    """A dispatch mode moving each op's new float result by up to an f32 ulp, as an f32 evaluation (a libm within
    an ulp, not only correctly rounded arithmetic) may."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class Rounding(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            schema = func._schema
            if (not isinstance(out, torch.Tensor) or not out.is_floating_point() or schema.is_mutable
                    or any(r.alias_info is not None for r in schema.returns)
                    or func.overloadpacket.__name__ in _EXACT_OPS):
                return out
            move = (torch.rand(out.shape, generator=generator, dtype=torch.float64) * 2 - 1) * 2.0 ** -23
            return out * (1 + move.to(out.dtype))

    return Rounding()


def reference_noise(model, inputs, reference, trials: int = 3):
    """Per output, the largest move of the float64 reference when every float input moves by half an ulp of its
    dtype and every rounding op's result by an f32 ulp.

    A value that cancels (or sits on a comparison's edge) moves far: that is
    the rounding noise of any order of evaluation, eager's and the kernel's
    (also where the inputs are integers and the cancellation is of rounded
    intermediates: fuzz seed 2760496, a 3-wide layer_norm of tanh of ints
    within 0.005 of each other). None where the reference cannot be recomputed.
    """
    import torch

    g = torch.Generator().manual_seed(0)
    moves = None
    for _ in range(trials):
        moved = []
        for x in inputs:
            if isinstance(x, torch.Tensor) and x.is_floating_point():
                ulp = 2.0 ** -_MANTISSA.get(str(x.dtype).removeprefix("torch."), 24)
                x = x.double() * (1 + (torch.rand(x.shape, generator=g, dtype=torch.float64) * 2 - 1) * ulp)
            moved.append(x)
        with _rounding_each_op(g):
            outs = _upcast_reference(model, moved)
        if outs is None:
            return None
        step = [(o.double() - r.double()).abs().nan_to_num(0.0) if isinstance(o, torch.Tensor) and o.is_floating_point()
                and o.shape == r.shape else None for o, r in zip(outs, reference)]
        moves = step if moves is None else [m if s is None else torch.maximum(m, s) if m is not None else None
                                            for m, s in zip(moves, step)]
    return moves


def run_case_source(source: str) -> dict:
    """Compile and run the case in `source` (see gen.render); the outcome as a dict."""
    import torch

    import mlirfuse
    from mlirfuse.errors import CompilationError, UnsupportedModelError
    from .gen import load

    Model, make_inputs = load(source)
    model = Model().eval()
    with torch.no_grad():
        expected = model(*make_inputs())
    reference = _upcast_reference(model, make_inputs())
    device = os.environ.get(DEVICE_VARIABLE)
    compiled_model, compiled_inputs = model, make_inputs
    if device:
        import copy

        compiled_model = copy.deepcopy(model).to(device)

        def compiled_inputs():
            return [x.to(device) if isinstance(x, torch.Tensor) else x for x in make_inputs()]

    started = time.time()
    try:
        precision = os.environ.get(PRECISION_VARIABLE)
        cm = mlirfuse.compile(compiled_model, compiled_inputs(), options={"precision": precision} if precision else None)
        actual = cm(*compiled_inputs())
        if device and isinstance(actual, tuple):
            actual = tuple(a.cpu() if isinstance(a, torch.Tensor) else a for a in actual)
    except (UnsupportedModelError, CompilationError) as e:
        msg = str(e)
        documented = isinstance(e, UnsupportedModelError) or "unsupported" in msg.lower()
        names = _OP_NAME.findall(msg)
        if documented and names and "pipeline failed" not in msg:
            return {"status": "unsupported", "sig": f"{type(e).__name__}: {normalize(msg)}", "detail": msg[:2000]}
        return {"status": "crash", "sig": f"{type(e).__name__}: {normalize(msg)}", "detail": msg[:2000]}
    except Exception as e:  # noqa: BLE001 - anything else is a crash by definition
        import traceback

        return {"status": "crash", "sig": f"{type(e).__name__}: {normalize(str(e))}",
                "detail": traceback.format_exc()[-3000:]}
    finally:
        import gc

        gc.collect()  # heap corruption shows up in this case, not a later one
    elapsed = time.time() - started
    if not isinstance(actual, tuple) or len(actual) != len(expected):
        return {"status": "mismatch", "sig": "mismatch: structure", "detail": f"{type(actual)} vs {len(expected)} outputs"}
    # precision=eager outputs that are not eager's bits but those of an accepted oracle: class -> output indices
    oracles: dict[str, list[int]] = {}
    if os.environ.get(PRECISION_VARIABLE) == "eager" and all(k.kind == "pointwise" for k in cm.kernels.values()):
        outputs = {}
        for i, (a, e) in enumerate(zip(actual, expected)):
            if isinstance(e, torch.Tensor) and e.dtype in (torch.float16, torch.bfloat16) and not _bitwise_equal(a, e):
                for cls in PRECISION_ORACLES:
                    if cls not in outputs:
                        outputs[cls] = PRECISION_ORACLES[cls](model, make_inputs) or ()
                    if i < len(outputs[cls]) and _explained_by(a, e, outputs[cls][i], cls):
                        oracles.setdefault(cls, []).append(i)
                        break
                else:
                    return {"status": "mismatch", "sig": f"mismatch: not bit-exact in precision=eager ({e.dtype})",
                            "detail": f"output {i}: {a} vs eager {e}"[:2000]}
    special = []  # outputs differing from eager only in signs of zeros or NaN/inf positions
    on_device = []  # outputs that are not the CPU's eager values but eager's on the device the case ran on
    device_expected = None

    def device_eager(i: int):
        """Eager's output `i` on the device: where an op's result is the platform's (a float out of an
        integer's range converted: x86 gives INT_MIN, CUDA saturates), the compiled model answers for that device."""
        nonlocal device_expected
        if device_expected is None:
            with torch.no_grad():
                outs = compiled_model(*compiled_inputs())  # the model's copy on the device, run eagerly
            device_expected = tuple(o.cpu() if isinstance(o, torch.Tensor) else o for o in outs)
        return device_expected[i]

    lowest = noise = None  # eager_outputs' dtypes and reference_noise, once an output needs them

    def lowest_on_path(i: int):
        nonlocal lowest
        if lowest is None:
            lowest = eager_outputs(model, make_inputs())[1]
        return lowest[i]

    for i, (a, e) in enumerate(zip(actual, expected)):
        ref = None
        if reference is not None:
            r = reference[i]
            ref = r.to(e.dtype) if isinstance(r, torch.Tensor) and r.shape == e.shape else None
        problem = compare_one(a, e, ref)
        if problem is not None and problem[0] == "value" and ref is not None and e.is_floating_point():
            if noise is None:
                noise = reference_noise(model, make_inputs(), reference) or [None] * len(expected)
            problem = compare_one(a, e, ref, lowest_on_path(i), noise[i])
        if problem is not None and device and compare_one(a, device_eager(i)) is None:
            on_device.append(i)
            continue
        if problem is not None:
            kind, msg = problem
            dtype = str(e.dtype).removeprefix("torch.")
            mismatch = {"status": "mismatch", "sig": f"mismatch: {kind} ({dtype})", "detail": f"output {i}: {msg}"}
            # An integer computed from a float: judged with the special outputs (int-from-float-rounding-point).
            float_path = kind == "value" and not e.is_floating_point() and lowest_on_path(i) is not None
            if kind not in ("signed-zero", "nan", "inf") and not float_path:
                # A value eager's answer for depends on its loop (hardtanh_backward at NaN): only a specified
                # alternative (known.ALTERNATIVES) may explain it, never the rounding classes.
                if kind != "value" or accepted_class(model, make_inputs, actual, expected, [i], alternatives_only=True) is None:
                    return mismatch
            special.append(i)
    if special:
        cls = accepted_class(model, make_inputs, actual, expected, special)
        if cls is None:
            return mismatch
        return {"status": "accepted", "sig": f"accepted: {cls}", "detail": f"outputs {special} as eager's {cls} alternative"}
    if os.environ.get(AOT_VARIABLE) == "1":
        spilled = aot_spills(cm, compiled_model)
        if spilled is not None:
            return spilled
    if on_device:
        return {"status": "accepted", "sig": "accepted: device-eager",
                "detail": f"outputs {on_device} as eager computes them on {device}"}
    if oracles:
        cls = "+".join(oracles)
        return {"status": "accepted", "sig": f"accepted: {cls}", "detail": f"outputs {oracles} as the classes' oracles"}
    return {"status": "ok", "sig": "", "detail": "", "seconds": elapsed}


def _transcendental_oracle(model, make_inputs):
    from .known import correctly_rounded

    return correctly_rounded(model, make_inputs, only_transcendental=True)


def _exported_oracle(model, make_inputs):
    """The graph mlirfuse imports (torch.export's, with the frontend's decompositions) run eagerly, or None."""
    import torch

    from mlirfuse.frontend.importer import export

    try:
        with torch.no_grad():
            outs = export(model, tuple(make_inputs())).module()(*make_inputs())
    except Exception:
        return None
    return tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)


# precision=eager: an f16/bf16 output that is not eager's bit for bit is accepted only as one of these
# (tests/fuzz/known.py ACCEPTED says why), each the graph run eagerly with one documented change.
PRECISION_ORACLES = {"transcendental-last-bit": _transcendental_oracle, "export-decomposition": _exported_oracle}


_AOT_CLEAN: set[tuple[str, str, int]] = set()  # (kernel source, launch, arch) already compiled clean in this worker


def aot_spills(cm, model) -> dict | None:
    """Every kernel of the case compiled for sm_80 and sm_90 as a GPU launches it (its launch's specialization
    from a dry run on meta tensors; any arguments where the run did not reach it): a `spill` or `crash` outcome,
    or None if clean. A kernel whose source and launch already compiled clean in this worker is not compiled again.
    """
    from mlirfuse.compiler import example_arguments
    from mlirfuse.runtime.aot import compile_kernels, is_spill
    from mlirfuse.runtime.dryrun import launch_specializations

    for arch in AOT_ARCHS:
        specialized, _ = launch_specializations(cm.program, cm.kernels, list(example_arguments(cm.imported, model)), arch)
        launch = {k.name: repr(specialized.get(k.name, {}).get("specialization")) for k in cm.kernels.values()}
        kernels = [k for k in cm.kernels.values() if (k.source, launch[k.name], arch) not in _AOT_CLEAN]
        if not kernels:
            continue
        try:
            compiled = compile_kernels(kernels, arch=arch, jobs=1, specialized=specialized)
        except Exception as e:  # noqa: BLE001 - a kernel Triton cannot compile is a crash by definition
            return {"status": "crash", "sig": f"aot sm_{arch}: {normalize(str(e))[:200]}", "detail": str(e)[-2000:]}
        for c in compiled:
            usage = c.resources()
            if is_spill(usage):  # ptxas's spill stores/loads (a stack frame alone holds local arrays, e.g. libdevice sinf's)
                kind = next(k.kind for k in kernels if k.name == c.name)
                return {"status": "spill", "sig": f"spill: {kind} sm_{arch}",
                        "detail": f"@{c.name}: {usage} ({cm.kernels[c.name].shape})"}
        _AOT_CLEAN.update((k.source, launch[k.name], arch) for k in kernels)
    return None


def accepted_class(model, make_inputs, actual, expected, outputs, alternatives_only: bool = False) -> str | None:
    """The accepted class (known.ALTERNATIVES) whose eager alternative gives each element of `actual`'s `outputs` that eager does not.

    Each class alone first, then all together (named a+b), then the graph with its float16/bfloat16 values
    computed in float32 (known.half_intermediates_in_f32, class half-intermediate-rounding); None if none does.
    """
    import torch
    from torch.overrides import TorchFunctionMode

    from .known import ALTERNATIVES, correctly_rounded, half_intermediates_in_f32

    def run(classes):
        """The outputs with `classes`' functions replaced, and the classes whose functions ran."""
        table = {name: (cls, ALTERNATIVES[cls][1]) for cls in classes for name in ALTERNATIVES[cls][0]}
        used = set()

        class Alternative(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                cls, alt = table.get(getattr(func, "__name__", ""), (None, None))
                if alt is None:
                    return func(*args, **(kwargs or {}))
                used.add(cls)
                return alt(func, args, kwargs or {})

        try:
            with torch.no_grad(), Alternative():
                return model(*make_inputs()), used
        except Exception:
            return None, used

    def explains(outs) -> bool:
        """Each element of each output is eager's exactly, or the alternative's (as `compare_one` judges)."""
        for i in outputs:
            a, e, alt = actual[i], expected[i], outs[i]
            if not isinstance(alt, torch.Tensor) or (alt.shape, alt.dtype) != (e.shape, e.dtype):
                return False
            same = ((a == e) & (torch.signbit(a) == torch.signbit(e))) | (torch.isnan(a) & torch.isnan(e))
            if compare_one(a, torch.where(same, e, alt)) is not None:
                return False
        return True

    names = list(ALTERNATIVES)
    for classes in [[n] for n in names] + [names]:
        outs, used = run(classes)
        if used and outs is not None and explains(outs):
            return "+".join(n for n in names if n in used)
    if alternatives_only:
        return None
    outs = half_intermediates_in_f32(model, make_inputs) if os.environ.get(PRECISION_VARIABLE) != "eager" else None
    if outs is not None and explains(outs):
        return "half-intermediate-rounding"
    outs = correctly_rounded(model, make_inputs)
    if outs is not None and explains(outs):
        return "int-from-float-rounding-point"
    return None


def _explained_by(actual, expected, oracle, cls: str) -> bool:
    """Whether an f16/bf16 output that is not eager's is the oracle's (PRECISION_ORACLES).

    The libm oracle also takes an element where eager's own libm puts eager off the oracle and the kernel is no
    farther from it: a cancellation after a transcendental op can make both differ from the oracle (fuzz seed
    2810248: bf16 gelu(-5.09, tanh) is -1.2e-7 in float64, -1.5e-7 from the kernel's correctly rounded tanh,
    -0.0 from eager's, whose f32 tanh there is -1). Every element where eager is the oracle stays held to it.
    """
    import torch

    if _bitwise_equal(actual, oracle):
        return True
    if cls != "transcendental-last-bit" or not isinstance(oracle, torch.Tensor) or oracle.shape != expected.shape:
        return False
    a, e, o = actual.double(), expected.double(), oracle.double()
    nan = torch.isnan(e) & torch.isnan(a)
    same = nan | ((a == e) & (torch.signbit(a) == torch.signbit(e))) | ((a == o) & (torch.signbit(a) == torch.signbit(o)))
    closer = (e != o) & ((a - o).abs() <= (e - o).abs())
    return bool((same | closer).all())


def _bitwise_equal(a, e) -> bool:
    """Same shape, dtype and bits (any NaN equals any NaN)."""
    import torch

    if not isinstance(a, torch.Tensor) or a.shape != e.shape or a.dtype != e.dtype:
        return False
    nan = torch.isnan(e)
    return torch.equal(nan, torch.isnan(a)) and torch.equal(a[~nan].view(torch.int16), e[~nan].view(torch.int16))


def assert_matches_eager(source: str) -> None:
    """For saved regression tests: the case in `source` compiles and equals eager."""
    result = run_case_source(source)
    assert result["status"] in ("ok", "unsupported"), f"{result['sig']}\n{result['detail']}"


def assert_matches_eager_isolated(source: str, timeout: float = 300, repeat: int = 5) -> None:
    """As `assert_matches_eager`, in a fresh subprocess: for cases that kill the process.

    Heap corruption does not always abort at once: the case runs `repeat`
    times in one worker and every run must pass.
    """
    with Worker() as w:
        for _ in range(repeat):
            result = w.run(source, timeout=timeout)
            assert result["status"] in ("ok", "unsupported"), f"{result['sig']}\n{result['detail']}"


class Worker:
    """A subprocess running cases one at a time; restarted when it dies or hangs."""

    MODULE = "tests.fuzz.worker"  # `python -m` this; it answers one JSON line per request line

    def __init__(self):
        self.proc = None
        self.ran = 0  # cases run by the current process
        self.previous = ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        env = dict(os.environ)
        env.update(ENV)
        if env.get(DEVICE_VARIABLE, "cpu") != "cpu":
            del env["TRITON_INTERPRET"]  # the compiled model's kernels launch for real
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        self.ran = 0
        self.proc = subprocess.Popen(
            [sys.executable, "-m", self.MODULE], cwd=REPO, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
        )

    def close(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait()
            self.proc = None

    def run(self, source: str, timeout: float = 180) -> dict:
        """The outcome of `source`; a death is confirmed by re-running the case alone in a fresh worker.

        Heap corruption may kill the process one case late: a case that dies
        only after others ran is reported as a crash of the previous case.
        """
        fresh = self.proc is None or self.proc.poll() is not None or self.ran == 0
        result = self._run(source, timeout)
        if result["sig"].startswith("process died") and not fresh:
            again = self._run(source, timeout)
            if not again["sig"].startswith("process died"):
                again = dict(again)
                again.update(status="crash", sig=f"{result['sig']} after the previous case",
                             detail=f"the worker died after running this case:\n{self.previous}")
            result = again
        self.previous = source
        return result

    def which(self) -> str:
        """The file of the `mlirfuse` package the worker tests (see worker.py's MLIRFUSE_FUZZ_TARGET)."""
        return self._run(None, 60)["detail"]

    def _run(self, source: str | None, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        request = {"source": source} if source is not None else {"which": True}
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        # A fresh worker first imports torch, mlirfuse and Triton: not the case's time.
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout + (300 if self.ran == 0 else 0))
        line = self.proc.stdout.readline() if ready else b""
        if line:
            self.ran += 1
            return json.loads(line)
        if not ready:
            self.close()
            return {"status": "crash", "sig": "timeout", "detail": f"no answer within {timeout}s"}
        code = self.proc.wait()
        self.proc = None
        name = signal.Signals(-code).name if code < 0 else f"exit {code}"
        return {"status": "crash", "sig": f"process died: {name}", "detail": f"the worker died ({name})"}
