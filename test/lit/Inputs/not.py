"""`not CMD...`: succeed exactly when CMD exits non-zero without crashing (LLVM's `not`).

Lit's external shell has no builtin `not`; lit.cfg.py substitutes it with this.
"""

import subprocess
import sys

if len(sys.argv) < 2:
    sys.exit("usage: not COMMAND [ARGS...]")
rc = subprocess.call(sys.argv[1:])
sys.exit(0 if rc > 0 else 1)
