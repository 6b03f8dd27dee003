"""mlirfuse's log: standard `logging` under the logger `mlirfuse`.

    MLIRFUSE_LOG=info   each fusion decision: what merged, what was refused and why
    MLIRFUSE_LOG=debug  also each op wrapped into a group, and each pass's time

With the variable set, `import mlirfuse` gives the `mlirfuse` logger its
own stderr handler (and stops propagation to the root logger); without it
nothing is configured and an application routes the records as it routes
any library's (`logging.getLogger("mlirfuse")`).
Records come from `mlirfuse.fusion` (the fusion passes) and
`mlirfuse.pipeline` (pass timings). Describing an op costs time, so the
passes ask `logger.isEnabledFor` before building a message.
"""

from __future__ import annotations

import logging
import os
import sys

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}

logger = logging.getLogger("mlirfuse")


def configure_from_environment() -> None:
    """Apply MLIRFUSE_LOG (info, debug, warning, error), once."""
    setting = os.environ.get("MLIRFUSE_LOG", "").strip().lower()
    if not setting or getattr(logger, "_mlirfuse_handler", None) is not None:
        return
    if setting not in LEVELS:
        print(f"mlirfuse: MLIRFUSE_LOG={setting!r} is not one of {', '.join(LEVELS)}; ignored", file=sys.stderr)
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[%(name)s] %(levelname)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(LEVELS[setting])
    logger.propagate = False  # a root handler (some libraries install one) would print every line twice
    logger._mlirfuse_handler = handler


def describe(op) -> str:
    """A short name for an op in a log line: `exp`, or a group as `group(exp, neg, +3)`, with its source line."""
    op = op.operation
    if op.name in ("fusion.group", "fusion.kernel"):
        inner = [
            o.operation.name.split(".")[2]
            for o in op.regions[0].blocks[0].operations
            if o.operation.name.startswith(("torch.aten.", "torch.prims."))
        ]
        shown = ", ".join(inner[:3]) + (f", +{len(inner) - 3}" if len(inner) > 3 else "")
        text = f"group({shown})"
    else:
        text = op.name.removeprefix("torch.aten.").removeprefix("torch.")
    where = _line(op.location)
    return f"{text} at {where}" if where else text


def _line(location) -> str:
    """`file:line` of a file location (the innermost one of a call-site chain), else ''."""
    text = str(location)
    start = text.rfind('loc("')
    if start < 0:
        return ""
    rest = text[start + len('loc("') :]
    path, _, position = rest.partition('":')
    line = position.split(":")[0]
    return f"{os.path.basename(path)}:{line}" if line.isdigit() else ""


class FusionDecisions:
    """Logs each fusion decision of one pass once, at INFO on `mlirfuse.fusion`: a merge, or a refusal and its reason.

    Whether to log is asked once, when the pass starts: the fusion loop pays
    nothing when logging is off.
    """

    logger = logging.getLogger("mlirfuse.fusion")

    def __init__(self, pass_name: str):
        self.pass_name = pass_name
        self.enabled = self.logger.isEnabledFor(logging.INFO)
        self._seen: set = set()

    def merged(self, producer, consumer=None, how: str = "into") -> None:
        if self.enabled:
            self.logger.info("%s: fuse %s", self.pass_name, _pair(producer, consumer, how))

    def refused(self, producer, consumer, reason: str, how: str = "into") -> None:
        if not self.enabled:
            return
        message = f"{self.pass_name}: not fusing {_pair(producer, consumer, how)}: {reason}"
        if message not in self._seen:  # the fixpoint loop asks again each sweep
            self._seen.add(message)
            self.logger.info(message)

    def wrapped(self, op, kind: str) -> None:
        if self.logger.isEnabledFor(logging.DEBUG):
            self.logger.debug("%s: wrap %s in a %s group", self.pass_name, describe(op), kind)


def _pair(first, second, how: str) -> str:
    return f"{describe(first)} {how}" + (f" {describe(second)}" if second is not None else "")
