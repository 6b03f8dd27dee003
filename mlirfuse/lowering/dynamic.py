"""Kernels over `?` sizes: which sizes the launcher reads from its inputs at call time.

A kernel's source never holds a size: the iteration space's sizes (`xnumel`,
`rnumel`, `s0`, `s1` ...) and every input's strides are arguments. So a
kernel whose types have `?` dims is the same source for every size, and only
the launcher needs to know the sizes: it takes each `?` dim of the
iteration space from the tensors the kernel loads (each site after its view
chain; all sites with a `?` in one position of the space must agree, as
torch.export's programs guarantee), then each output's `?` dims from the space.

`dynamic_sizes` decides at lowering time that this is possible and records
how (`DynamicSizes`); kernels it refuses raise `LoweringError` with the
reason, and the runtime computes their ops with ATen instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlirfuse.ir import TensorType
from mlirfuse.lowering.emitter import LoweringError

# How one output dim gets its size: an int (static), ("space", d), or ("numel", numel source): the
# one `?` of an exit reshape, whatever is left of the stored value's element count.
SPACE, NUMEL = "space", "numel"


@dataclass(frozen=True)
class DynamicSizes:
    """How a kernel's `?` sizes follow from its loaded tensors at call time."""

    space: tuple[int | None, ...]  # the iteration space; None where `?`
    # Per load site: its shape in the kernel (None where `?`), right-aligned into the space.
    sites: tuple[tuple[int | None, ...], ...]
    # Per output: per dim, an int, (SPACE, d), or (NUMEL, dims of the space the stored value spans).
    outputs: tuple[tuple, ...]
    # A max/min over `?` reduced dims with a row result: eager's error when the rows are empty at run time.
    empty_rows_error: str | None = None

    def resolve(self, loaded: list) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
        """(iteration space, output shapes) for the tensors the launcher loads (sites in order)."""
        rank = len(self.space)
        space = list(self.space)
        for d in range(rank):
            if space[d] is not None:
                continue
            # The fuser took `?` sizes in one position to be one size (torch.export's programs make
            # broadcast symbolic sizes equal): every site with a `?` there must have it.
            aligned = [(t.shape[d - rank + t.dim()], shape[d - rank + len(shape)])
                       for t, shape in zip(loaded, self.sites) if len(shape) >= rank - d]
            sizes = {n for n, typed in aligned if typed is None}
            # A static size there broadcasts (1) or is the size itself.
            sizes |= {n for n, typed in aligned if typed is not None and typed != 1}
            if len(sizes) != 1:
                raise ValueError(
                    f"dynamic dim {d} of the iteration space has sizes {sorted(sizes)} in the inputs at run time; "
                    "the kernel was fused for one size (a `?` size may not broadcast against another)"
                )
            space[d] = sizes.pop()
        space = tuple(space)
        outputs = []
        for dims in self.outputs:
            shape = []
            for d in dims:
                if isinstance(d, int):
                    shape.append(d)
                elif d[0] == SPACE:
                    shape.append(space[d[1]])
                else:
                    shape.append(None)
            if None in shape:
                spanned = math.prod(space[k] for k in dims[shape.index(None)][1])
                known = math.prod(n for n in shape if n is not None)
                shape[shape.index(None)] = spanned // known if known else 0
            outputs.append(tuple(shape))
        return space, outputs


def dynamic_sizes(name: str, space, sites: list, outputs: list, empty_rows_error: str | None = None) -> DynamicSizes | None:
    """How to size a kernel at call time; None when every size is static.

    `sites`: each load site's shape (after its views); `outputs`: per output
    (its type, the stored value's shape, the space dims that value spans in
    order, whether it is an exit reshape).
    """
    types = [t for t, *_ in outputs]
    if all(n is not None for n in space) and all(isinstance(t, TensorType) and t.is_static for t in types):
        return None
    rank = len(space)
    for d, n in enumerate(space):
        covered = any(len(s) >= rank - d and s[d - rank + len(s)] is None for s in sites)
        if n is None and not covered:
            raise LoweringError(f"kernel @{name}: dynamic dim {d} of the iteration space is not a dim of any input it loads")
    plans = []
    for j, (t, stored, spans, reshaped) in enumerate(outputs):
        if not reshaped:
            # The stored value's dims are the space dims it spans, in order (size 1 where kept as 1).
            if len(stored) != len(spans) or any(s is not None and s != space[k] and s != 1 for s, k in zip(stored, spans)):
                raise LoweringError(f"kernel @{name}: result #{j} is not laid out over the iteration space")
            plans.append(tuple(n if n is not None else (SPACE, k) for n, k in zip(t.shape, spans)))
            continue
        if t.shape.count(None) > 1:
            raise LoweringError(f"kernel @{name}: result #{j} reshapes to more than one dynamic size")
        plans.append(tuple(n if n is not None else (NUMEL, tuple(spans)) for n in t.shape))
    return DynamicSizes(tuple(space), tuple(tuple(s) for s in sites), tuple(plans), empty_rows_error)


def format_shape(shape) -> str:
    return "[" + ", ".join("?" if n is None else str(n) for n in shape) + "]"


__all__ = ["DynamicSizes", "dynamic_sizes", "format_shape"]
