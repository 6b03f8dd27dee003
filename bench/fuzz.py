"""Long differential fuzzing run: random graphs compiled with mlirfuse vs eager.

    python bench/fuzz.py --minutes 30 [--seed S] [--shrink] [--no-append]
    python bench/fuzz.py --seed 1234 --cases 1 --shrink     # re-run and shrink one case
    python bench/fuzz.py --target /work/wt/other --minutes 8  # fuzz another checkout's mlirfuse
    python bench/fuzz.py --focus gemm,attention               # those families 10x as often
    python bench/fuzz.py --aot --focus gemm,attention         # and every kernel compiled for sm_80/sm_90: spills

Prints a table (cases, ok, accepted, mismatches, crashes, unsupported, op/dtype mix,
one row per failure signature with its first seed) and writes it into
bench/RESULTS.md. With --shrink, the first case of each new signature is
shrunk and saved under tests/fuzz/regressions/ as an xfail(strict) test.
Cases run in a worker subprocess, so a segfault is counted, not fatal.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.fuzz.gen import generate, render  # noqa: E402
from tests.fuzz.harness import Worker  # noqa: E402
from tests.fuzz.known import known_class  # noqa: E402
from tests.fuzz.shrink import save_regression, shrink  # noqa: E402
from report import header, markdown_table, publish  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100000 * 1000)
    parser.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    parser.add_argument("--shrink", action="store_true", help="shrink each new signature and save a regression test")
    parser.add_argument("--shrink-budget", type=float, default=240, help="seconds per shrink")
    parser.add_argument("--no-append", action="store_true", help="do not append to bench/RESULTS.md")
    parser.add_argument("--log", type=Path, default=None, help="also write one line per failing case here")
    parser.add_argument("--target", type=Path, default=None,
                        help="root of the checkout whose mlirfuse is tested (default: this one); "
                             "shrunk cases are saved only without it")
    parser.add_argument("--aot", action="store_true", help="also compile every kernel of each passing case "
                        "(every kind) for sm_80 and sm_90 and count spills (no GPU needed; slower)")
    parser.add_argument("--precision", choices=("fast", "eager"), default=None,
                        help="compile with this precision; eager: f16/bf16 outputs of all-pointwise cases must "
                             "equal eager bit for bit")
    parser.add_argument("--focus", default="", help="comma-separated op families drawn 10x as often "
                        "(gen.py generator names without _gen_: elementwise_more,pad,pool,index,gemm,attention,...)")
    args = parser.parse_args(argv)
    if args.target:
        os.environ["MLIRFUSE_FUZZ_TARGET"] = str(args.target.resolve())
    if args.aot:
        os.environ["MLIRFUSE_FUZZ_AOT"] = "1"
    if args.precision:
        os.environ["MLIRFUSE_FUZZ_PRECISION"] = args.precision

    focus = tuple(f for f in args.focus.split(",") if f)
    deadline = time.time() + args.minutes * 60
    counts = collections.Counter()
    signatures: dict[str, list] = {}  # sig -> [status, count, first seed, detail, regression]
    ops, dtypes = collections.Counter(), collections.Counter()
    log = args.log.open("a") if args.log else None
    seed = args.seed
    with Worker() as worker, Worker() as shrinker:
        tested = worker.which()
        root = Path(tested).resolve().parents[1]
        rev = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"],
                             capture_output=True, text=True).stdout.strip()
        print(f"testing {tested} ({rev})", flush=True)
        while time.time() < deadline and (args.cases is None or counts["cases"] < args.cases):
            case = generate(seed, focus=focus)
            source = render(case)
            result = worker.run(source)
            status = result["status"]
            counts["cases"] += 1
            counts[status] += 1
            ops.update(t.split(":")[0] for t in case.tags)
            dtypes.update(i.dtype for i in case.inputs)
            if status not in ("ok",):
                sig = result["sig"]
                entry = signatures.setdefault(sig, [status, 0, seed, result["detail"], ""])
                entry[1] += 1
                line = f"seed {seed}: {sig}" if sig.startswith(f"{status}:") else f"seed {seed}: {status}: {sig}"
                print(line, flush=True)
                if log:
                    log.write(line + "\n")
                    log.flush()
                if args.shrink and status in ("mismatch", "crash") and entry[1] == 1:
                    small = shrink(case, sig, shrinker, budget_s=args.shrink_budget)
                    if args.target:
                        where = "shrunk (not saved: --target)"
                    else:
                        path = save_regression(small, result)
                        entry[4] = path.name
                        where = f"saved {path}"
                    print(f"  {where}\n" + "\n".join("    " + s for s in render(small).splitlines()), flush=True)
                    if log:
                        log.write(f"  {result['detail'][:600]}\n" + "".join("    " + s + "\n" for s in render(small).splitlines()))
                        log.flush()
            seed += 1
            if counts["cases"] % 25 == 0:
                print(f"[{time.strftime('%H:%M:%S')}] {dict(counts)}", flush=True)

    summary = markdown_table(
        ["cases", "ok", "accepted", "mismatches", "crashes", "unsupported", "invalid", "spills", "first seed", "minutes"],
        [[str(counts["cases"]), str(counts["ok"]), str(counts["accepted"]), str(counts["mismatch"]), str(counts["crash"]),
          str(counts["unsupported"]), str(counts["invalid"]), str(counts["spill"]) if args.aot else "-", str(args.seed),
          f"{args.minutes:g}"]],
        text_columns=0,
    )
    rows = [
        [s.replace("|", "\\|")[:110], e[0], s.removeprefix("accepted: ") if e[0] == "accepted" else known_class(s) or "?",
         str(e[1]), str(e[2]), e[4] or ""]
        for s, e in sorted(signatures.items(), key=lambda kv: (kv[1][0], -kv[1][1]))
    ]
    failures = markdown_table(["signature", "outcome", "class", "cases", "first seed", "regression"], rows, text_columns=3)
    mix = markdown_table(
        ["op family", "nodes"], [[k, str(v)] for k, v in ops.most_common()]
    ) + "\n\n" + markdown_table(["input dtype", "inputs"], [[k, str(v)] for k, v in dtypes.most_common()])
    report = f"{header('fuzz.py')}\n\n{summary}\n\n{failures}\n\n{mix}\n"
    publish(report, write=not args.no_append)
    return 0


if __name__ == "__main__":
    sys.exit(main())
