"""Worker loop for `bench/opinfo.py`: one OpInfo key per request, its outcomes as one JSON line.

Speaks the fuzz worker's protocol (`tests.fuzz.harness.Worker`: a JSON
`{"source": ...}` line in, a JSON line out), so the same class restarts it
when a sample kills the process. `MLIRFUSE_OPINFO_SAMPLES` caps the samples
per dtype (0: all).
"""

import json
import os
import sys


def main() -> None:
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever torch, Triton or mlirfuse print goes to stderr
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    import torch

    torch.set_num_threads(1)
    import mlirfuse  # noqa: F401
    from tests.opinfo.harness import Outcome, run_op, to_json

    max_samples = int(os.environ.get("MLIRFUSE_OPINFO_SAMPLES", "0")) or None
    for line in sys.stdin:
        key = json.loads(line)["source"]
        try:
            outcomes = to_json(run_op(key, max_samples))
        except Exception as e:  # noqa: BLE001 - the harness itself failed: counted, the worker lives on
            outcomes = to_json([Outcome(key, "?", "(harness)", "crash", f"the harness failed: {type(e).__name__}: {e}"[:1000])])
        out.write(json.dumps({"status": "ok", "sig": "", "outcomes": outcomes}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
