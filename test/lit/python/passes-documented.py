# RUN: %PYTHON %s | filecheck %s

# Every registered pass has a docstring, is listed with it by
# `mlirfuse-opt --list-passes`, and has its own lit file named after it.

import os
import subprocess
import sys

from mlirfuse.passes import PASSES, get_pass_class

here = os.path.dirname(os.path.abspath(__file__))
listing = subprocess.run(
    [os.path.join(os.path.dirname(sys.executable), "mlirfuse-opt"), "--list-passes"],
    capture_output=True, text=True, check=True,
).stdout

for name in PASSES:
    doc = (get_pass_class(name).__doc__ or "").strip()
    first = doc.splitlines()[0] if doc else ""
    area = "Analysis" if name.startswith("test-") else "Transforms"
    lit_file = os.path.join(here, "..", area, f"{name}.mlir")
    cls = get_pass_class(name)
    # A dataclass without a docstring gets its signature as __doc__.
    documented = bool(first) and not first.startswith(f"{cls.__name__}(")
    print(
        f"{name}: doc={'yes' if documented else 'MISSING'} name={'yes' if cls.name == name else 'MISSING'}"
        f" listed={'yes' if first and f'--{name}' in listing and first in listing else 'NO'}"
        f" lit={'yes' if os.path.exists(lit_file) else 'MISSING'}"
    )
print(f"{len(PASSES)} passes checked")

# The listing is exact: a new pass must be named here too.
# CHECK-NOT:  MISSING
# CHECK-NOT:  =NO
# CHECK:      fusion-functionalize: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-fold-constant-indices: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-fuse-attention: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-decompose: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-keepdim-rows: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-split-bias: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-chunk-motion: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-sum-matmuls: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-fuse-vertical: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-fuse-horizontal: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-fuse-concat: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-sink-exit-reshapes: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-fuse-matmul: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-explain-unfused: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-mark-persistent: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-extern-operands: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-canonicalize: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-outline: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-schedule-collectives: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: fusion-cost: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: test-dependence: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: test-alias: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: test-shapes: doc=yes name=yes listed=yes lit=yes
# CHECK-NEXT: 23 passes checked
