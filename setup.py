"""Packaging step pyproject.toml cannot say: a wheel carries the viewer `mlirfuse viz` inlines.

`mlirfuse viz` writes HTML pages that inline Graphviz compiled to
WebAssembly (`@viz-js/viz`, pinned in mlirfuse/viz/package-lock.json). A
source checkout gets it from `make setup` (npm ci); a wheel must carry it as
package data, so building one runs the same `npm ci` when the bundle is not
there yet, and refuses to build a wheel without it. An editable install
(`make setup`'s `pip install -e`) is left alone: the checkout's own
node_modules serve it, and `make setup` installs them when npm exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

VIZ = Path(__file__).resolve().parent / "mlirfuse" / "viz"
BUNDLE = VIZ / "node_modules" / "@viz-js" / "viz" / "dist" / "viz-global.js"
# MLIRFUSE_WHEEL_WITHOUT_VIZ=1 builds a wheel without the viewer anyway (its `mlirfuse viz` writes dot/svg only).
WITHOUT_VIZ = "MLIRFUSE_WHEEL_WITHOUT_VIZ"


def viz_bundle_problem() -> str | None:
    """Why the Graphviz bundle is missing after trying to install it with npm; None once it is there."""
    if BUNDLE.is_file():
        return None
    npm = shutil.which("npm")
    if npm is None:
        return f"npm is not on PATH, and the pinned Graphviz bundle is not at {BUNDLE}"
    done = subprocess.run([npm, "ci", "--prefix", str(VIZ), "--no-audit", "--no-fund", "--loglevel=error"],
                          capture_output=True, text=True)
    if done.returncode != 0 or not BUNDLE.is_file():
        return f"'npm ci --prefix {VIZ}' failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}"
    return None


class BuildWithViewer(build_py):
    def run(self):
        # An editable install reads the checkout's node_modules, which `make setup` installs (it warns without npm).
        if not getattr(self, "editable_mode", False) and os.environ.get(WITHOUT_VIZ) != "1":
            problem = viz_bundle_problem()
            if problem is not None:
                raise SystemExit(
                    f"error: a wheel of mlirfuse carries the Graphviz bundle 'mlirfuse viz' inlines, and {problem}. "
                    f"Install npm (or run 'make setup'), or set {WITHOUT_VIZ}=1 to build without the viewer."
                )
        super().run()


setup(cmdclass={"build_py": BuildWithViewer})
