"""Differential fuzzing: random graphs compiled by mlirfuse, compared with eager PyTorch.

- `gen.py`: seeded generator of small graphs (a `Case`: inputs + one line per op), rendered
  as the Python source of an `nn.Module` and its inputs.
- `harness.py`: compile, run, compare (values, dtypes, shapes, NaN/inf positions, signed
  zeros) and classify the outcome; `Worker` runs cases in a subprocess so a segfault is a
  counted crash.
- `shrink.py`: minimize a failing case while its signature persists and save it as
  `regressions/test_<hash>.py` (xfail(strict=True) until the bug is fixed).
- `known.py`: filed bug classes the bounded CI run (`test_fuzz.py`) tolerates.

    python -m pytest -q tests/fuzz                      # bounded run + saved regressions
    python bench/fuzz.py --minutes 30 --shrink          # long run, table to bench/RESULTS.md
"""
