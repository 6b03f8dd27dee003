"""mlirfuse: a fusion compiler for PyTorch on MLIR."""
