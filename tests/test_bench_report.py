"""bench/RESULTS.md is a page of current tables: a script's run replaces its own section, nothing else."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import report  # noqa: E402

OLD = """# Benchmark results

### bench/a.py, 2026-01-01 00:00 UTC: x

| old a |

### bench/b.py, 2026-01-01 00:00 UTC: x

| b |

notes on b
## Some prose heading

### bench/a.py, 2026-01-02 00:00 UTC: x

| newer a |
"""


def test_sections_keep_the_newest_run_of_each_script():
    found = report.sections(OLD)
    assert found == {"a.py": "### bench/a.py, 2026-01-02 00:00 UTC: x\n\n| newer a |",
                     "b.py": "### bench/b.py, 2026-01-01 00:00 UTC: x\n\n| b |\n\nnotes on b"}


def test_a_run_replaces_only_its_own_section(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "RESULTS", tmp_path / "RESULTS.md")
    report.RESULTS.write_text(OLD)
    report.replace("### bench/a.py, 2026-02-01 00:00 UTC: x\n\n| newest a |\n")
    text = report.RESULTS.read_text()
    assert text.startswith(report.PAGE_INTRO)
    assert report.sections(text) == {"a.py": "### bench/a.py, 2026-02-01 00:00 UTC: x\n\n| newest a |",
                                     "b.py": report.sections(OLD)["b.py"]}
    assert "old a" not in text and "newer a" not in text


def test_the_committed_page_has_one_section_per_script():
    text = report.RESULTS.read_text()
    headers = [line for line in text.splitlines() if line.startswith("### bench/")]
    assert len(headers) == len(report.sections(text)) > 0
