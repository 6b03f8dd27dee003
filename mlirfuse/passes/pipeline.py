"""Turn a textual pass pipeline into a PassManager mixing our passes and upstream ones.

MLIR's textual pipeline parser knows only C++-registered passes, so the
pipeline string is split (`mlirfuse.passes.pipeline_text`, once, into a
`Pipeline`): each top-level element that names one of our passes (or
pipelines) becomes a Python pass, everything else is handed to MLIR as text
(`cse`, `canonicalize`, `func.func(cse)` ...).
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

from mlirfuse.analysis import AnalysisManager
from mlirfuse.dialect import VERIFIED_OPS, verify_fusion_ops
from mlirfuse.errors import MlirfuseError, PipelineError
from mlirfuse.ir import ir, passmanager
from mlirfuse.passes.base import ops_named
from mlirfuse.passes.pipeline_text import OUR_NAMES, Pipeline, Step, as_pipeline, with_explain

logger = logging.getLogger("mlirfuse.pipeline")


@contextlib.contextmanager
def gc_paused():
    """No cyclic garbage collection while the block runs (see `GcPause`): around a whole `pm.run`, what
    `mlirfuse.compile` does."""
    pause = GcPause()
    pause.start()
    try:
        yield
    finally:
        pause.end()


class GcPause:
    """No cyclic garbage collection from `start` to `end`; the collector's state before restored at `end`.

    Our passes create and drop many binding objects while their analyses
    hold a live set that grows with the model; collections scanning that set
    made long pipelines superlinear (LSTM 400 steps: about 20% of the time).
    The pipeline's passes share one pause, from the first of ours to the
    last (`add_passes`), so the garbage is collected after the pipeline, not
    after each pass: a pause per pass paid a collection as each ended (the
    LSTM-400: four young-generation collections, ~0.065 s, and one full,
    ~0.025; a 32-layer stack: one full collection, ~0.02 s, 5-8 % of its
    pipeline). `start` again while paused does nothing; `end` when not paused
    neither.
    """

    def __init__(self):
        self._enabled: bool | None = None  # while paused: whether the collector ran before

    def start(self) -> None:
        if self._enabled is None:
            self._enabled = gc.isenabled()
            gc.disable()

    def end(self) -> None:
        if self._enabled is not None:
            if self._enabled:
                gc.enable()
            self._enabled = None


def _python_pass(
    instance, am: AnalysisManager, pause: GcPause, *, fresh: bool = False, last: bool = True, verify: bool = True,
    verify_ir: bool = False, before=None
):
    """`instance` as a callable pass for `PassManager.add`.

    `fresh`: drop whatever `am` holds first (the first of our passes in a
    run: a PassManager may run again, on another module), and verify the
    fusion ops the input holds, if any, before the pass reads them (as
    mlirfuse-opt verifies its input: a malformed group is reported where it
    is, not as an internal error of a pass that trusted it). `pause`: started
    as the pass starts, ended after it where it is the `last` of those
    sharing it or fails (the PassManager stops there). `verify`: run the
    fusion ops' verifiers after the pass; `verify_ir`: MLIR's verifier too
    (for a PassManager whose own one is off). `before(name)` is called as the
    pass starts (progress).
    """

    def run(op, pass_):
        if before is not None:
            before(instance.name)
        start = time.perf_counter()
        pause.start()
        ok = False
        try:
            with op.context, ir.Location.unknown(op.context):
                if fresh:
                    am.invalidate()
                    # Only an input holding fusion ops (found by MLIR's walk driver: nothing per op passed over)
                    # is verified; an unknown `fusion.*` op alone is reported after the pipeline.
                    if ops_named(op, VERIFIED_OPS) and not verify_fusion_ops(op):
                        pass_.signal_pass_failure()
                        return
                instance.apply(op, am)
                am.invalidate(instance.preserves)
                # The fusion ops' verifier (see mlirfuse.dialect.fusion): after each of our passes, or the last.
                if verify and not verify_fusion_ops(op):
                    pass_.signal_pass_failure()
                elif verify_ir and not _verify_ir(op):
                    pass_.signal_pass_failure()
                else:
                    ok = True
                if am.verify:
                    problems = am.check()
                    if problems:
                        op.location.emit_error(
                            f"--verify-analyses: after '{instance.name}' the maintained analyses differ "
                            "from recomputed ones:\n  " + "\n  ".join(problems)
                        )
                        pass_.signal_pass_failure()
                        ok = False
        except MlirfuseError as e:
            op.location.emit_error(f"{instance.name}: {e}")
            pass_.signal_pass_failure()
        except Exception as e:  # a bug in a pass: report it as a located error, not a crash
            if os.environ.get("MLIRFUSE_DEBUG"):
                traceback.print_exc(file=sys.stderr)
            op.location.emit_error(f"internal error in pass '{instance.name}': {type(e).__name__}: {e}")
            pass_.signal_pass_failure()
        finally:
            if last or not ok:
                pause.end()
        logger.debug("%s: %.3f s", instance.name, time.perf_counter() - start)

    run.__name__ = instance.name
    return run


def add_passes(
    pm: passmanager.PassManager,
    pipeline: str | list[str] | Pipeline,
    context: ir.Context,
    *,
    verify_analyses: bool | None = None,
    verify_each: bool | None = None,
    explain: bool = False,
    progress=None,
    verify_ir_last: bool = False,
) -> None:
    """Append `pipeline` (text, a list of pass names, or parsed already) to `pm`, ours and upstream elements in order.

    `pm` may be anyone's PassManager anchored on `builtin.module` (see
    `mlirfuse.embed`). `verify_analyses` (default: the
    MLIRFUSE_VERIFY_ANALYSES environment variable) recomputes every maintained
    analysis after each of our passes and fails on a difference.
    `verify_each` (default: on with `verify_analyses`, else the
    MLIRFUSE_VERIFY_EACH environment variable) runs the fusion ops' verifiers
    after each of our passes; otherwise they run once, after the last of
    ours (on the LSTM-400 they cost ~10% of the pipeline per run). `explain`
    (--fusion-explain) runs fusion-explain-unfused after the fusion passes.
    `progress(index, total, name)` is called as each of our passes starts.
    `verify_ir_last`: the last of our passes runs MLIR's verifier too (for
    a `pm` whose own verifier is off: `build_pass_manager`).
    A bad pipeline raises PipelineError (located: `.source`, `.column`).
    """
    verify_analyses, verify_each = _verify_flags(verify_analyses, verify_each)
    # One manager per call: what the caller runs between our passes changes the IR behind its back.
    am = AnalysisManager(verify=verify_analyses)
    pipeline = as_pipeline(pipeline)
    steps = list(pipeline.steps)
    if explain:
        steps = with_explain(steps)
    total = sum(step.kind == "ours" for step in steps)
    # One GC pause from the first of our passes to the last, where nothing else runs between them (an upstream
    # pass that fails would leave it paused); otherwise one per pass.
    shared = all(step.kind == "ours" for step in steps)
    pause = GcPause()
    index = 0
    with context:
        # Every upstream element is checked before `pm` is touched: a bad one leaves it as it was.
        scratch = passmanager.PassManager("builtin.module")
        for step in steps:
            if step.kind == "mlir":
                _add_upstream(scratch, step, pipeline.text)
        for step in steps:
            if step.kind == "ours":
                before = None if progress is None else functools.partial(progress, index, total)
                last = index == total - 1
                run = _python_pass(step.instance, am, pause if shared else GcPause(), fresh=index == 0,
                                   last=last or not shared, verify=verify_each or last,
                                   verify_ir=verify_ir_last and last, before=before)
                pm.add(run, name=step.what, argument=step.what, description=type(step.instance).__doc__ or "")
                index += 1
            else:
                _add_upstream(pm, step, pipeline.text)
                # An upstream pass keeps none of our analyses.
                pm.add(lambda op, pass_: am.invalidate(), name="invalidate-analyses")


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def _verify_flags(verify_analyses: bool | None, verify_each: bool | None) -> tuple[bool, bool]:
    """(verify_analyses, verify_each) with their defaults filled in (see `add_passes`)."""
    if verify_analyses is None:
        verify_analyses = _env_flag("MLIRFUSE_VERIFY_ANALYSES")
    if verify_each is None:
        verify_each = verify_analyses or _env_flag("MLIRFUSE_VERIFY_EACH")
    return verify_analyses, verify_each


def _verify_ir(op) -> bool:
    """MLIR's verifier on `op`, its errors emitted as the PassManager's own verifier emits them."""
    try:
        op.verify()
    except ir.MLIRError as e:
        for diagnostic in e.error_diagnostics:
            diagnostic.location.emit_error(diagnostic.message)
        if not e.error_diagnostics:
            op.location.emit_error(str(e))
        return False
    return True


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
    pipeline: str | list[str] | Pipeline,
    context: ir.Context,
    *,
    print_ir_after_all: bool = False,
    timing: bool = False,
    verify_analyses: bool | None = None,
    verify_each: bool | None = None,
    explain: bool = False,
    progress=None,
) -> passmanager.PassManager:
    """A new PassManager for `pipeline` (text, a list of pass names, or parsed already); see `add_passes`.

    Where the pipeline is ours alone, MLIR's verifier runs once, after the
    last pass, unless `verify_each` (or `verify_analyses`) asks for it after
    each, as the fusion ops' verifiers do: on the LSTM-400 one run of it
    costs ~0.025 s, after each of 18 passes ~10% of the pipeline.
    """
    verify_analyses, verify_each = _verify_flags(verify_analyses, verify_each)
    pipeline = as_pipeline(pipeline)
    once = not verify_each and all(step.kind == "ours" for step in pipeline.steps)
    with context:
        pm = passmanager.PassManager("builtin.module")
    add_passes(
        pm, pipeline, context, verify_analyses=verify_analyses, verify_each=verify_each, explain=explain, progress=progress,
        verify_ir_last=once,
    )
    with context:
        if once:
            pm.enable_verifier(False)
        if print_ir_after_all:
            pm.enable_ir_printing(print_after_all=True)
        if timing:
            pm.enable_timing()
    return pm
