# RUN: %PYTHON %s | filecheck %s

# `mlirfuse-opt --help` documents every pass and pipeline flag with each of
# its options: name, type, default and meaning, as `pass_options` gives them.

import os
import subprocess
import sys

from mlirfuse.passes import PASSES, PIPELINES, pass_options

helptext = subprocess.run(
    [os.path.join(os.path.dirname(sys.executable), "mlirfuse-opt"), "--help"],
    capture_output=True, text=True, check=True,
).stdout

listing = helptext[helptext.index("\nPasses:") :]
count = 0
for name in list(PASSES) + list(PIPELINES):
    section = listing.partition(f"\n  --{name}")[2].split("\n  --")[0]
    for option in pass_options(name):
        count += 1
        listed = f"{option.name}=<{option.type}> (default " in section
        print(f"{name} {option.name}: doc={'yes' if option.doc else 'MISSING'} listed={'yes' if listed else 'MISSING'}")
print(f"{count} options documented")

# CHECK-NOT: MISSING
# CHECK:     fusion-fuse-vertical max-args: doc=yes listed=yes
# CHECK:     mlirfuse-pipeline explain: doc=yes listed=yes
# CHECK:     mlirfuse-pipeline horizontal: doc=yes listed=yes
# CHECK:     options documented
