"""Every OpInfo op through mlirfuse vs eager: the full run of tests/opinfo (issue 13, item 4).

    python bench/opinfo.py                        # every op_db entry, table to bench/RESULTS.md
    python bench/opinfo.py --samples 2            # at most 2 samples per (op, dtype)
    python bench/opinfo.py --ops sum,atan2 --no-write
    python bench/opinfo.py --shard 0/4            # a quarter of the entries (by a hash of their names)
    python bench/opinfo.py --save run.json        # also keep every outcome
    python bench/opinfo.py --reuse run.json --ops a,b   # re-run a, b; the other ops' outcomes from run.json
    python bench/opinfo.py --combine s0.json s1.json    # the table of saved runs (e.g. --shard 0/2 and 1/2;
                                                        # an op in a later file replaces its earlier outcomes)

Each op runs in a worker subprocess (a segfault is a counted crash, a hang
a timeout) over its float32 samples (and bfloat16 where the op takes it;
ops without float32 in their first integer/bool dtype). Prints the summary
(ops tried / matched / fused / unsupported by reason / random, and the share
of Inductor-lowered ops left as ATen calls) and every wrong answer and
crash, and writes them into bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.fuzz.harness import Worker  # noqa: E402
from tests.opinfo.harness import Outcome, Summary, opinfos, stable_sample, to_json  # noqa: E402
from report import header, publish  # noqa: E402


class OpInfoWorker(Worker):
    MODULE = "tests.opinfo.worker"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default="", help="comma-separated op_db keys (default: all)")
    parser.add_argument("--shard", default="0/1", help="i/n: the i-th of n parts of op_db, split by a hash of the names")
    parser.add_argument("--samples", type=int, default=0, help="samples per (op, dtype), spread over the list (0: all)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per op before it counts as a hang")
    parser.add_argument("--no-write", action="store_true", help="do not append to bench/RESULTS.md")
    parser.add_argument("--save", type=Path, help="write every outcome to this JSON file")
    parser.add_argument("--reuse", type=Path, help="outcomes of a --save run, for the ops not run now")
    parser.add_argument("--combine", type=Path, nargs="+", help="run nothing: the table of these --save files")
    parser.add_argument("--note", default="", help="a line printed under the title (how the run was made)")
    args = parser.parse_args(argv)
    if args.combine:
        by_op: dict[str, list] = {}
        for path in args.combine:  # a later file's outcomes of an op replace an earlier one's (a re-run)
            saved = json.loads(path.read_text())
            by_op.update({op: [o for o in saved if o["op"] == op] for op in {o["op"] for o in saved}})
        summary = Summary()
        for outcomes in by_op.values():
            summary.add(outcomes)
        title = f"mlirfuse OpInfo differential run: {len(summary.by_op())} of {len(opinfos())} op_db entries"
        return _report(summary, title, args)

    shard, shards = map(int, args.shard.split("/"))
    keys = args.ops.split(",") if args.ops else stable_sample(opinfos(), shards, shard)
    os.environ["MLIRFUSE_OPINFO_SAMPLES"] = str(args.samples)
    summary = Summary()
    reused = []
    if args.reuse:
        reused = [o for o in json.loads(args.reuse.read_text()) if o["op"] not in set(keys)]
        summary.add(reused)
    start = time.time()
    with OpInfoWorker() as worker:
        for i, key in enumerate(keys):
            result = worker.run(key, timeout=args.timeout)
            if result["status"] == "ok":
                summary.add(result["outcomes"])
            else:
                summary.add([Outcome(key, "?", "(worker)", "crash", f"{result['sig']}: {result['detail'][:300]}")])
            print(f"[{i + 1}/{len(keys)} {time.time() - start:.0f}s] {key}: "
                  f"{summary.op_status(summary.by_op().get(key, []))}", file=sys.stderr, flush=True)
            if args.save:  # after every op: a run cut short keeps what it did
                args.save.write_text(json.dumps(to_json(summary.outcomes)))
    elapsed = time.time() - start
    what = f"{len(keys)} of {len(opinfos())} op_db entries" + (f" (part {args.shard} by name hash)" if shards > 1 else "")
    if reused:
        what += f", with {len({o['op'] for o in reused})} more from {args.reuse.name} (an earlier run)"
    samples = f"{args.samples} samples per (op, dtype)" if args.samples else "all samples up to 4096 elements"
    return _report(summary, f"mlirfuse OpInfo differential run: {what}, {samples}, {elapsed / 60:.0f} min", args)


def _report(summary: Summary, title: str, args) -> int:
    if args.note:
        title += "\n" + args.note
    report = f"{header('opinfo.py')}\n\n```\n{summary.render(title)}\n```\n"
    publish(report, write=not args.no_write)
    return 1 if any(o.is_bug for o in summary.outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
