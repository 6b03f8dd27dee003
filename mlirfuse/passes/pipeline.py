"""Turn a textual pass pipeline into a PassManager mixing our passes and upstream ones.

MLIR's textual pipeline parser knows only C++-registered passes, so the
pipeline string is split here: each top-level element that names one of our
passes (or pipelines) becomes a Python pass, everything else is handed to
MLIR as text (`cse`, `canonicalize`, `func.func(cse)` ...).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import traceback

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
)
from mlirfuse.passes.base import parse_option


def split_top_level(text: str) -> list[str]:
    """Split `a, b{x=1}, func.func(c, d)` at commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced ')' or '}}' in pass pipeline '{text}'")
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth != 0:
        raise PipelineError(f"unbalanced '(' or '{{' in pass pipeline '{text}'")
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def parse_element(element: str) -> tuple[str, dict[str, str]]:
    """`name{k=v k2=v2}` -> (name, {k: v, k2: v2})."""
    if "{" not in element:
        return element, {}
    if not element.endswith("}"):
        raise PipelineError(f"malformed options in '{element}'")
    name, _, body = element[:-1].partition("{")
    options = {}
    for item in body.split():
        key, eq, value = item.partition("=")
        if not eq:
            raise PipelineError(f"option '{item}' of pass '{name}' must be key=value")
        options[key] = value
    return name.strip(), options


def expand_pipeline(name: str, options: dict[str, str]) -> list[tuple[str, str, dict[str, str]]]:
    """A pipeline's steps, each given the options its pass has (STAGE_SWITCHES drop or keep a stage)."""
    if options and name not in OPTION_PIPELINES:
        raise PipelineError(f"pipeline '{name}' takes no options")
    stages = PIPELINES[name]()
    switches = {}
    for key, (stage, default) in STAGE_SWITCHES.items():
        if stage in stages:
            switches[stage] = default
            if key in options:
                switches[stage] = parse_option(name, key, "bool", options[key])
    fields = {n: {f.replace("_", "-") for f in get_pass_class(n).__dataclass_fields__} for n in stages}
    for key in options:
        if not any(key.replace("_", "-") in f for f in fields.values()) and key not in STAGE_SWITCHES:
            known = sorted({f for fs in fields.values() for f in fs} | set(STAGE_SWITCHES))
            raise PipelineError(
                f"pipeline '{name}' has no option '{key}' (options: {', '.join(known) or 'none'})"
            )
    steps = []
    for stage in stages:
        if not switches.get(stage, True):
            continue
        own = {k: v for k, v in options.items() if k.replace("_", "-") in fields[stage]}
        steps.append(("ours", stage, own))
    return steps


def with_explain(steps: list) -> list:
    """`steps` with fusion-explain-unfused after the last fusion stage (limits from fusion-fuse-vertical), unless there."""
    names = [what for _, what, _ in steps]
    if "fusion-explain-unfused" in names:
        return steps
    fusion = [i for i, n in enumerate(names) if n in FUSION_STAGES]
    if not fusion:
        return steps
    vertical = next((opts for _, what, opts in steps if what == "fusion-fuse-vertical"), {})
    limits = {k: v for k, v in vertical.items() if k.replace("_", "-") in ("max-args", "max-group-size")}
    return steps[: fusion[-1] + 1] + [("ours", "fusion-explain-unfused", limits)] + steps[fusion[-1] + 1 :]


# The passes that make groups; fusion-explain-unfused describes what they left.
FUSION_STAGES = (
    "fusion-fuse-vertical", "fusion-fuse-horizontal", "fusion-fuse-concat", "fusion-sink-exit-reshapes", "fusion-fuse-matmul",
)


def parse_pipeline(text: str) -> list[tuple[str, dict[str, str] | str]]:
    """A pipeline string -> [("ours", name, options) | ("mlir", text)] steps."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module(") : -1]
    steps = []
    for element in split_top_level(text):
        name, options = parse_element(element)
        if name in PIPELINES:
            steps.extend(expand_pipeline(name, options))
        elif name in PASSES:
            steps.append(("ours", name, options))
        else:
            steps.append(("mlir", element, None))
    return steps


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


def _python_pass(instance, am: AnalysisManager):
    def run(op, pass_):
        try:
            with op.context, ir.Location.unknown(op.context), _gc_paused():
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

    run.__name__ = instance.name
    return run


def build_pass_manager(
    pipeline: str | list[str],
    context: ir.Context,
    *,
    print_ir_after_all: bool = False,
    timing: bool = False,
    verify_analyses: bool | None = None,
    explain: bool = False,
) -> passmanager.PassManager:
    """A PassManager for `pipeline` (text, or a list of pass names).

    `verify_analyses` (default: the
    MLIRFUSE_VERIFY_ANALYSES environment variable) recomputes every maintained
    analysis after each of our passes and fails on a difference. `explain`
    (--fusion-explain) runs fusion-explain-unfused after the fusion passes.
    """
    if verify_analyses is None:
        verify_analyses = os.environ.get("MLIRFUSE_VERIFY_ANALYSES", "") not in ("", "0")
    am = AnalysisManager(verify=verify_analyses)
    steps = parse_pipeline(pipeline if isinstance(pipeline, str) else ",".join(pipeline))
    if explain:
        steps = with_explain(steps)
    with context:
        pm = passmanager.PassManager("builtin.module")
        for kind, what, options in steps:
            if kind == "ours":
                instance = get_pass_class(what).from_options(options)
                pm.add(_python_pass(instance, am), name=what, argument=what, description=type(instance).__doc__ or "")
            else:
                try:
                    pm.add(what)
                except ValueError as e:
                    raise PipelineError(f"unknown pass or malformed pipeline element '{what}': {e}") from None
                # An upstream pass keeps none of our analyses.
                pm.add(lambda op, pass_: am.invalidate(), name="invalidate-analyses")
        if print_ir_after_all:
            pm.enable_ir_printing(print_after_all=True)
        if timing:
            pm.enable_timing()
    return pm
