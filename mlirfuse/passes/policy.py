"""Fusion policies: a function that sees each legal merge with its facts and may veto it (issue 22, item 2).

The fusion passes decide *what may* merge (legality: `why_not_merge` and
the template checks, each returning a reason); a policy decides *what
should*. Every merge the rules allow (producer into consumer, two siblings
reading one input, a pointwise group into a GEMM as prologue or epilogue,
two GEMMs back to back) is put to the current policy as a `Candidate`; a
policy returns None to accept or a reason to veto, and a veto reads like
any other reason (in `--fusion-explain`, `cm.explain()`).

    def keep_reductions_apart(c: Candidate) -> str | None:
        return "policy: reductions stay alone" if c.producer_kind.startswith(("reduction", "persistent")) else None

    mlirfuse.compile(model, x, policy=keep_reductions_apart)
    with mlirfuse.passes.policy.using(keep_reductions_apart):   # the embedding API, mlirfuse-opt
        pm.run(module.operation)

`mlirfuse-opt --fusion-policy=FILE.py:NAME` loads one (lit-tested with
`examples/fusion_policy.py`). With no policy every legal merge happens: the
rules are today's policy. The facts come from the cost model
(`mlirfuse/analysis/cost.py`): bytes saved by the merge and whether the
producer's ops are recomputed per tile.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mlirfuse.analysis.cost import kernel_cost, sum_sizes, value_bytes
from mlirfuse.dialect import GroupKind, group_kind
from mlirfuse.ir import computes
from mlirfuse.ops.views import CAT


@dataclass(frozen=True)
class Candidate:
    """One merge the rules allow, as a policy sees it."""

    # "vertical" (consumer reads producer), "horizontal" (independent siblings), "prologue", "epilogue",
    # "chain" (a GEMM's result kept on chip as the next GEMM's A: one matmul-chain kernel)
    # "ksplit" (a prologue holding a cat along the GEMM operand's K dim, read piece by piece: the cat is never stored)
    kind: str
    producer_kind: str  # the groups' kinds (GroupKind values: "pointwise", "reduction", "matmul", ...)
    consumer_kind: str
    producer_ops: tuple[str, ...]  # torch op names in each group's body, in order
    consumer_ops: tuple[str, ...]
    # Bytes the merge saves: a vertical merge the results only the consumer reads (stored and loaded once
    # each), a horizontal one the inputs both read (loaded once instead of twice). None: a `?` size.
    bytes_saved: int | None
    # FLOPs of the producer's body per launch, and whether a merge recomputes them per tile (a GEMM prologue).
    producer_flops: int | None
    recomputed_per_tile: bool
    producer: object = None  # the fusion.group ops themselves, for a policy that wants more
    consumer: object = None


Policy = Callable[[Candidate], "str | None"]

_CURRENT: contextvars.ContextVar[Policy | None] = contextvars.ContextVar("mlirfuse_fusion_policy", default=None)


@contextlib.contextmanager
def using(policy: Policy | None):
    """Within: the fusion passes put every legal merge to `policy` (None: accept all)."""
    token = _CURRENT.set(policy)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> Policy | None:
    return _CURRENT.get()


def load(spec: str) -> Policy:
    """`FILE.py:NAME` (or `module.path:NAME`) -> that policy function; ValueError naming what is wrong."""
    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise ValueError(f"a policy is FILE.py:NAME or module:NAME, got {spec!r}")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise ValueError(f"policy file {where!r} does not exist")
        module_spec = importlib.util.spec_from_file_location(f"mlirfuse_policy_{path.stem}", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    policy = getattr(module, name, None)
    if not callable(policy):
        raise ValueError(f"{where} has no policy function {name!r}")
    return policy


# The templates hosting a prologue (recomputed on every operand tile) and an epilogue: GEMMs and convolutions.
_TILED = (GroupKind.MATMUL, GroupKind.CONV)


def _ops(group) -> tuple[str, ...]:
    return tuple(op.operation.name for op in group.regions[0].blocks[0].operations if computes(op))


def _reads(consumer, value) -> bool:
    return any(use.owner.operation == consumer.operation for use in value.uses)


def candidate(producer, consumer) -> Candidate:
    """The facts of merging `producer` into `consumer` (two fusion.group ops)."""
    p_kind, c_kind = group_kind(producer), group_kind(consumer)
    if any(_reads(consumer, r) for r in producer.results):
        kind = ("prologue" if c_kind in _TILED and p_kind not in _TILED
                else "epilogue" if p_kind in _TILED and c_kind not in _TILED
                else "chain" if p_kind == c_kind == GroupKind.MATMUL else "vertical")
        if kind == "prologue" and CAT in _ops(producer):
            kind = "ksplit"
        # The results only the consumer reads: stored once and loaded once each, saved by the merge.
        moved = sum_sizes(value_bytes(r) for r in producer.results
                          if _reads(consumer, r) and all(u.owner.operation == consumer.operation for u in r.uses))
        saved = None if moved is None else 2 * moved
    else:
        kind = "horizontal"  # the inputs both read: loaded once instead of twice
        saved = sum_sizes(value_bytes(v) for v in producer.operands if any(v == w for w in consumer.operands))
    cost = kernel_cost(producer)
    return Candidate(
        kind, str(p_kind), str(c_kind), _ops(producer), _ops(consumer), saved, None if cost is None else cost.flops,
        kind in ("prologue", "ksplit"), producer, consumer,
    )


def veto(producer, consumer) -> str | None:
    """The current policy's reason against merging `producer` into `consumer`, or None (no policy: None)."""
    policy = current()
    if policy is None:
        return None
    reason = policy(candidate(producer, consumer))
    return None if reason is None else str(reason)


__all__ = ["Candidate", "Policy", "candidate", "current", "load", "using", "veto"]
