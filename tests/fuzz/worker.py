"""Worker loop: one JSON case per stdin line, one JSON outcome per stdout line.

Started by `harness.Worker` with the interpreter environment set; anything
mlirfuse, Triton or torch print goes to stderr so stdout stays the protocol.
`MLIRFUSE_FUZZ_TARGET` (a checkout's root) makes the worker test that
checkout's `mlirfuse` with this checkout's fuzzer (`tests.fuzz` is imported
before the path is put first).
"""

import json
import os
import sys


def main() -> None:
    for key, value in (("TRITON_INTERPRET", "1"), ("TRITON_DEFAULT_FP_FUSION", "1"), ("MLIRFUSE_VERIFY_ANALYSES", "1")):
        os.environ.setdefault(key, value)
    if not os.environ.get("MLIRFUSE_CACHE_DIR"):
        import tempfile

        os.environ["MLIRFUSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlirfuse-fuzz-cache-")
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    import warnings

    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(1)
    target = os.environ.get("MLIRFUSE_FUZZ_TARGET")
    if target:
        sys.path.insert(0, os.path.abspath(target))
    import mlirfuse  # picks the Triton mode before anything imports triton
    from tests.fuzz.harness import run_case_source

    for line in sys.stdin:
        request = json.loads(line)
        if request.get("which"):
            out.write(json.dumps({"status": "which", "sig": "", "detail": mlirfuse.__file__}) + "\n")
            out.flush()
            continue
        try:
            result = run_case_source(request["source"])
        except Exception as e:  # eager itself failed: the case is invalid, not a bug
            result = {"status": "invalid", "sig": f"invalid: {type(e).__name__}", "detail": str(e)[:1000]}
        out.write(json.dumps(result) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
