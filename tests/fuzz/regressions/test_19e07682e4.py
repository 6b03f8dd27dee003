"""Fuzz regression (int-from-float-rounding-point): mismatch: value (int64)

Found by `bench/fuzz.py --focus slice,gemm_prologue,mixed,pool` (seed 2710265), shrunk automatically.
erf(-3.9263) is -0.99999997 in float64: -1.0 correctly rounded to float32 (the kernel's value, trunc -1),
-0.99999994 from eager's CPU erf (trunc 0). The harness accepts it as int-from-float-rounding-point
(tests/fuzz/known.py) and nothing else.
"""

import torch

import mlirfuse
from ..gen import load
from ..harness import run_case_source
from ..known import correctly_rounded

SOURCE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x2):
        v3 = torch.erf(x2)
        v8 = torch.cumprod(v3, -3, dtype=torch.int64)
        return (v8,)


def make_inputs():
    g = torch.Generator().manual_seed(499437813)
    x2 = (torch.randn([1, 2, 3, 8], generator=g) * 2).to(torch.float32)
    return (x2,)
'''


def test_19e07682e4():
    Model, make_inputs = load(SOURCE)
    inputs = make_inputs()
    (actual,) = mlirfuse.compile(Model().eval(), inputs)(*inputs)
    (rounded,) = correctly_rounded(Model(), make_inputs)
    assert torch.equal(actual, rounded)
    result = run_case_source(SOURCE)
    assert result["sig"] in ("", "accepted: int-from-float-rounding-point"), result


def test_the_class_refuses_an_integer_no_rounding_explains():
    # The same graph with the kernel's value changed where eager and the correctly rounded graph agree: a mismatch.
    from ..harness import accepted_class

    Model, make_inputs = load(SOURCE)
    model = Model()
    (expected,) = model(*make_inputs())
    wrong = expected.clone()
    wrong.view(-1)[-1] += 1
    assert accepted_class(model, make_inputs, (wrong,), (expected,), [0]) is None
