"""What a long compile is doing, on one status line of a terminal.

    [mlirfuse 3.2s] pass 5/12 fusion-fuse-vertical
    [mlirfuse 7.9s] lowering kernel 3/41 fused_mul_add_tanh_3

The line is rewritten in place on stderr and cleared at the end, so nothing
is left behind in the scrollback. It is shown only when stderr is a
terminal: piped, redirected or under pytest, a compile prints nothing.
`MLIRFUSE_PROGRESS=0` turns it off, `MLIRFUSE_PROGRESS=1` on (a log file, a
test). What was decided, rather than how far along, goes to the `mlirfuse`
logger (`MLIRFUSE_LOG`, see `mlirfuse.log`).
"""

from __future__ import annotations

import os
import sys
import threading
import time


class Progress:
    def __init__(self, stream=None, enabled: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            setting = os.environ.get("MLIRFUSE_PROGRESS", "")
            enabled = setting == "1" or (setting != "0" and _is_terminal(self.stream))
        self.enabled = enabled
        self.start = time.monotonic()
        self._shown = False
        self._lock = threading.Lock()

    def phase(self, text: str) -> None:
        """Show `text` as what the compile does now."""
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        with self._lock:  # AOT compilation reports from worker threads
            self.stream.write(f"\r\x1b[K[mlirfuse {elapsed:.1f}s] {text}")
            self.stream.flush()
            self._shown = True

    def step(self, what: str, index: int, total: int, name: str) -> None:
        """Show `what index+1/total name` (a pass, a kernel)."""
        if self.enabled:
            self.phase(f"{what} {index + 1}/{total} {name}")

    def done(self) -> None:
        """Clear the line."""
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False
