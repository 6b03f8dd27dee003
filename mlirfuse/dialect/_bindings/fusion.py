"""The Python module of the `fusion` namespace: deliberately empty.

The bindings import `<prefix>.fusion` the first time they wrap a fusion op;
finding this module (instead of failing to find `torch_mlir.dialects.fusion`
on every access) keeps IR traversal off the import system.
"""
