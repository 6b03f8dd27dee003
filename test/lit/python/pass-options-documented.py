# RUN: %PYTHON %s | filecheck %s

# `mlirfuse-opt --help` documents every pass and pipeline flag with each of
# its options: name, type, default and a non-empty meaning, as `pass_options`
# gives them. The last line counts the options with anything MISSING, so an
# option of any pass printed without its meaning fails the check (a
# `CHECK-NOT: MISSING` would cover only the text before the first `CHECK`).

import os
import subprocess
import sys

from mlirfuse.passes import PASSES, PIPELINES, pass_options

helptext = subprocess.run(
    [os.path.join(os.path.dirname(sys.executable), "mlirfuse-opt"), "--help"],
    capture_output=True, text=True, check=True,
).stdout

listing = helptext[helptext.index("\nPasses:") :]
count, missing = 0, 0
for name in list(PASSES) + list(PIPELINES):
    section = listing.partition(f"\n  --{name}")[2].split("\n  --")[0]
    for option in pass_options(name):
        count += 1
        start = f"{option.name}=<{option.type}> (default "
        line = next((line.strip() for line in section.splitlines() if line.strip().startswith(start)), None)
        printed = line is not None and line.partition("): ")[2].strip() != ""
        report = (
            f"{name} {option.name}: doc={'yes' if option.doc.strip() else 'MISSING'} "
            f"listed={'yes' if line is not None else 'MISSING'} help={'yes' if printed else 'MISSING'}"
        )
        missing += "MISSING" in report
        print(report)
print(f"{count} options documented, {missing} with something MISSING")

# CHECK:     fusion-fuse-vertical max-args: doc=yes listed=yes help=yes
# CHECK:     fusion-fuse-matmul prologue: doc=yes listed=yes help=yes
# CHECK:     fusion-fuse-matmul max-prologue-ops: doc=yes listed=yes help=yes
# CHECK:     mlirfuse-pipeline explain: doc=yes listed=yes help=yes
# CHECK:     mlirfuse-pipeline horizontal: doc=yes listed=yes help=yes
# CHECK:     {{[1-9][0-9]*}} options documented, 0 with something MISSING
