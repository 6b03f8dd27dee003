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
# No test is served another's compiled program or kernel (a determinism test would compare a hit with
# itself, a patched pass would not run): the persistent cache is off but where tests/test_cache.py turns it on.
os.environ.setdefault("MLIRFUSE_NO_CACHE", "1")

# Under pytest-xdist (`make test` runs `-n auto`) each worker gets one intra-op thread: N workers on N
# cores, not N * N threads spinning against each other. Subprocesses the tests start inherit this.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)


def pytest_configure(config):
    # The interpreter evaluates masked-off lanes too (log(0), 1/0 ...); numpy warns about them.
    config.addinivalue_line("filterwarnings", "ignore::RuntimeWarning:triton.runtime.interpreter")


@pytest.fixture
def fresh_dynamo():
    """Dynamo's caches and the mlirfuse backend's records emptied before and after a test that compiles through it."""
    from mlirfuse.backend import backend

    torch._dynamo.reset()
    backend.clear()
    yield
    torch._dynamo.reset()


def pytest_sessionfinish(session, exitstatus):
    if _OWN_CACHE is not None:
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)


# Modules whose tests run on one pytest-xdist worker (`make test` runs `-n auto`), and why.
ONE_WORKER = {
    "test_viz_browser.py": "one apt-get of Chromium (two at once fight over dpkg's lock), the page compiled once",
    "test_aot.py": "the kernels compiled once for both archs (a module fixture)",
    "test_matmul_aot.py": "the GEMM kernels compiled once for both archs (a module fixture)",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's `load` scheduling, except that each ONE_WORKER module is one unit of work.

    (`xdist_group` marks would say the same, but pytest-xdist 3.8 cannot rename pytest 9's node ids, so they are lost.)
    """
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module.rsplit("/", 1)[-1] in ONE_WORKER else nodeid

    return Scheduling(config, log)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
