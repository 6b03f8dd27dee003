"""The textual pass pipeline: its elements, our passes' options checked, errors located.

`builtin.module(fusion-fuse-vertical{max-args=64}, cse, mlirfuse-pipeline{explain=true})`
becomes a list of `Step`s: each top-level element naming one of our passes
or pipelines (`mlirfuse.passes`) is parsed here, a pipeline expanded into its
passes, every option checked against the pass's fields; everything else is
upstream text that MLIR's own parser takes (`mlirfuse.passes.pipeline`). A
bad element raises a PipelineError carrying the text and the column of the
problem.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from mlirfuse.errors import PipelineError
from mlirfuse.passes import (
    OPTION_PIPELINES,
    PASSES,
    PIPELINES,
    STAGE_SWITCHES,
    get_pass_class,
    pass_options,
)
from mlirfuse.passes.base import unknown_option
from mlirfuse.passes.options import parse_option


class Step(NamedTuple):
    """One element of a parsed pipeline: one of our passes ("ours") or upstream pipeline text ("mlir")."""

    kind: str
    what: str  # our pass name, or the upstream element's text
    options: dict[str, str]
    column: int = 0  # where the element starts in the pipeline text, for located errors


def split_top_level(text: str, column: int = 0) -> list[tuple[str, int]]:
    """Split `a, b{x=1}, func.func(c, d)` at commas outside brackets: (element, its column + `column`)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced ')' or '}}' in pass pipeline '{text}'", column=column + i)
        elif ch == "," and depth == 0:
            parts.append((text[start:i], column + start))
            start = i + 1
    if depth != 0:
        raise PipelineError(f"unbalanced '(' or '{{' in pass pipeline '{text}'", column=column + len(text))
    parts.append((text[start:], column + start))
    return [(p.strip(), c + len(p) - len(p.lstrip())) for p, c in parts if p.strip()]


def parse_element(element: str, column: int = 0) -> tuple[str, dict[str, str], dict[str, int]]:
    """`name{k=v k2=v2}` -> (name, {k: v, k2: v2}, {k: column of k, k2: ...})."""
    if "{" not in element:
        return element, {}, {}
    if not element.endswith("}"):
        raise PipelineError(f"malformed options in '{element}'", column=column)
    name, _, body = element[:-1].partition("{")
    options, columns = {}, {}
    for m in re.finditer(r"\S+", body):
        key, eq, value = m.group().partition("=")
        where = column + len(name) + 1 + m.start()
        if not eq:
            raise PipelineError(f"option '{key}' of pass '{name.strip()}' must be key=value", option=key, column=where)
        options[key] = value
        columns[key] = where
    return name.strip(), options, columns


def expand_pipeline(name: str, options: dict[str, str]) -> list[Step]:
    """A pipeline's steps, each given the options its pass has (STAGE_SWITCHES drop or keep a stage)."""
    if options and name not in OPTION_PIPELINES:
        raise PipelineError(f"pipeline '{name}' takes no options", option=next(iter(options)))
    stages = PIPELINES[name]()
    known = [o.name for o in pass_options(name)]
    for key in options:
        if key.replace("_", "-") not in known:
            raise unknown_option(f"pipeline '{name}'", key, known)
    switches = {}
    for key, (stage, default) in STAGE_SWITCHES.items():
        switches[stage] = default
        for given in (key, key.replace("-", "_")):
            if given in options:
                switches[stage] = parse_option(name, given, "bool", options[given])
    steps = []
    for stage in stages:
        if not switches.get(stage, True):
            continue
        fields = {o.name for o in pass_options(stage)}
        steps.append(Step("ours", stage, {k: v for k, v in options.items() if k.replace("_", "-") in fields}))
    explain_stage = STAGE_SWITCHES["explain"][0]
    if switches[explain_stage] and explain_stage not in stages:  # mlirfuse-pipeline: add it where it belongs
        steps = with_explain(steps)
    return steps


def with_explain(steps: list[Step]) -> list[Step]:
    """`steps` with fusion-explain-unfused after the last fusion stage (limits from fusion-fuse-vertical), unless there."""
    names = [step.what for step in steps]
    if "fusion-explain-unfused" in names:
        return steps
    fusion = [i for i, n in enumerate(names) if n in FUSION_STAGES]
    if not fusion:
        return steps
    vertical = next((step for step in steps if step.what == "fusion-fuse-vertical"), None)
    given = vertical.options if vertical else {}
    limits = {k: v for k, v in given.items() if k.replace("_", "-") in ("max-args", "max-group-size")}
    explain = Step("ours", "fusion-explain-unfused", limits, steps[fusion[-1]].column)
    return steps[: fusion[-1] + 1] + [explain] + steps[fusion[-1] + 1 :]


# Our passes and pipelines: the pipeline elements parsed here, not by MLIR.
OUR_NAMES = frozenset(PASSES) | frozenset(PIPELINES)

# The passes that make groups; fusion-explain-unfused describes what they left.
FUSION_STAGES = (
    "fusion-fuse-vertical", "fusion-fuse-horizontal", "fusion-fuse-concat", "fusion-sink-exit-reshapes", "fusion-fuse-matmul",
)


def parse_pipeline(text: str) -> list[Step]:
    """A pipeline string -> its steps, every option of ours checked.

    A PipelineError carries the text and the column of the problem (the
    option, else the element) for `PipelineError.located`.
    """
    try:
        return _parse_pipeline(text)
    except PipelineError as e:
        if e.source is None:
            e.source = text
        raise


def _parse_pipeline(text: str) -> list[Step]:
    body, column = text.strip(), len(text) - len(text.lstrip())
    if body.startswith("builtin.module(") and body.endswith(")"):
        body, column = body[len("builtin.module(") : -1], column + len("builtin.module(")
    steps = []
    for element, at in split_top_level(body, column):
        if re.split(r"[({]", element, maxsplit=1)[0].strip() not in OUR_NAMES:
            steps.append(Step("mlir", element, {}, at))  # upstream: MLIR parses it (nested pipelines, options)
            continue
        name, options, columns = parse_element(element, at)
        if name not in OUR_NAMES:  # `fusion-outline(...)`: ours are module passes, options go in {...}
            raise PipelineError(f"malformed pipeline element '{element}'", column=at)
        try:
            expanded = expand_pipeline(name, options) if name in PIPELINES else [Step("ours", name, options)]
            for step in expanded:
                get_pass_class(step.what).from_options(step.options)  # check the options now, where they can be located
                steps.append(step._replace(column=at))
        except PipelineError as e:
            if e.column is None:
                e.column = columns.get(e.option, at)
            raise
    return steps


def format_options(options: dict) -> str:
    """`{"max-args": 64, "explain": True}` -> `max-args=64 explain=true`: Python values as pipeline text."""
    parts = []
    for key, value in options.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        parts.append(f"{key}={value}")
    return " ".join(parts)
