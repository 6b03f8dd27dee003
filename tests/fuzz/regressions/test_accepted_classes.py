"""Fuzz regressions of accepted classes (known.ALTERNATIVES): the harness reports them as `accepted`.

Shrunk by hand from fuzz seeds 880284 (group_norm with a -0.0 weight and
bias, bf16), 9500051 (group_norm without weight and bias of a -0.0 in a
zero-mean group) and 880699 (maximum of an integer 0 and a float -0.0). Each case
still differs from eager (the assertion on the signature keeps the class
honest: a fix that makes it `ok` should retire the class) and matches eager
run with the class's alternative.
"""

import pytest

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
