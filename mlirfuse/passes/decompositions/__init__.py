"""The rewrite patterns of `fusion-decompose` (mlirfuse/passes/decompose.py), by family."""
