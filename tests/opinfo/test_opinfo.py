"""Every OpInfo op either matches eager under mlirfuse or raises UnsupportedModelError.

CI runs a fixed sample of `op_db` (every `STRIDE`-th entry by a hash of its
name, `MAX_SAMPLES` samples per dtype); `MLIRFUSE_OPINFO=all` runs every
entry (narrow it with `-k`), `MLIRFUSE_OPINFO=name1,name2` those entries,
`MLIRFUSE_OPINFO_SAMPLES=n` takes n samples per dtype (`0`: all of them).
One test per op: a wrong answer or a crash in any of its samples fails it,
with each failing sample named. The summary table is printed at the end of
the module (`bench/opinfo.py` prints it for every op and appends it to
bench/RESULTS.md).
"""

from __future__ import annotations

import logging
import os

import pytest
import torch

from .harness import OpCall, Outcome, Summary, opinfos, run_op, run_sample, stable_sample

STRIDE = 32
SELECTION = os.environ.get("MLIRFUSE_OPINFO", "")
MAX_SAMPLES = int(os.environ.get("MLIRFUSE_OPINFO_SAMPLES", "1")) or None

# Wrong answers found and not fixed: key -> (op, sample, dtype, what differs). xfail(strict=True):
# the test fails again the day they are fixed, so the entry gets removed.
KNOWN_WRONG: dict[str, str] = {}

# pytest warnings from eager itself (var with correction >= N, deprecated overloads) are not ours.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning", "ignore::DeprecationWarning")


def _selected() -> list[str]:
    keys = sorted(opinfos())
    if SELECTION == "all":
        return keys
    if SELECTION:
        unknown = [k for k in SELECTION.split(",") if k not in opinfos()]
        assert not unknown, f"MLIRFUSE_OPINFO names entries not in op_db: {unknown}"
        return SELECTION.split(",")
    return stable_sample(keys, STRIDE)


def _params():
    return [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=KNOWN_WRONG[k])) if k in KNOWN_WRONG else k
        for k in _selected()
    ]


@pytest.fixture(scope="module")
def summary(request):
    s = Summary()
    yield s
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is not None and capture is not None and s.outcomes:
        # Shown on the terminal even without -s, as the run's result.
        with capture.global_and_fixture_disabled():
            reporter.write_line("")
            reporter.write_line(s.render(f"mlirfuse OpInfo differential run ({len(s.by_op())} ops of {len(opinfos())})"))


@pytest.fixture(autouse=True)
def _quiet_export_trace(caplog):
    # torch.export logs every trace at DEBUG; captured, it would bury the failure summary.
    caplog.set_level(logging.WARNING, logger="torch.__trace")


@pytest.mark.parametrize("key", _params())
def test_op_matches_eager_or_is_unsupported(key, summary):
    outcomes = run_op(key, MAX_SAMPLES)
    summary.add(outcomes)
    bugs = [o for o in outcomes if o.is_bug]
    assert not bugs, f"{key}: {len(bugs)} of {len(outcomes)} samples wrong or crashed\n" + "\n".join(o.line() for o in bugs)


def test_ci_sample_is_fixed():
    """The CI sample is chosen by name, not by order or chance: the same ops on every run."""
    keys = sorted(opinfos())
    sample = stable_sample(keys, STRIDE)
    assert sample == stable_sample(list(reversed(keys)), STRIDE)
    assert len(keys) // (2 * STRIDE) <= len(sample) <= 2 * len(keys) // STRIDE


class _Sample:
    def __init__(self, *inputs):
        self.input, self.args, self.kwargs = inputs[0], inputs[1:], {}


class _Rigged:
    """An OpInfo stand-in whose op computes something else while torch.export traces it."""

    name, variant_test_name, has_nondeterministic_output = "rigged", "", False

    def __init__(self, op):
        self.op = op


def test_harness_reports_wrong_answers_and_crashes():
    """The harness can fail: a wrong answer is a mismatch, a non-mlirfuse exception a crash."""
    x = torch.randn(3, 4)
    ok = run_sample(_Rigged(torch.exp), torch.float32, 0, _Sample(x))
    assert ok.status == "matched" and ok.launches == 1 and "torch.aten.exp" in ok.aten, ok

    def wrong(t):
        return torch.exp(t) + (1e-3 if torch.compiler.is_exporting() else 0.0)

    assert run_sample(_Rigged(wrong), torch.float32, 0, _Sample(x)).status == "mismatch"

    def bad_dtype(t):
        return torch.exp(t).double() if torch.compiler.is_exporting() else torch.exp(t)

    assert run_sample(_Rigged(bad_dtype), torch.float32, 0, _Sample(x)).status == "mismatch"

    def crashes(t):
        if torch.compiler.is_exporting():
            return torch.exp(t)
        raise ZeroDivisionError("not an mlirfuse error")

    # Eager raising is an invalid sample, not a crash: compiled raising is.
    assert run_sample(_Rigged(crashes), torch.float32, 0, _Sample(x)).status == "eager-error"
    assert run_sample(_Rigged(torch.rand_like), torch.float32, 0, _Sample(x)).status == "random"


def test_summary_counts_and_share():
    """The share counts occurrences of Inductor-lowered ops left as ATen calls; fallbacks and matmuls are left out."""
    s = Summary()
    s.add([
        Outcome("a", "float32", "#0", "matched", launches=1, aten=["torch.aten.exp"], unfused=[]),
        # gather: Inductor lowers it; cumsum: an Inductor fallback; mm: a template. Only gather counts.
        Outcome("b", "float32", "#0", "matched", aten=["torch.aten.gather", "torch.aten.cumsum", "torch.aten.mm"],
                unfused=["torch.aten.gather", "torch.aten.cumsum", "torch.aten.mm"]),
        Outcome("c", "float32", "#0", "unsupported", detail="UnsupportedModelError: torch.export could not trace OpCall: x"),
        Outcome("d", "float32", "#0", "random"),
    ])
    assert s.counts() == {"fused": 1, "aten": 1, "unsupported": 1, "random": 1}
    left, total, worst = s.share()
    assert (left, total) == (1, 2) and worst == ["aten.gather x1"]
    text = s.render()
    assert "fused (>= 1 launch): 1" in text and "left as ATen calls: 1 of 2 (50.0%)" in text
    assert "torch.export could not trace the op: c" in text and "random (skipped): d" in text


def test_opcall_passes_tensors_as_inputs():
    sample = _Sample(torch.ones(2), [torch.zeros(2), 3])
    model = OpCall(lambda x, pieces: x + pieces[0] * pieces[1], sample)
    assert len(model.inputs) == 2
    assert torch.equal(model(*model.inputs), torch.ones(2))
