"""Analyses fusion needs, cached and maintained instead of recomputed.

An `AnalysisManager` holds analyses keyed by (class, anchor op). Every
analysis is a `RewriteListener`: passes change the IR through one
`FusionRewriter` (mlirfuse.passes.rewriter), which tells every live analysis
what it inserted, moved, replaced and erased, and each analysis updates
itself. A pass declares in `preserves` which analyses stay valid that way;
the manager drops the rest after the pass. With
`verify=True` (`--verify-analyses`, `MLIRFUSE_VERIFY_ANALYSES=1`) every
maintained analysis is recomputed from scratch after each pass and compared;
a disagreement is an error with a readable diff.
"""

from __future__ import annotations

from typing import ClassVar


class RewriteListener:
    """What a `FusionRewriter` tells the analyses; each default does nothing.

    Ops and values are still in the IR when a listener hears of them (an
    erased op: just before it goes; a replaced value: before its uses move).
    """

    def op_inserted(self, op, before) -> None:
        """`op` (complete, body included) now stands right before `before`."""

    def op_moved(self, op, after) -> None:
        """`op` now stands right after `after`."""

    def operands_changed(self, op) -> None:
        """`op` now reads other values."""

    def value_replaced(self, old, new) -> None:
        """Every use of `old` is about to read `new`."""

    def op_erased(self, op) -> None:
        """`op` is about to be erased."""

    def groups_merged(self, producer, consumer, group) -> None:
        """`group` (inserted) now holds `producer`'s body ops, then `consumer`'s, which both still stand (erased next)."""


class Analysis(RewriteListener):
    """An analysis of the IR under one anchor op, kept current through the rewriter's notifications."""

    name: ClassVar[str] = ""

    @classmethod
    def compute(cls, anchor) -> "Analysis":
        raise NotImplementedError

    def diff(self, fresh: "Analysis") -> list[str]:
        """How this (maintained) analysis differs from a freshly computed one."""
        raise NotImplementedError


def entries_diff(maintained: dict, fresh: dict, maintained_labels, fresh_labels, kind: str, unknown: str) -> list[str]:
    """The keys one side has and the other lacks, as diff lines (`kind`: what a key names)."""
    stale = [maintained_labels[k] for k in maintained if k not in fresh]
    missing = [fresh_labels[k] for k in fresh if k not in maintained]
    problems = []
    if stale:
        problems.append(f"{len(stale)} entries for {kind} no longer in the IR: {', '.join(stale[:5])}")
    if missing:
        problems.append(f"{len(missing)} {kind} without {unknown}: {', '.join(missing[:5])}")
    return problems


class AnalysisManager:
    def __init__(self, verify: bool = False):
        self.verify = verify
        self._cache: dict[tuple[type, object], Analysis] = {}
        self._listeners: tuple[RewriteListener, ...] | None = ()  # None: to be taken again from the cache
        self._handlers: dict[str, tuple] = {}  # event -> the live analyses' bound methods for it (see `handlers`)

    def get(self, cls: type[Analysis], anchor) -> Analysis:
        key = (cls, anchor)
        if key not in self._cache:
            self._cache[key] = cls.compute(anchor)
            self._listeners = None
            self._handlers = {}
        return self._cache[key]

    def cached(self):
        return list(self._cache.items())

    def listeners(self) -> tuple[RewriteListener, ...]:
        """The live analyses: what a rewrite must keep current (one tuple until the cache changes: asked per rewrite)."""
        if self._listeners is None:
            self._listeners = tuple(self._cache.values())
        return self._listeners

    def handlers(self, event: str) -> tuple:
        """The live analyses' methods for `event` (a `RewriteListener` method name), those that do something only.

        Asked per rewrite (tens of thousands per pass): a listener keeping
        `RewriteListener`'s do-nothing default is not called at all.
        """
        found = self._handlers.get(event)
        if found is None:
            default = getattr(RewriteListener, event)
            found = self._handlers[event] = tuple(
                getattr(listener, event) for listener in self.listeners() if getattr(type(listener), event) is not default
            )
        return found

    def invalidate(self, preserved: tuple[type, ...] = ()) -> None:
        """Drop every analysis not in `preserved`."""
        self._cache = {k: v for k, v in self._cache.items() if k[0] in preserved}
        self._listeners = None
        self._handlers = {}

    def check(self) -> list[str]:
        """Recompute every cached analysis and list the differences (empty: all agree)."""
        problems = []
        for (cls, anchor), analysis in self._cache.items():
            problems += [f"{cls.name}: {p}" for p in analysis.diff(cls.compute(anchor))]
        return problems
