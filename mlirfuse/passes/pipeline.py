"""Turn a textual pass pipeline into a PassManager mixing our passes and upstream ones.

MLIR's textual pipeline parser knows only C++-registered passes, so the
pipeline string is split here: each top-level element that names one of our
passes (or pipelines) becomes a Python pass, everything else is handed to
MLIR as text (`cse`, `canonicalize`, `func.func(cse)` ...).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import gc
import logging
import os
import re
import sys
import time
import traceback
from typing import NamedTuple

from mlirfuse.analysis import AnalysisManager
from mlirfuse.dialect import verify_fusion_ops
from mlirfuse.errors import MlirfuseError, PipelineError
from mlirfuse.ir import ir, passmanager
from mlirfuse.passes import (
    OPTION_PIPELINES,
    PASSES,
    PIPELINES,
    STAGE_SWITCHES,
    get_pass_class,
    pass_options,
)
from mlirfuse.passes.base import parse_option, unknown_option

logger = logging.getLogger("mlirfuse.pipeline")


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


@contextlib.contextmanager
def _gc_paused():
    """No cyclic garbage collection while a pass runs.

    A pass creates and drops many binding objects while its analyses hold a
    live set that grows with the model; collections scanning that set made
    long pipelines superlinear (LSTM 400 steps: about 20% of the time). The
    garbage is collected after the pass.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _python_pass(instance, am: AnalysisManager, *, fresh: bool = False, before=None):
    """`instance` as a callable pass for `PassManager.add`.

    `fresh`: drop whatever `am` holds first (the first of our passes in a
    run: a PassManager may run again, on another module). `before(name)` is
    called as the pass starts (progress).
    """

    def run(op, pass_):
        if before is not None:
            before(instance.name)
        start = time.perf_counter()
        try:
            with op.context, ir.Location.unknown(op.context), _gc_paused():
                if fresh:
                    am.invalidate()
                instance.apply(op, am)
                am.invalidate(instance.preserves)
                # The fusion ops' verifier (see mlirfuse.dialect.fusion) after each of our passes.
                if not verify_fusion_ops(op):
                    pass_.signal_pass_failure()
                if am.verify:
                    problems = am.check()
                    if problems:
                        op.location.emit_error(
                            f"--verify-analyses: after '{instance.name}' the maintained analyses differ "
                            "from recomputed ones:\n  " + "\n  ".join(problems)
                        )
                        pass_.signal_pass_failure()
        except MlirfuseError as e:
            op.location.emit_error(f"{instance.name}: {e}")
            pass_.signal_pass_failure()
        except Exception as e:  # a bug in a pass: report it as a located error, not a crash
            if os.environ.get("MLIRFUSE_DEBUG"):
                traceback.print_exc(file=sys.stderr)
            op.location.emit_error(f"internal error in pass '{instance.name}': {type(e).__name__}: {e}")
            pass_.signal_pass_failure()
        logger.debug("%s: %.3f s", instance.name, time.perf_counter() - start)

    run.__name__ = instance.name
    return run


def add_passes(
    pm: passmanager.PassManager,
    pipeline: str | list[str],
    context: ir.Context,
    *,
    verify_analyses: bool | None = None,
    explain: bool = False,
    progress=None,
) -> None:
    """Append `pipeline` (text, or a list of pass names) to `pm`, ours and upstream elements in order.

    `pm` may be anyone's PassManager anchored on `builtin.module` (see
    `mlirfuse.embed`). `verify_analyses` (default: the
    MLIRFUSE_VERIFY_ANALYSES environment variable) recomputes every maintained
    analysis after each of our passes and fails on a difference. `explain`
    (--fusion-explain) runs fusion-explain-unfused after the fusion passes.
    `progress(index, total, name)` is called as each of our passes starts.
    A bad pipeline raises PipelineError (located: `.source`, `.column`).
    """
    if verify_analyses is None:
        verify_analyses = os.environ.get("MLIRFUSE_VERIFY_ANALYSES", "") not in ("", "0")
    # One manager per call: what the caller runs between our passes changes the IR behind its back.
    am = AnalysisManager(verify=verify_analyses)
    text = pipeline if isinstance(pipeline, str) else ",".join(pipeline)
    steps = parse_pipeline(text)
    if explain:
        steps = with_explain(steps)
    total = sum(step.kind == "ours" for step in steps)
    index = 0
    with context:
        # Every upstream element is checked before `pm` is touched: a bad one leaves it as it was.
        scratch = passmanager.PassManager("builtin.module")
        for step in steps:
            if step.kind == "mlir":
                _add_upstream(scratch, step, text)
        for kind, what, options, column in steps:
            if kind == "ours":
                before = None if progress is None else functools.partial(progress, index, total)
                instance = get_pass_class(what).from_options(options)
                run = _python_pass(instance, am, fresh=index == 0, before=before)
                pm.add(run, name=what, argument=what, description=type(instance).__doc__ or "")
                index += 1
            else:
                _add_upstream(pm, Step(kind, what, options, column), text)
                # An upstream pass keeps none of our analyses.
                pm.add(lambda op, pass_: am.invalidate(), name="invalidate-analyses")


def _add_upstream(pm: passmanager.PassManager, step: Step, text: str) -> None:
    """Hand an upstream element to MLIR's parser; a PipelineError located in `text` if it is refused."""
    try:
        pm.add(step.what)
    except ValueError as e:
        close = difflib.get_close_matches(re.split(r"[({]", step.what, maxsplit=1)[0].strip(), OUR_NAMES, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        message = f"unknown pass or malformed pipeline element '{step.what}'{hint}: {_mlir_reason(e, step.what)}"
        raise PipelineError(message, source=text, column=step.column) from None


def _mlir_reason(error: ValueError, element: str) -> str:
    """MLIR's pipeline-parser message on one line: its own location prefixes, echo and caret lines dropped."""
    lines = []
    for line in str(error).splitlines():
        line = re.sub(r"^(MLIR Textual PassPipeline Parser|<Pass-Options-Parser>)(:\d+:\d+)?: (error: )?", "", line.strip())
        if line and line.strip("^ ") and line != element.strip():
            lines.append(line)
    return "; ".join(lines)


def build_pass_manager(
    pipeline: str | list[str],
    context: ir.Context,
    *,
    print_ir_after_all: bool = False,
    timing: bool = False,
    verify_analyses: bool | None = None,
    explain: bool = False,
    progress=None,
) -> passmanager.PassManager:
    """A new PassManager for `pipeline` (text, or a list of pass names); see `add_passes`."""
    with context:
        pm = passmanager.PassManager("builtin.module")
    add_passes(pm, pipeline, context, verify_analyses=verify_analyses, explain=explain, progress=progress)
    with context:
        if print_ir_after_all:
            pm.enable_ir_printing(print_after_all=True)
        if timing:
            pm.enable_timing()
    return pm
