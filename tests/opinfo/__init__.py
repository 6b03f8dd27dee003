"""Differential test over PyTorch's OpInfo database (issue 13, item 4).

- `harness.py`: one OpInfo sample -> module -> mlirfuse -> compared with eager; the
  outcome of each sample and the `Summary` table (ops tried / matched / fused /
  unsupported by reason, and the share of Inductor-lowered ops left as ATen calls).
- `worker.py`: runs ops in a subprocess for `bench/opinfo.py`, so a segfault is a counted crash.
- `test_opinfo.py`: the bounded CI run over a fixed sample of `op_db`.

    python -m pytest -q tests/opinfo                                  # CI sample
    MLIRFUSE_OPINFO=all python -m pytest -q tests/opinfo -k 'atan2'   # any op(s)
    python bench/opinfo.py                                            # every op, table to bench/RESULTS.md
"""
