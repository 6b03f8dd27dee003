"""Device calls per forward on every architecture of tests/test_zoo.py: mlirfuse vs TorchInductor (issue 22).

    python bench/zoo.py                 # print the table, make it bench/RESULTS.md's zoo.py section
    python bench/zoo.py --no-write      # print only
    python bench/zoo.py -k falcon       # only the cases whose name contains this

Every case of tests/test_zoo.py (each architecture with sdpa and eager
attention, the ResNet once), built as the test builds it (tiny config,
random weights after torch.manual_seed(0), a padding mask), compiled by
mlirfuse (its defaults, Triton GEMMs) and by Inductor (CPU) in the same run.
Device calls are counted as bench/device_calls.py counts them: mlirfuse's
launches + ATen calls (views excluded), Inductor's launches of its kernels +
extern calls. The last-but-two column is issue 22's bar: mlirfuse's total
strictly below Inductor's. Below the table: how many graphs Inductor
compiled where not one (a graph break runs ops eagerly between its graphs,
which neither total counts).
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import test_zoo  # noqa: E402

from device_calls import COLUMNS, measure_both, row  # noqa: E402
from report import RESULTS, header, markdown_table, publish  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help=f"do not write {RESULTS.name}")
    parser.add_argument("-k", default="", help="only the cases whose name ('llama (sdpa)') contains this")
    args = parser.parse_args(argv)

    rows, breaks = [], []
    for name, attn in test_zoo.CASES:
        case = name if name in test_zoo.ATTENTION_FREE else f"{name} ({attn})"
        if args.k not in case:
            continue
        torch.manual_seed(0)
        model = test_zoo.build(name, attn)
        inputs, kwargs = test_zoo.example(name)
        m, i = measure_both(case, model, inputs, kwargs)
        rows.append(row(case, m, i))
        if i["graphs"] != 1:
            breaks.append(f"{case}: {i['graphs']}")

    below = sum(r[COLUMNS.index("mlirfuse < inductor")] == "yes" for r in rows)
    graphs = f"graphs per model where not one: {', '.join(breaks)}" if breaks else "one graph per model (no graph break)"
    report = (
        f"{header('zoo.py')}\n\n{markdown_table(COLUMNS, rows, 1)}\n\n"
        f"mlirfuse strictly below Inductor on {below} of {len(rows)} cases. Inductor compiled {graphs}.\n"
    )
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
