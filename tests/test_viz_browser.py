"""The `mlirfuse viz` page of the bundled transformer block, in headless Chromium.

Chromium is Debian's `chromium` package: found on PATH, or installed with
apt-get when the test runs as root (as CI does); the test is skipped only
where neither works. Playwright drives it over the DevTools protocol. The
screenshot (and the page) are written under $MLIRFUSE_ARTIFACTS (default:
test-artifacts/ in the repository) and the path is printed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from mlirfuse.tools.main import main
from mlirfuse.viz import source
from mlirfuse.viz.cli import write_demo_page
from mlirfuse.viz.draw import VIZ_JS

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("MLIRFUSE_ARTIFACTS", REPO / "test-artifacts"))
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _found() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


def chromium() -> str:
    """Debian's Chromium: on PATH, or apt-get installed (as root); skip with the reason otherwise."""
    path = _found()
    if path:
        return path
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("headless Chromium is not installed and cannot be (needs root and apt-get): apt-get install chromium")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium", "fonts-liberation"]):
        try:
            result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            pytest.skip(f"'{' '.join(command)}' timed out: Chromium cannot be had here")
        if result.returncode != 0:
            pytest.skip(f"'{' '.join(command)}' failed, Chromium cannot be had here: {result.stderr.strip()[-500:]}")
    path = _found()
    if path is None:
        pytest.skip("apt-get installed chromium but no chromium binary is on PATH")
    return path


@pytest.fixture(scope="module")
def compiled():
    return source.compile_bundled("TinyBlock")


def test_viz_page_of_the_bundled_block_in_chromium(compiled, tmp_path, monkeypatch, capsys):
    browser_path = chromium()
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extras: pip install -e '.[test]'")
    assert VIZ_JS.is_file(), f"{VIZ_JS} is missing: 'make setup' installs it with npm"

    # The CLI end to end, with the model compiled once for this module.
    monkeypatch.setattr(source, "compile_bundled", lambda name: compiled)
    page_file = tmp_path / "graph.html"
    assert main(["viz", "TinyBlock", "-o", str(page_file)]) == 0
    stats, explained = compiled.stats, compiled.explain()
    assert explained, "the bundled block compiled with explain=True records reasons; the hover check needs some"

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / "viz-tinyblock.png"
    shutil.copy(page_file, ARTIFACTS / "viz-tinyblock.html")
    errors, requests = [], []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_file.as_uri())
            page.wait_for_selector("body[data-rendered]", timeout=60_000)
            assert page.get_attribute("body", "data-rendered") == "true", page.inner_text("#graph")

            # One drawn cluster per fusion group, each labelled with a kernel of the compiled model.
            clusters = page.locator("#graph svg g.cluster.fusion-group")
            assert clusters.count() == stats["groups"]
            kinds = sum(page.locator(f"#graph svg g.node-{kind}").count() for kind in ("extern", "aten", "view"))
            assert kinds == stats["unfused_ops"]  # extern calls, ATen ops and ATen views, each drawn in its own style

            # Hovering each group's label shows its kernel and its reasons in the details panel.
            shown: dict[str, list[str]] = defaultdict(list)
            with_reasons = None
            for i in range(clusters.count()):
                cluster = clusters.nth(i)
                label = cluster.locator("text").all_text_contents()
                cluster.locator("text").first.hover()
                name = page.inner_text("#details h2")
                assert name == label[0] and name in compiled.kernels, (name, label)
                assert page.get_attribute("#details", "data-group") == cluster.get_attribute("id")
                reasons = page.locator("#details .reason").all_text_contents()
                shown[name] += reasons
                if reasons and with_reasons is None:
                    with_reasons = i
            assert set(shown) == set(compiled.kernels)  # every kernel drawn
            assert {k: v for k, v in shown.items() if v} == explained

            # An extern call (none here: the block's matmuls are Triton GEMMs) tells which views it reads
            # its operands through; an ATen view says what it is.
            if page.locator("#graph svg g.node-extern").count():
                page.locator("#graph svg g.node-extern").first.hover()
                assert "operand views folded into the call" in page.inner_text("#details .node-title")

            # A click keeps a group in the panel while the pointer moves on; a second click releases it.
            first, second = clusters.nth(0), clusters.nth(1)
            first.locator("text").first.click()
            second.locator("text").first.hover()
            assert page.get_attribute("#details", "data-group") == first.get_attribute("id")
            first.locator("text").first.click()
            second.locator("text").first.hover()
            assert page.get_attribute("#details", "data-group") == second.get_attribute("id")

            # The picture: the first group with reasons hovered, its panel open.
            clusters.nth(with_reasons).locator("text").first.hover()
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    with capsys.disabled():
        print(f"\n[test_viz_browser] screenshot: {screenshot}")
    assert errors == []
    assert all(url.startswith(("file:", "data:", "blob:")) for url in requests), requests  # nothing from the network
    assert screenshot.stat().st_size > 10_000


def test_demo_writes_the_graph_page(compiled, tmp_path):
    """`mlirfuse demo` writes demo-out/graph.html through write_demo_page (the rest of the demo: tests/test_cli.py)."""
    path = tmp_path / "graph.html"
    write_demo_page(compiled, path)
    assert path.read_text().count("subgraph cluster_group") == compiled.stats["groups"]
