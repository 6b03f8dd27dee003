# Lit configuration for mlirfuse: `lit -v test/lit` from the repository root.
#
# Tools come from the Python environment that runs lit (the virtualenv's bin
# directory), so `mlirfuse-opt`, `filecheck` and `%PYTHON` always agree.

import os
import sys

import lit.formats

config.name = "mlirfuse"
# lit's internal shell: it has `not` built in, and lit 23 refuses
# execute_external=True (deprecated, removed in lit 24) unless forced.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Output", "__pycache__"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "Output")

bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bin_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])

# Every pipeline in the suite runs with the maintained analyses checked
# against recomputed ones after each pass (--verify-analyses).
config.environment["MLIRFUSE_VERIFY_ANALYSES"] = "1"
# Every kernel the python tests launch proves it stayed in bounds (guard bytes,
# checked interpreter loads and stores), as under pytest.
config.environment["MLIRFUSE_CHECK_BOUNDS"] = "1"

# PYTHONPATH: a worktree run (`PYTHONPATH=$PWD lit test/lit`) tests its own mlirfuse, not the installed one.
for name in ("HOME", "MLIRFUSE_CACHE_DIR", "TRITON_INTERPRET", "PYTHONPATH"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

config.substitutions.append(("%PYTHON", sys.executable))
