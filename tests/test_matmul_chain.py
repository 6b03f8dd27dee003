"""Back-to-back GEMMs in one launch (kind "matmul-chain", lowering/matmul_chain.py) against eager.

An MLP `x + fc2(act(fc1(x)))` whose hidden fits on chip is one kernel: the
hidden activation is never written. Row counts are not multiples of the
block (37 rows, 2 x 5), hidden sizes not powers of two; f16/bf16 round the
hidden to their dtype as the two-kernel version stores it. The limits (a
hidden too large, an intermediate read elsewhere or as a B operand, GEMMs
whose batch dims differ, a policy's veto) stay two launches, with the reason
in explain. Batched GEMMs with one batch chain too.
"""

from __future__ import annotations

import pytest
import torch

import mlirfuse
from mlirfuse.dialect import GroupKind
from helpers import Lambda

F = torch.nn.functional
TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2),
}
ACTIVATIONS = {"silu": F.silu, "gelu": F.gelu, "relu": F.relu}


class MLP(torch.nn.Module):
    def __init__(self, d: int = 48, hidden: int = 96, act: str = "silu", bias: bool = True):
        super().__init__()
        self.a, self.b = torch.nn.Linear(d, hidden, bias=bias), torch.nn.Linear(hidden, d, bias=bias)
        self.act = ACTIVATIONS[act]

    def forward(self, x):
        return x + self.b(self.act(self.a(x)))


def _kinds(cm) -> list[str]:
    return [k.kind for k in cm.kernels.values()]


def _reasons(cm) -> list[str]:
    return [r for rs in cm.explain().values() for r in rs]


def test_the_issue_mlp_is_one_launch():
    torch.manual_seed(0)
    model, x = MLP().eval(), torch.randn(8, 48)
    cm = mlirfuse.compile(model, (x,))
    assert cm.stats["launches"] == 1 and cm.stats["unfused_ops"] == 0, cm.stats
    assert _kinds(cm) == [GroupKind.MATMUL_CHAIN]
    torch.testing.assert_close(cm(x), model(x), **TOL[torch.float32])
    # Weights are bound, not copied: an update is seen by the next call.
    with torch.no_grad():
        model.a.weight.mul_(-2)
    torch.testing.assert_close(cm(x), model(x), **TOL[torch.float32])


# (dtype, activation, input shape, d, hidden, biases): every dtype with every activation; 2-d and 3-d inputs,
# rows not a multiple of the block, hidden sizes that are not powers of two (up to the dtype's limit).
CASES = [
    (torch.float32, "silu", (37, 24), 24, 40, True),
    (torch.float32, "gelu", (2, 5, 16), 16, 100, False),
    (torch.float32, "relu", (70, 20), 20, 128, True),
    (torch.float16, "silu", (2, 5, 32), 32, 72, True),
    (torch.float16, "gelu", (37, 24), 24, 200, True),
    (torch.float16, "relu", (3, 7, 16), 16, 24, False),
    (torch.bfloat16, "silu", (37, 48), 48, 96, True),
    (torch.bfloat16, "gelu", (2, 5, 16), 16, 256, False),
    (torch.bfloat16, "relu", (70, 24), 24, 33, True),
]


@pytest.mark.parametrize(
    "dtype, act, shape, d, hidden, bias", CASES,
    ids=[f"{str(c[0])[6:]}-{c[1]}-{'x'.join(map(str, c[2]))}-h{c[4]}{'' if c[5] else '-nobias'}" for c in CASES],
)
def test_mlp_chain_matches_eager(dtype, act, shape, d, hidden, bias):
    torch.manual_seed(0)
    model = MLP(d, hidden, act, bias).to(dtype).eval()
    x = torch.randn(*shape).to(dtype)
    expected = model(x)
    cm = mlirfuse.compile(model, (x,))
    assert cm.stats["launches"] == 1 and _kinds(cm) == [GroupKind.MATMUL_CHAIN], (cm.stats, _kinds(cm))
    got = cm(x)
    torch.testing.assert_close(got, expected, **TOL[dtype])
    if dtype != torch.float32:
        # As close to eager as the two-kernel version (the hidden rounded as its first kernel stores it).
        apart = mlirfuse.compile(model, (x,), policy=lambda c: "two kernels" if c.kind == "chain" else None)
        assert apart.stats["launches"] == 2, apart.stats
        err, err_apart = ((y.float() - expected.float()).abs().max().item() for y in (got, apart(x)))
        assert err <= 2 * err_apart + TOL[dtype]["atol"] / 4, (err, err_apart)


def test_mm_chain_with_a_prologue_a_cast_between_and_an_addmm():
    """x * 0.5 (a prologue) -> mm -> tanh -> cast to f16 -> addmm with a scale: the first GEMM in f32, the second in f16."""
    torch.manual_seed(0)
    w1, w2, b2 = torch.randn(24, 40), torch.randn(40, 20).half(), torch.randn(20).half()

    def fn(x):
        return torch.addmm(b2, torch.tanh((x * 0.5) @ w1).half(), w2, beta=0.5, alpha=2.0) * 3

    x = torch.randn(19, 24)
    model = Lambda(fn)
    cm = mlirfuse.compile(model, (x,))
    assert _kinds(cm) == [GroupKind.MATMUL_CHAIN], _kinds(cm)
    torch.testing.assert_close(cm(x), model(x), **TOL[torch.float16])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_batched_chain_is_one_launch(dtype):
    """bmm -> gelu -> matmul with a broadcast B (a batch of 1) and a bias: one program per rows and batch index."""
    torch.manual_seed(0)

    def fn(x, w1, w2, b):
        return torch.matmul(F.gelu(torch.bmm(x, w1)), w2) + b

    inputs = tuple(torch.randn(*s).to(dtype) for s in ((3, 19, 16), (3, 16, 40), (1, 40, 24), (24,)))
    model = Lambda(fn)
    cm = mlirfuse.compile(model, inputs)
    assert cm.stats["launches"] == 1 and _kinds(cm) == [GroupKind.MATMUL_CHAIN], (cm.stats, _kinds(cm))
    torch.testing.assert_close(cm(*inputs), model(*inputs), **TOL[dtype])


def test_chain_bytes_leave_out_the_hidden():
    """The cost model's bytes: every input read once, the output written once; the hidden not at all."""
    model, x = MLP().eval(), torch.randn(8, 48)
    cm = mlirfuse.compile(model, (x,))
    read = 4 * (8 * 48 + 96 * 48 + 96 + 48 * 96 + 48)
    assert cm.stats["bytes"] == read + 4 * 8 * 48, cm.stats
    apart = mlirfuse.compile(model, (x,), policy=lambda c: "apart" if c.kind == "chain" else None)
    # Two kernels: the hidden written and read back, and x read by each (the first GEMM's A, the residual).
    assert apart.stats["bytes"] == cm.stats["bytes"] + 2 * 4 * 8 * 96 + 4 * 8 * 48, apart.stats


def _returns_hidden(x, w1, w2):
    h = F.relu(x @ w1)
    return h @ w2, h


def _adds_hidden(x, w1, w2):
    h = x @ w1
    return h @ w2 + h


@pytest.mark.parametrize(
    "fn, inputs, why",
    [
        # A hidden past the f32 limit (128): its rows would not fit on chip.
        (lambda x, w1, w2: F.relu(x @ w1) @ w2, (torch.randn(9, 16), torch.randn(16, 130), torch.randn(130, 8)),
         "hidden size 130 (a block of 256) > 128"),
        # The hidden is returned too: it must be written.
        (_returns_hidden, (torch.randn(9, 16), torch.randn(16, 24), torch.randn(24, 8)), "also read elsewhere"),
        # The hidden is the second GEMM's B operand: its rows are not the first's.
        (lambda x, w1, w2: w2 @ F.relu(x @ w1), (torch.randn(24, 16), torch.randn(16, 24), torch.randn(8, 24)),
         "B operand"),
        # The hidden is read by the second GEMM's epilogue too.
        (_adds_hidden, (torch.randn(9, 16), torch.randn(16, 16), torch.randn(16, 16)),
         "read by the second GEMM's 'torch.aten.add.Tensor'"),
        # The first GEMM stores a reshape of its result (a view of a computed value).
        (lambda x, w1, w2: F.relu(x @ w1).reshape(24, 24) @ w2,
         (torch.randn(24, 16), torch.randn(16, 24), torch.randn(24, 8)), "stores a 'torch.aten.view'"),
        # A GEMM of 2 x 9 rows into a batched one (a batch of 2, 9 rows each).
        (lambda x, w1, w2: torch.bmm(F.relu(x @ w1), w2),
         (torch.randn(2, 9, 16), torch.randn(16, 24), torch.randn(2, 24, 8)), "batch dims differ"),
    ],
    ids=["hidden-too-large", "hidden-returned", "b-operand", "read-by-epilogue", "stored-view", "mismatched-batch"],
)
def test_chain_limits_stay_two_launches(fn, inputs, why):
    model = Lambda(fn)
    cm = mlirfuse.compile(model, inputs, explain=True)
    assert GroupKind.MATMUL_CHAIN not in _kinds(cm) and cm.stats["launches"] >= 2, (_kinds(cm), cm.stats)
    assert any(why in r for r in _reasons(cm)), _reasons(cm)
    torch.testing.assert_close(cm(*inputs), model(*inputs), **TOL[torch.float32])


def test_a_policy_vetoes_the_chain():
    model, x = MLP().eval(), torch.randn(8, 48)
    seen = []

    def no_chains(c):
        seen.append(c.kind)
        return "policy: GEMMs apart" if c.kind == "chain" else None

    cm = mlirfuse.compile(model, (x,), policy=no_chains, explain=True)
    assert "chain" in seen and cm.stats["launches"] == 2, (seen, cm.stats)
    assert any("policy: GEMMs apart" in r for r in _reasons(cm)), _reasons(cm)
    torch.testing.assert_close(cm(x), model(x), **TOL[torch.float32])


def test_a_gemm_reading_a_cat_by_k_split_does_not_chain():
    # Fuzz seed 2900238: cat([x[i] * 2, a, b, c], 1) @ w1 @ w2 became one matmul-chain kernel, which reads no cat
    # piece by piece: "no Triton lowering for 'torch.aten.cat'" at compile. Now the K-split GEMM and the second
    # GEMM are two kernels, matching eager.
    torch.manual_seed(0)
    x = torch.randn(5, 5).to(torch.bfloat16)
    i = torch.tensor([0, 3, -1])
    a, b, c = (torch.randn(3, 3).to(torch.bfloat16) for _ in range(3))
    w1, w2 = torch.randn(14, 5).to(torch.bfloat16), torch.randn(5, 4).to(torch.bfloat16)
    fn = Lambda(lambda x, i, a, b, c, w1, w2: torch.cat([x[i] * 2, a, b, c], 1) @ w1 @ w2)
    cm = mlirfuse.compile(fn, (x, i, a, b, c, w1, w2))
    assert GroupKind.MATMUL_CHAIN not in [k.kind for k in cm.kernels.values()]
    torch.testing.assert_close(cm(x, i, a, b, c, w1, w2), fn(x, i, a, b, c, w1, w2), atol=1e-1, rtol=1.6e-2)
