"""The torch ops mlirfuse fuses, one module per op family.

elementwise, reductions, indexing (gathers, scatters, creation), pooling,
views (and pads), matmul, attention: each says which torch ops it holds,
whether one may fuse (or why not) and what the lowering needs to know, and
exports one `Family` record (`family.py`); `registry.py` gathers them.
`dtypes.py` is the one dtype table; `special_values` specifies the floats'
special cases the kernels follow.

Nothing is imported here: `mlirfuse.ir` reads the dtype table below it.
"""
