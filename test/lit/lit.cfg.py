# Lit configuration for mlirfuse: `lit test/lit` from the repository root.
#
# Tools come from the Python environment that runs lit (the virtualenv's bin
# directory), so `mlirfuse-opt`, `filecheck` and `%PYTHON` always agree.

import os
import sys

import lit.formats

config.name = "mlirfuse"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Output", "__pycache__"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "Output")

bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bin_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])

for name in ("HOME", "MLIRFUSE_CACHE_DIR", "TRITON_INTERPRET"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

config.substitutions.append(("%PYTHON", sys.executable))

# Lit's external shell has no builtin `not` (LLVM ships it as a binary);
# a `not` word (not part of a path or name) runs Inputs/not.py instead.
config.excludes.append("Inputs")
not_py = os.path.join(os.path.dirname(__file__), "Inputs", "not.py")
config.substitutions.append((r"(?<![\w./-])not(?=\s)", "%s %s" % (sys.executable, not_py)))
