"""Bounded differential fuzzing in CI: a fixed set of seeded random graphs vs eager.

`MLIRFUSE_FUZZ_CASES` (default 40) cases from seed `MLIRFUSE_FUZZ_SEED`
(default 0) run in a worker subprocess. A wrong answer or a crash fails
the test unless its signature is a filed bug listed in `known.py`;
documented "unsupported" errors are counted, not failed. Reproduce and
shrink a reported seed with `python bench/fuzz.py --seed S --cases 1 --shrink --no-append`.
"""

import os
import random

import pytest
import torch

from .gen import GENERATORS, Case, Input, Node, _Builder, generate, render
from .harness import (
    PRECISION_VARIABLE,
    Worker,
    _upcast_reference,
    accepted_class,
    compare_one,
    eager_outputs,
    normalize,
    reference_noise,
    run_case_source,
)
from .known import ACCEPTED, CI_SEEDS, known_class

CASES = int(os.environ.get("MLIRFUSE_FUZZ_CASES", "40"))
SEED = int(os.environ.get("MLIRFUSE_FUZZ_SEED", "0"))


def test_generator_is_deterministic():
    assert render(generate(7)) == render(generate(7))
    assert render(generate(7)) != render(generate(8))


def test_indexing_over_a_new_input_draws_no_empty_dim():
    # Seed 4242105 with --focus cat,cat_computed,view,slice: no tensor to index was at hand, the new one drew a
    # size-0 dim, and the gather's index shape `randint(1, 0)` raised in the generator ("empty range").
    case = generate(4242105, focus=("cat", "cat_computed", "view", "slice"))
    assert case.nodes


def test_every_op_family_yields_valid_nodes():
    """Each generator adds an eagerly valid node for some seeds: a family eager always rejects would vanish silently."""
    for gen, _ in GENERATORS:
        made = 0
        for seed in range(20):
            b = _Builder(random.Random(seed), seed)
            b.new_input(b.random_shape())
            made += bool(gen(b)) and bool(b.case.nodes)
        assert made >= 3, f"{gen.__name__} made valid nodes for only {made} of 20 seeds"


def test_compare_catches_each_kind_of_wrong_answer():
    x = torch.tensor([1.0, -0.0, float("nan"), float("inf")])
    assert compare_one(x.clone(), x) is None
    assert compare_one(x[:3], x)[0] == "shape"
    assert compare_one(x.double(), x)[0] == "dtype"
    assert compare_one(torch.tensor([1.0, -0.0, 0.0, float("inf")]), x)[0] == "nan"
    assert compare_one(torch.tensor([1.0, -0.0, float("nan"), float("-inf")]), x)[0] == "inf"
    assert compare_one(torch.tensor([1.5, -0.0, float("nan"), float("inf")]), x)[0] == "value"
    assert compare_one(torch.tensor([1.0, 0.0, float("nan"), float("inf")]), x)[0] == "signed-zero"
    assert compare_one(torch.tensor([True, False]), torch.tensor([True, True]))[0] == "value"
    # Each element close to eager or to the float64 reference passes; one close to neither fails.
    eager, ref = torch.tensor([1.0, 2.0], dtype=torch.bfloat16), torch.tensor([1.0, 2.0625], dtype=torch.bfloat16)
    ref[0] = 1.0625
    assert compare_one(torch.tensor([1.0, 2.0625], dtype=torch.bfloat16), eager, ref) is None
    assert compare_one(torch.tensor([1.25, 2.0625], dtype=torch.bfloat16), eager, ref)[0] == "value"
    # float16: a near-zero element is compared at the scale of the output's largest one, no coarser.
    eager, ref = torch.tensor([2.0, 0.001], dtype=torch.float16), torch.tensor([2.0, 0.001], dtype=torch.float16)
    assert compare_one(torch.tensor([2.0, 0.0025], dtype=torch.float16), eager, ref) is None
    assert compare_one(torch.tensor([2.0, 0.01], dtype=torch.float16), eager, ref)[0] == "value"


def test_compare_judges_by_the_path_and_the_reference_but_not_blindly():
    # A float32 output computed in float16 (`low`): an element one f16 ulp from eager passes, two f16 ulps off
    # both eager and the reference fail; at float32's own tolerance the one ulp fails.
    eager, ref = torch.tensor([1.0, 8.0]), torch.tensor([1.0004, 8.0])
    one_ulp, far = torch.tensor([1.0009765625, 8.0]), torch.tensor([1.0, 8.0625])
    assert compare_one(one_ulp, eager, ref)[0] == "value"
    assert compare_one(one_ulp, eager, ref, "float16") is None
    assert compare_one(far, eager, ref, "float16")[0] == "value"
    # An element no farther from the float64 reference than eager's passes; farther, it fails, unless the
    # reference's own noise (inputs moved by their rounding) is that large.
    eager, ref = torch.tensor([9.834395, 1.0]), torch.tensor([9.835044, 1.0])
    assert compare_one(torch.tensor([9.8352, 1.0]), eager, ref, "float32") is None
    assert compare_one(torch.tensor([9.8374, 1.0]), eager, ref, "float32")[0] == "value"
    assert compare_one(torch.tensor([9.8374, 1.0]), eager, ref, "float32", torch.tensor([1.7e-3, 0.0])) is None
    assert compare_one(torch.tensor([9.8374, 1.0001]), eager, ref, "float32", torch.tensor([1.7e-3, 0.0]))[0] == "value"


class _Mixed(torch.nn.Module):
    def forward(self, h, f, i):
        return (h * 2).float() + f, f * 3, i + 1, torch.nn.functional.linear(f.repeat(3, 1), torch.zeros(4, 1)), -(f - f)


def test_eager_outputs_tags_the_lowest_float_dtype_on_the_path():
    h, f, i = torch.ones(2, 1, dtype=torch.float16), torch.ones(2, 1), torch.ones(2, dtype=torch.int32)
    outputs, lowest = eager_outputs(_Mixed(), (h, f, i))
    assert torch.equal(outputs[1], f * 3)
    assert lowest[:3] == ["float16", "float32", None]


def test_signed_zero_classes_explain_only_their_own_zeros():
    # linear(f, +0.0) is all -0.0 products for f < 0: eager (this shape) gives -0.0, a sum started at +0.0 +0.0.
    model, inputs = _Mixed(), (torch.ones(2, 1, dtype=torch.float16), -torch.ones(2, 1), torch.ones(2, dtype=torch.int32))
    expected = model(*inputs)
    assert expected[3].signbit().all() and expected[4].signbit().all()
    gemm = list(expected)
    gemm[3] = expected[3] + 0.0
    assert accepted_class(model, lambda: inputs, gemm, expected, [3]) == "gemm-signed-zero"
    wrong = list(expected)
    wrong[4] = -expected[4]  # a zero no accepted class gives that sign: still a mismatch
    assert accepted_class(model, lambda: inputs, wrong, expected, [4]) is None
    assert accepted_class(model, lambda: inputs, [gemm[0], gemm[1], gemm[2], gemm[3], wrong[4]], expected, [3, 4]) is None


def test_signatures_ignore_numbers_and_value_names():
    assert normalize("bad %12 at loc(\"x.py\":3:4) shape [2, 3]") == normalize("bad %7 at loc(\"y.py\":9:1) shape [5]")


def test_worker_reports_a_wrong_answer_it_is_shown():
    """The harness must be able to fail: a case whose eager reference is rigged differs."""
    case = Case(
        inputs=[Input(name="x1", shape=[3], dtype="float32", seed=1)],
        nodes=[Node(outs=["v2"], expr="$0 + 1", args=["x1"], tag="scalar")],
        returns=["v2"],
    )
    source = render(case)
    rigged = source.replace("v2 = x1 + 1", "v2 = x1 + 1 if torch.compiler.is_exporting() else x1 + 2")
    with Worker() as w:
        assert w.run(source)["status"] == "ok"
        assert w.run(rigged)["status"] == "mismatch"


def test_fuzz_bounded():
    new, known, fixed, counts = [], [], [], {}
    with Worker() as worker:
        for seed in range(SEED, SEED + CASES):
            result = worker.run(render(generate(seed)))
            counts[result["status"]] = counts.get(result["status"], 0) + 1
            if result["status"] in ("mismatch", "crash"):
                cls = known_class(result["sig"], seed)
                (known if cls else new).append(f"seed {seed}: {result['sig']}" + (f"  [{cls}]" if cls else ""))
            elif seed in CI_SEEDS and CI_SEEDS[seed][2]:
                fixed.append(f"seed {seed} ({CI_SEEDS[seed][1]}) now gives {result['status']}")
    print(f"fuzz: {CASES} cases from seed {SEED}: {counts}")
    for line in known:
        print("known:", line)
    assert counts.get("ok", 0) > CASES // 2, counts
    assert not new, "new failures (shrink with `python bench/fuzz.py --seed S --cases 1 --shrink --no-append`):\n" + "\n".join(new)
    assert not fixed, "fixed? remove these seeds from known.CI_SEEDS and flip their regressions:\n" + "\n".join(fixed)
    filed = [line for line in known if not any(f"[{cls}]" in line for cls in ACCEPTED)]
    if filed:
        pytest.xfail(f"{len(filed)} cases hit filed bugs: " + "; ".join(filed))


class _HalfChain(torch.nn.Module):
    def forward(self, x):
        v = torch.nn.functional.silu(x)
        return torch.relu(v), -v


def test_half_intermediate_rounding_explains_zeros_of_a_value_kept_in_f32():
    # Fuzz seed 4242621: silu(-51) = -3.6e-21 rounds to -0.0 in float16, and eager's relu keeps that zero's sign;
    # computed in float32 (as one fused kernel does), relu of the negative value is +0.0.
    model, inputs = _HalfChain(), (torch.tensor([-51.0, 2.0], dtype=torch.float16),)
    expected = model(*inputs)
    assert expected[0][0].item() == 0.0 and expected[0][0].signbit()
    fused = [torch.relu(torch.nn.functional.silu(inputs[0].float())).half(), expected[1]]
    assert not fused[0][0].signbit()
    assert accepted_class(model, lambda: inputs, fused, expected, [0]) == "half-intermediate-rounding"
    wrong = [expected[0], expected[1].clone()]
    wrong[1][0] = -0.0  # eager's +0.0 (of -(-0.0)); float32 gives +0.0 too: no class gives -0.0
    assert accepted_class(model, lambda: inputs, wrong, expected, [1]) is None
    # Without a float16 value the class does not apply.
    f32 = (inputs[0].float(),)
    assert accepted_class(model, lambda: f32, [-model(*f32)[0], model(*f32)[1]], model(*f32), [0]) is None


_EAGER_PRECISION_CASE = """import torch


class Model(torch.nn.Module):
    def forward(self, x1, x2):
        v3 = torch.pow(x1, 3) + 0.1
        v4 = torch.erf(x2)
        return (v3, v4,)


def make_inputs():
    x1 = (torch.arange(-32, 32) * 0.173).to(torch.bfloat16)
    x2 = torch.tensor([-0.55517578125, 0.25, 1.5], dtype=torch.float16)
    return (x1, x2,)
"""


def test_precision_eager_holds_rounding_points_exact_and_accepts_only_documented_oracles(monkeypatch):
    # bench/fuzz.py --precision eager: an f16/bf16 output of an all-pointwise case must equal eager bit for bit,
    # except where only a transcendental op's last bit differs (f16 erf(-0.55517578125): eager's CPU erf gives
    # -0.56787109375, the kernel the correctly rounded -0.5673828125).
    monkeypatch.setenv(PRECISION_VARIABLE, "eager")
    result = run_case_source(_EAGER_PRECISION_CASE)
    assert result["sig"] == "accepted: transcendental-last-bit" and "[1]" in result["detail"], result
    # A lowering that rounds bf16 pow(x, 3) once (x*x*x in f32), where eager rounds x*x first: a rounding point
    # neither oracle may hide (pow by 3 is eager's products, not a libm value, and no decomposition).
    from mlirfuse.ops import elementwise

    monkeypatch.setattr(elementwise, "_pow_eager_square", lambda x, e, dtype: f"{x} * {x} * {x}" if e == 3 else f"1.0 / ({x} * {x})")
    result = run_case_source(_EAGER_PRECISION_CASE)
    assert result["sig"] == "mismatch: not bit-exact in precision=eager (torch.bfloat16)", result


class _NormOfTanh(torch.nn.Module):
    def forward(self, x, w):
        return (torch.nn.functional.layer_norm(torch.tanh(x), (3,), w),)


def test_noise_counts_the_rounding_of_intermediates_of_integer_inputs():
    # Fuzz seed 2760496: a 3-wide layer_norm of tanh of integers (-5, -3, -4): the tanh values lie within 0.005 of
    # each other, so an ulp of tanh moves the result by ~3e-5, beyond float32's tolerance. Moving the integer inputs
    # measures nothing; moving each rounding op's result by an f32 ulp does.
    model = _NormOfTanh()
    inputs = (torch.tensor([[-5, -3, -4]]), torch.tensor([-1.3, 0.8, 2.1]))
    (expected,) = model(*inputs)
    (reference,) = _upcast_reference(model, inputs)
    (noise,) = reference_noise(model, inputs, (reference,))
    t = torch.tanh(inputs[0].float())
    t[0, 1] = torch.nextafter(t[0, 1], torch.tensor(0.0))  # tanh(-3) an ulp off, as another libm may give it
    other_ulp = torch.nn.functional.layer_norm(t, (3,), inputs[1])
    assert compare_one(other_ulp, expected) is not None  # beyond float32's tolerance by itself
    assert compare_one(other_ulp, expected, reference.float(), "float32", noise) is None
    assert compare_one(expected + 1e-3, expected, reference.float(), "float32", noise) is not None


class _HardtanhBackward(torch.nn.Module):
    def forward(self, g, x):
        return (torch.ops.aten.hardtanh_backward(g, x, -1.0, 1.0),)


def test_hardtanh_backward_at_nan_takes_the_specified_value_only():
    # Fuzz seed 2770479: at a NaN input eager's CPU vectorized loop gives 0, its scalar loop and CUDA the gradient;
    # the kernel gives the gradient. Only that value is accepted at those elements.
    model = _HardtanhBackward()
    x = torch.full((64,), float("nan"))
    x[1:4] = torch.tensor([0.5, 2.0, -3.0])
    inputs = (torch.arange(64, dtype=torch.int32) - 7, x)
    (expected,) = model(*inputs)
    fused = torch.where((x <= -1.0) | (x >= 1.0), 0, inputs[0]).float()
    assert compare_one(fused, expected) is not None  # eager's 0 at the NaNs (its vectorized loop)
    assert accepted_class(model, lambda: inputs, [fused], [expected], [0], alternatives_only=True) == "hardtanh-backward-nan"
    wrong = fused.clone()
    wrong[1] = 1.0  # x = 0.5: the gradient (-6) in every loop
    assert accepted_class(model, lambda: inputs, [wrong], [expected], [0], alternatives_only=True) is None


def test_libm_oracle_takes_a_kernel_no_farther_from_it_than_eager():
    # Fuzz seed 2810248: bf16 gelu(-5.09375, tanh) cancels 1 + tanh: float64 gives -1.2e-7, the kernel (a correctly
    # rounded f32 tanh) -1.5e-7, eager -0.0 (its f32 tanh is -1 there). Where eager is the oracle, only eager counts.
    from .harness import _explained_by

    bf16 = torch.bfloat16
    eager = torch.tensor([-0.0, 1.5], dtype=bf16)
    oracle = torch.tensor([-1.2057833653940364e-07, 1.5], dtype=bf16)
    assert _explained_by(torch.tensor([-1.51805579662323e-07, 1.5], dtype=bf16), eager, oracle, "transcendental-last-bit")
    assert not _explained_by(torch.tensor([-3e-07, 1.5], dtype=bf16), eager, oracle, "transcendental-last-bit")
    assert not _explained_by(torch.tensor([-1.51805579662323e-07, 1.5078125], dtype=bf16), eager, oracle,
                             "transcendental-last-bit")
    assert not _explained_by(torch.tensor([-1.51805579662323e-07, 1.5], dtype=bf16), eager, oracle, "export-decomposition")
