"""Interpreted and compiled Triton launches in one process, whatever was imported first.

Triton fixes its mode in three places, none of which we may rely on:

- `@triton.jit` returns an `InterpretedFunction` or a `JITFunction`
  depending on `TRITON_INTERPRET` *when the decorator runs*; the
  `triton.language` standard library (`tl.sum`, `tl.max`, `tl.sigmoid`, ...)
  was decorated when `triton` was first imported, by whoever imported it
  (`transformers`, `torch._inductor`).
- A launch under the interpreter patches `triton.language` with interpreter
  builtins and restores only what the kernel's own module sees: device
  functions it calls (`tl.sum`'s body sees `triton.language.core`) patch
  again and never restore, which leaves `triton.language.core` unusable for
  the compiler.
- `triton.knobs.runtime.interpret` is read by constexpr functions at call time.

`triton_mode(interpret)` sets all three for the duration of a load or a
launch and puts `triton.language` back exactly as it was afterwards, so CPU
tensors run through the interpreter and CUDA tensors through compiled kernels
in the same process, and `triton.compile` keeps working.

`host_arguments_in_place()` keeps an interpreted launch from copying CPU
tensor arguments to the host and back (the copy held them in a reference
cycle after the launch).
"""

from __future__ import annotations

import functools
import sys
from contextlib import contextmanager


def _namespaces() -> list:
    """What the interpreter patches, and where the standard library's jit functions live."""
    import triton.language as tl

    return [tl, tl.core, tl.standard, tl.math, tl.tensor, tl.dtype, tl.condition, tl.core.tensor_descriptor_base]


@functools.cache
def _jit_functions() -> tuple[tuple[object, str, object], ...]:
    """(namespace, name, function) for each jit function of triton.language, as imported."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    _pristine()  # taken with the same as-imported state
    return tuple(
        (ns, name, value)
        for ns in _namespaces()
        for name, value in vars(ns).items()
        if isinstance(value, (JITFunction, InterpretedFunction))
    )


@functools.cache
def _swaps(interpret: bool) -> tuple[tuple[object, str, object], ...]:
    """(namespace, name, function of the wanted mode) for each of `_jit_functions()`."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    def in_mode(value):
        if isinstance(value, InterpretedFunction if interpret else JITFunction):
            return value
        return InterpretedFunction(value.fn) if interpret else JITFunction(value.fn, **value.kwargs)

    return tuple((ns, name, in_mode(value)) for ns, name, value in _jit_functions())


def _sentinels() -> tuple:
    """What an interpreted launch changes first: `tl.tensor.__index__` (added) and `tl.dtype.to_ir` (replaced)."""
    import triton.language as tl

    return vars(tl.core.tensor).get("__index__"), tl.core.dtype.to_ir


@functools.cache
def _pristine() -> tuple:
    """`_sentinels()` as imported."""
    return _sentinels()


@functools.cache
def _imported_compiled() -> bool:
    """Whether `triton.language` was imported in compiled mode (every jit function a `JITFunction`)."""
    return all(value is swapped for (_, _, value), (_, _, swapped) in zip(_jit_functions(), _swaps(False)))


def already_compiled() -> bool:
    """Whether Triton is in compiled mode now, untouched by any interpreted launch: nothing to swap or restore.

    The common case on a GPU (no `TRITON_INTERPRET`): a launch then skips the
    swap and the restore, which cost more than the launch itself (~150 us of
    host time per kernel on an H100 machine, profiled).
    """
    import triton

    if triton.knobs.runtime.interpret:
        return False
    if "triton.runtime.interpreter" not in sys.modules:
        # No InterpretedFunction was ever made and no interpreted launch ran: the AOT worker's case, which so
        # never imports the interpreter (and numpy) only to find nothing to swap.
        return True
    return _imported_compiled() and _sentinels() == _pristine()


@contextmanager
def triton_mode(interpret: bool):
    """Within: `@triton.jit` and `triton.language` behave as under `TRITON_INTERPRET=<interpret>`."""
    import triton

    if not interpret and already_compiled():
        yield
        return
    namespaces = _namespaces()
    saved = [dict(vars(ns)) for ns in namespaces]
    with triton.knobs.runtime.scope():
        triton.knobs.runtime.interpret = interpret
        try:
            for ns, name, value in _swaps(interpret):
                setattr(ns, name, value)
            yield
        finally:
            for ns, before in zip(namespaces, saved):
                _restore(ns, before)


def _restore(ns, before: dict) -> None:
    now = vars(ns)
    for name, value in before.items():
        if now.get(name) is not value:
            setattr(ns, name, value)
    if isinstance(ns, type):
        # The interpreter adds dunders (__index__, __bool__) to tl.tensor.
        # Names it adds to a module's globals stay: the functions it
        # rewrote (and caches) refer to them.
        for name in [n for n in now if n not in before]:
            delattr(ns, name)


@contextmanager
def host_arguments_in_place():
    """Within: an interpreted launch whose arguments are all CPU tensors and scalars reads them where they are.

    Triton's interpreter copies every tensor argument to the host and back
    (`GridExecutor._init_args_hst`, `_restore_args_dev`); for a CPU tensor
    both are the same storage, and each copy keeps the argument storages in a
    reference cycle (recursive closures over a dict of them) that outlives the
    launch until Python's cyclic collector runs: a value the program dropped
    stayed allocated (GPT2Model: 4.2 MB measured against 3.2 planned). Any
    other argument (a CUDA tensor, a tuple, a tensor descriptor) takes
    Triton's own path.
    """
    import torch
    from triton.runtime.interpreter import GridExecutor, TensorDescriptor

    init, restore = GridExecutor._init_args_hst, GridExecutor._restore_args_dev

    def on_host(value) -> bool:
        if isinstance(value, torch.Tensor):
            return value.device.type == "cpu"  # a Parameter too: the interpreter reads its data pointer alone
        return not hasattr(value, "data_ptr") and not isinstance(value, (tuple, TensorDescriptor))

    def init_args(self, args_dev, kwargs):
        if all(map(on_host, args_dev)) and all(map(on_host, kwargs.values())):
            return list(args_dev), dict(kwargs)
        return init(self, args_dev, kwargs)

    def restore_args(self, args_dev, args_hst, kwargs, kwargs_hst):
        if len(args_dev) == len(args_hst) and all(a is b for a, b in zip(args_dev, args_hst)):
            return  # the launch wrote the tensors themselves
        restore(self, args_dev, args_hst, kwargs, kwargs_hst)

    GridExecutor._init_args_hst, GridExecutor._restore_args_dev = init_args, restore_args
    try:
        yield
    finally:
        GridExecutor._init_args_hst, GridExecutor._restore_args_dev = init, restore
