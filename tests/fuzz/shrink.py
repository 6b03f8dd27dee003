"""Shrink a failing case to a minimal one with the same failure signature, and save it as a test.

Greedy delta debugging over the case's structure: drop returned values and
dead nodes, bypass a node (its uses read one of its operands or an input
instead), read an input instead of a computed operand, drop unused inputs,
then simplify inputs (contiguous layout, no special values, float32,
smaller sizes). A candidate is kept when eager still accepts it and the
compiled run still fails with the same signature.
"""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path

from .gen import Case, clone, eager_check, render
from .harness import Worker
from .known import CLASSES, known_class

REGRESSIONS = Path(__file__).resolve().parent / "regressions"


def _uses(case: Case) -> set[str]:
    used = set(case.returns)
    for n in case.nodes:
        used.update(n.args)
    return used


def _drop_unused_inputs(case: Case) -> Case:
    used = _uses(case)
    case.inputs = [i for i in case.inputs if i.name in used] or case.inputs[:1]
    return case


def _replace_uses(case: Case, old: set[str], new: str, after: int) -> None:
    for n in case.nodes[after:]:
        n.args = [new if a in old else a for a in n.args]
    case.returns = [new if r in old else r for r in case.returns]
    # The same name may now be returned twice; returning it once keeps the case equivalent enough.
    seen = []
    for r in case.returns:
        if r not in seen:
            seen.append(r)
    case.returns = seen


def _candidates(case: Case):
    """Smaller variants of `case`, most aggressive first."""
    # 1. fewer returned values
    for i in range(len(case.returns)):
        if len(case.returns) > 1:
            c = clone(case)
            del c.returns[i]
            yield c
    # 2. drop dead nodes
    used = _uses(case)
    for i in reversed(range(len(case.nodes))):
        if not set(case.nodes[i].outs) & used:
            c = clone(case)
            del c.nodes[i]
            yield c
    # 3. bypass a node: its uses read one of its operands (or an input) instead
    inputs = [i.name for i in case.inputs]
    for i in reversed(range(len(case.nodes))):
        node = case.nodes[i]
        for repl in dict.fromkeys(node.args + inputs):
            c = clone(case)
            _replace_uses(c, set(node.outs), repl, i + 1)
            del c.nodes[i]
            yield c
    # 4. an operand read from an input instead of a computed value
    for i, node in enumerate(case.nodes):
        for j, a in enumerate(node.args):
            if a in inputs:
                continue
            for repl in inputs:
                c = clone(case)
                c.nodes[i].args[j] = repl
                yield c
    # 5. simpler inputs
    for k, inp in enumerate(case.inputs):
        if inp.special:
            c = clone(case)
            c.inputs[k].special = False
            yield c
        if inp.layout != "contiguous":
            c = clone(case)
            c.inputs[k].layout = "contiguous"
            yield c
        if inp.dtype != "float32":
            c = clone(case)
            c.inputs[k].dtype = "float32"
            yield c
        for d, size in enumerate(inp.shape):
            for smaller in sorted({1, size // 2}):
                if 0 < smaller < size:
                    c = clone(case)
                    c.inputs[k].shape[d] = smaller
                    yield c


def shrink(case: Case, signature: str, worker: Worker, budget_s: float = 300, log=print) -> Case:
    """The smallest variant of `case` found within `budget_s` that still fails with `signature`."""
    deadline = time.time() + budget_s
    best = _drop_unused_inputs(clone(case))
    tried: set[str] = set()
    improved = True
    while improved and time.time() < deadline:
        improved = False
        for cand in _candidates(best):
            if time.time() >= deadline:
                break
            cand = _drop_unused_inputs(cand)
            src = render(cand)
            if src in tried:
                continue
            tried.add(src)
            if eager_check(cand) is None:
                continue
            result = worker.run(src)
            if result["status"] in ("mismatch", "crash") and result["sig"] == signature:
                best = cand
                improved = True
                log(f"  shrunk to {len(best.nodes)} nodes, {len(best.inputs)} inputs")
                break
    return best


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:40]


def save_regression(case: Case, result: dict, directory: Path = REGRESSIONS, xfail: bool = True) -> Path:
    """Write `case` as a self-contained pytest file; returns its path (an existing identical file is kept)."""
    source = render(case)
    digest = hashlib.sha1(source.encode()).hexdigest()[:10]
    directory.mkdir(parents=True, exist_ok=True)
    init = directory / "__init__.py"
    if not init.exists():
        init.write_text('"""Minimal failing cases found by the fuzzer, one self-contained test each."""\n')
    path = directory / f"test_{digest}.py"
    if path.exists():
        return path
    sig = result["sig"]
    isolated = sig.startswith(("process died", "timeout"))
    check = "assert_matches_eager_isolated" if isolated else "assert_matches_eager"
    detail = result.get("detail", "").strip().splitlines()
    first = detail[-1] if detail and result["status"] == "crash" else (detail[0] if detail else "")
    cls = known_class(sig)
    reason = (f"{cls}: {CLASSES[cls]}" if cls else sig).replace('"', "'")
    mark = f'@pytest.mark.xfail(strict=True, reason="{reason}")\n' if xfail else ""
    text = (
        f'"""Fuzz regression ({_slug(sig)}): {sig}\n\n'
        f"Found by `bench/fuzz.py` (seed {case.seed}), shrunk automatically.\n"
        f"{first[:300]}\n"
        '"""\n\n'
        "import pytest\n\n"
        f"from ..harness import {check}\n\n"
        f"SOURCE = '''\\\n{source}'''\n\n\n"
        f"{mark}def test_{digest}():\n"
        f"    {check}(SOURCE)\n"
    )
    path.write_text(text)
    return path
