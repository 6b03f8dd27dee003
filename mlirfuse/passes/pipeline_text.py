"""The pass pipeline parsed once: its elements, our passes built with their typed options, errors located.

`builtin.module(fusion-fuse-vertical{max-args=64}, cse, mlirfuse-pipeline{explain=true})`
becomes a `Pipeline` of `Step`s: each top-level element naming one of our
passes or pipelines (`mlirfuse.passes`) is parsed here, a pipeline expanded
into its stages (`mlirfuse.passes.STAGES`), and each of our passes built with
its options parsed into its fields, once; everything else is upstream text
that MLIR's own parser takes (`mlirfuse.passes.pipeline`). The same objects
come from `compile(options=...)` and `embed.add_pass` (`our_pipeline`: Python
values, no text in between) and from `mlirfuse-opt`'s flags. A bad element
raises a PipelineError carrying the text and the column of the problem.
"""

from __future__ import annotations

import dataclasses
import re
from typing import NamedTuple

from mlirfuse.errors import PipelineError
from mlirfuse.passes import (
    FUSION_STAGES,
    MLIRFUSE_PIPELINE,
    PASSES,
    PIPELINES,
    STAGES,
    Switches,
    get_pass_class,
    pass_options,
    pipeline_stages,
    switched_on,
)
from mlirfuse.passes.base import ModulePass, unknown_option
from mlirfuse.passes.options import declared, option_text, parse_option


class Step(NamedTuple):
    """One element of a parsed pipeline: one of our passes ("ours") or upstream pipeline text ("mlir")."""

    kind: str
    what: str  # our pass name, or the upstream element's text
    instance: ModulePass | None  # ours: the pass, its options parsed into its fields
    column: int = 0  # where the element starts in the pipeline text, for located errors


@dataclasses.dataclass(frozen=True)
class Pipeline:
    """A parsed pipeline: what `add_passes` appends to a PassManager without parsing anything again."""

    steps: tuple[Step, ...]
    text: str = ""  # what it was parsed from: upstream elements MLIR refuses are located in it

    def __add__(self, other: Pipeline) -> Pipeline:
        return Pipeline(self.steps + other.steps, ",".join(t for t in (self.text, other.text) if t))


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


# The stage explain=true (and --fusion-explain, compile(explain=True)) adds after the fusion stages.
EXPLAIN = next(stage.name for stage in STAGES if stage.switch == "explain")


def expand_pipeline(name: str, options: dict[str, str]) -> list[Step]:
    """A pipeline's steps, each of our passes built with the options it has (the switches drop or keep a stage).

    An option several stages take is parsed once, for the first of them
    (so a bad value is named with that stage).
    """
    known = [o.name for o in pass_options(name)]
    for key in options:
        if key.replace("_", "-") not in known:
            raise unknown_option(f"pipeline '{name}'", key, known)
    switches = {}
    for d in declared(Switches):
        for given in (d.option.name, d.option.name.replace("-", "_")):
            if given in options:
                switches[d.path[0]] = parse_option(name, given, d.option.type, options[given])
    switches = Switches(**switches)
    stages = pipeline_stages(name)
    steps, parsed = [], {}
    for stage in stages:
        if not switched_on(stage, switches):
            continue
        fields = {o.name for o in pass_options(stage.name)}
        given = {k: v for k, v in options.items() if k.replace("_", "-") in fields}
        steps.append(Step("ours", stage.name, get_pass_class(stage.name).from_options(given, parsed)))
    if switches.explain and EXPLAIN not in [stage.name for stage in stages]:  # mlirfuse-pipeline: add it where it belongs
        steps = with_explain(steps)
    return steps


def with_explain(steps: list[Step]) -> list[Step]:
    """`steps` with fusion-explain-unfused after the last fusion stage (limits from fusion-fuse-vertical), unless there."""
    names = [step.what for step in steps]
    if EXPLAIN in names:
        return steps
    fusion = [i for i, n in enumerate(names) if n in FUSION_STAGES]
    if not fusion:
        return steps
    vertical = next((step.instance for step in steps if step.what == "fusion-fuse-vertical"), None)
    explain_class = get_pass_class(EXPLAIN)
    explain = explain_class() if vertical is None else explain_class(limits=vertical.limits)
    return steps[: fusion[-1] + 1] + [Step("ours", EXPLAIN, explain, steps[fusion[-1]].column)] + steps[fusion[-1] + 1 :]


# Our passes and pipelines: the pipeline elements parsed here, not by MLIR.
OUR_NAMES = frozenset(PASSES) | frozenset(PIPELINES)


def our_steps(name: str, options: dict[str, str]) -> list[Step]:
    """Our pass or pipeline `name` with `{key: value text}` options: its steps, each option checked and parsed."""
    if name in PIPELINES:
        return expand_pipeline(name, options)
    return [Step("ours", name, get_pass_class(name).from_options(options))]


def our_pipeline(name: str, values: dict | None = None) -> Pipeline:
    """Our pass or pipeline `name` with options given as Python values (`{"max-args": 64, "explain": True}`).

    Each value is parsed into its field as its pipeline text would be
    (`True` as `true`), so the errors are those of the same element in
    `--pass-pipeline`, located in that element.
    """
    options = {key: option_text(value) for key, value in (values or {}).items()}
    element = f"{name}{{{' '.join(f'{k}={v}' for k, v in options.items())}}}" if options else name
    try:
        return Pipeline(tuple(our_steps(name, options)), element)
    except PipelineError as e:
        columns, at = {}, len(name) + 1
        for key, value in options.items():
            columns[key], at = at, at + len(key) + len(value) + 2
        e.source = element
        if e.column is None:
            e.column = columns.get(e.option, 0)
        raise


def aten_matmul_pipeline() -> Pipeline:
    """mlirfuse-pipeline with matmuls left ATen calls (`compile(matmul="aten")`): the stage table's `aten_matmul` options."""
    steps = []
    for stage in pipeline_stages(MLIRFUSE_PIPELINE):
        if stage.aten_matmul is not None and switched_on(stage, Switches()):
            steps += our_pipeline(stage.name, stage.aten_matmul).steps
    return Pipeline(tuple(steps), ",".join(step.what for step in steps))


def as_pipeline(pipeline: str | list[str] | Pipeline) -> Pipeline:
    """`pipeline` parsed (text, or a list of elements), or as it is if it was."""
    if isinstance(pipeline, Pipeline):
        return pipeline
    return parse_pipeline(pipeline if isinstance(pipeline, str) else ",".join(pipeline))


def parse_pipeline(text: str) -> Pipeline:
    """A pipeline string -> its steps, every option of ours checked and parsed.

    A PipelineError carries the text and the column of the problem (the
    option, else the element) for `PipelineError.located`.
    """
    try:
        return Pipeline(tuple(_parse_pipeline(text)), text)
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
            steps.append(Step("mlir", element, None, at))  # upstream: MLIR parses it (nested pipelines, options)
            continue
        name, options, columns = parse_element(element, at)
        if name not in OUR_NAMES:  # `fusion-outline(...)`: ours are module passes, options go in {...}
            raise PipelineError(f"malformed pipeline element '{element}'", column=at)
        try:
            steps += [step._replace(column=at) for step in our_steps(name, options)]
        except PipelineError as e:
            if e.column is None:
                e.column = columns.get(e.option, at)
            raise
    return steps
