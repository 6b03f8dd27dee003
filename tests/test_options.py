"""Pipeline options through `mlirfuse.compile(..., options=...)`: the same names and meanings as in pipeline text."""

from __future__ import annotations

import pytest
import torch

import mlirfuse
from mlirfuse.passes import pass_options
from helpers import Lambda


def chain(x):
    return torch.tanh(torch.exp(x) * 2 + 1)


X = torch.randn(4, 8)


def test_options_are_the_pipeline_options():
    by_options = mlirfuse.compile(Lambda(chain), (X,), options={"max-group-size": 2})
    by_text = mlirfuse.compile(Lambda(chain), (X,), pipeline="mlirfuse-pipeline{max-group-size=2}")
    default = mlirfuse.compile(Lambda(chain), (X,))
    assert by_options.mlir == by_text.mlir
    assert default.stats["kernels"] == 1 and by_options.stats["kernels"] == 2, by_options.mlir
    torch.testing.assert_close(by_options(X), chain(X))


def test_snake_case_and_switches():
    cm = mlirfuse.compile(Lambda(lambda x: torch.logcumsumexp(torch.exp(x), 0) + 1), (X,), options={"max_args": 64, "explain": True})
    assert cm.explain(), cm.mlir  # explain=true ran fusion-explain-unfused


def test_a_misspelt_option_names_the_valid_ones():
    with pytest.raises(mlirfuse.PipelineError) as e:
        mlirfuse.compile(Lambda(chain), (X,), options={"max-arg": 4})
    message = str(e.value)
    assert "pipeline 'mlirfuse-pipeline' has no option 'max-arg'" in message
    assert "did you mean 'max-args'?" in message
    for option in pass_options("mlirfuse-pipeline"):
        assert option.name in message


def test_a_wrong_type_is_named():
    with pytest.raises(mlirfuse.PipelineError, match="option 'max-args' of pass 'fusion-fuse-vertical' expects int, got 'many'"):
        mlirfuse.compile(Lambda(chain), (X,), options={"max-args": "many"})


def test_options_with_a_pipeline_is_an_error():
    with pytest.raises(mlirfuse.PipelineError, match="with pipeline=, write them in its text"):
        mlirfuse.compile(Lambda(chain), (X,), pipeline="mlirfuse-pipeline", options={"max-args": 4})
