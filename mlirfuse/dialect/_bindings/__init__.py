"""Where the MLIR bindings look for a dialect's Python module (see fusion.py)."""
