"""Shared setup: checked analyses and launches, and a private kernel cache.

No Triton environment is set: CPU tensors must run through the interpreter
whatever the environment says (tests/test_import_order.py checks the rest).
"""

import os
import shutil
import tempfile

# Model tests compile with the maintained analyses checked after every pass.
os.environ.setdefault("MLIRFUSE_VERIFY_ANALYSES", "1")
# Every launch proves it stayed in its tensors (mlirfuse/runtime/checks.py).
os.environ.setdefault("MLIRFUSE_CHECK_BOUNDS", "1")
# Kernels written by this session must not leak into (or be served from) ~/.cache.
_OWN_CACHE = None
if not os.environ.get("MLIRFUSE_CACHE_DIR"):
    _OWN_CACHE = tempfile.mkdtemp(prefix="mlirfuse-test-cache-")
    os.environ["MLIRFUSE_CACHE_DIR"] = _OWN_CACHE

import pytest  # noqa: E402
import torch  # noqa: E402


def pytest_configure(config):
    # The interpreter evaluates masked-off lanes too (log(0), 1/0 ...); numpy warns about them.
    config.addinivalue_line("filterwarnings", "ignore::RuntimeWarning:triton.runtime.interpreter")


def pytest_sessionfinish(session, exitstatus):
    if _OWN_CACHE is not None:
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
