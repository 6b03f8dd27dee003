"""The pipeline as data (issue 19 item 3): one stage table, typed options parsed once, one declaration per shared limit."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mlirfuse.passes import PASSES, STAGES, default_pipeline, get_pass_class, pass_options, pipeline_text
from mlirfuse.passes import base as passes_base
from mlirfuse.passes.options import Limits, declared, option
from mlirfuse.passes.pipeline_text import our_pipeline, parse_pipeline

ROOT = Path(__file__).resolve().parents[1]


def _ours(pipeline) -> list:
    return [(step.what, step.instance) for step in pipeline.steps if step.kind == "ours"]


def test_every_entry_point_builds_the_same_passes():
    text = parse_pipeline("builtin.module(mlirfuse-pipeline{max-args=64 explain=true})")
    values = our_pipeline("mlirfuse-pipeline", {"max-args": 64, "explain": True})  # compile(options=), embed.add_pass
    flag = parse_pipeline("mlirfuse-pipeline{max-args=64 explain=1}")  # --mlirfuse-pipeline='max-args=64 explain=1'
    assert _ours(text) == _ours(values) == _ours(flag)
    vertical = dict(_ours(text))["fusion-fuse-vertical"]
    assert vertical.limits == Limits(max_args=64)  # typed: an int in the shared option group
    assert dict(_ours(text))["fusion-explain-unfused"].limits == vertical.limits


def test_a_pipeline_option_is_parsed_once(monkeypatch):
    calls = []
    real = passes_base.parse_option
    monkeypatch.setattr(passes_base, "parse_option", lambda *a: calls.append(a) or real(*a))
    pipeline = parse_pipeline("mlirfuse-pipeline{max-args=64}")
    # Four stages take max-args; the text is read once.
    assert sum(step.instance is not None and "max-args" in {o.name for o in pass_options(step.what)}
               for step in pipeline.steps) == 4
    assert [a[1] for a in calls] == ["max-args"]


def test_a_parsed_pipeline_is_not_parsed_again(monkeypatch):
    from mlirfuse.dialect import make_context
    from mlirfuse.passes.pipeline import build_pass_manager

    pipeline = parse_pipeline("mlirfuse-pipeline{max-group-size=2}, cse")
    monkeypatch.setattr(pipeline_text, "split_top_level", lambda text, column=0: pytest.fail(f"parsed again: {text}"))
    build_pass_manager(pipeline, make_context())


def test_shared_limits_are_declared_once():
    limits = {d.option.name: d.option for d in declared(Limits)}
    for name in PASSES:
        for each in pass_options(name):
            if each.name in limits:
                assert each == limits[each.name], name
    sources = "".join(path.read_text() for path in (ROOT / "mlirfuse").rglob("*.py"))
    assert "max_args: int = 128" not in sources
    assert sources.count("option(128,") == 1


def test_every_option_has_help():
    for name in PASSES:
        for field in dataclasses.fields(get_pass_class(name)):
            assert field.metadata.get("help") or field.metadata.get("group"), (name, field.name)
    with pytest.raises(ValueError, match="help"):
        option(1, " ")


def test_the_stage_table_is_the_pipeline():
    assert default_pipeline() == [s.name for s in STAGES if "mlirfuse-pipeline" in s.pipelines]
    assert len({s.name for s in STAGES}) == len(STAGES)
    assert all(s.name in PASSES for s in STAGES)
