"""Fuzz regressions of accepted classes (known.ALTERNATIVES): the harness reports them as `accepted`.

Shrunk by hand from fuzz seeds 880284 (group_norm with a -0.0 weight and
bias, bf16), 9500051 (group_norm without weight and bias of a -0.0 in a
zero-mean group) and 880699 (maximum of an integer 0 and a float -0.0). Each case
still differs from eager (the assertion on the signature keeps the class
honest: a fix that makes it `ok` should retire the class) and matches eager
run with the class's alternative.
"""

import math

import pytest

import mlirfuse
from ..gen import load
from ..harness import run_case_source

GROUP_NORM = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x, w, b):
        return (F.group_norm(x, 2, w, b),)


def make_inputs():
    x = torch.tensor([[[1.0, 2.0], [3.0, 5.0], [0.5, 4.0], [2.0, 7.0]]], dtype=torch.bfloat16)
    w = torch.tensor([1.0, -0.0, 2.0, 1.0], dtype=torch.bfloat16)
    b = torch.tensor([0.5, -0.0, 1.0, 0.0], dtype=torch.bfloat16)
    return (x, w, b)
'''

GROUP_NORM_NO_AFFINE = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x):
        return (F.group_norm(x, 1),)


def make_inputs():
    return (torch.tensor([[-0.0], [1.0]]),)
'''

MAXIMUM = '''\
import torch


class Model(torch.nn.Module):
    def forward(self, i, f):
        return (torch.maximum(i, f),)


def make_inputs():
    return (torch.zeros(3, dtype=torch.int64), torch.tensor([-0.0, 1.0, -0.0]))
'''


@pytest.mark.parametrize(
    "source, cls",
    [(GROUP_NORM, "group-norm-signed-zero"), (GROUP_NORM_NO_AFFINE, "group-norm-signed-zero"),
     (MAXIMUM, "maximum-signed-zero")],
    ids=["group_norm", "group_norm_no_affine", "maximum"],
)
def test_accepted_class_is_recognised(source, cls):
    result = run_case_source(source)
    assert (result["status"], result["sig"]) == ("accepted", f"accepted: {cls}"), result


GELU_AT_INFINITY = '''\
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def forward(self, x):
        return (F.gelu(x * 2),)


def make_inputs():
    return (torch.tensor([float("inf"), -20.0, 1.0, -0.0, 1.5e38, 2.0, -1.0, 0.5] * 4),)
'''


def test_gelu_special_values_accepted_or_equal():
    # Eager's vectorized f32 gelu gives NaN at +inf and +0.0 or -0.0 at -40 depending on the CPU
    # (special_values.EAGER_DIFFERS); the kernel's specified values are accepted, anything else is not.
    result = run_case_source(GELU_AT_INFINITY)
    assert result["sig"] in ("", "accepted: gelu-special-values"), result
    Model, make_inputs = load(GELU_AT_INFINITY)
    (actual,) = mlirfuse.compile(Model(), make_inputs())(*make_inputs())
    assert actual[0] == math.inf and actual[1] == 0 and actual[1].signbit() and actual[4] == make_inputs()[0][4] * 2
