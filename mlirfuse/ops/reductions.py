"""Reductions mlirfuse fuses with their pointwise prologue and epilogue.

`OPINFO_SUPPORTED` names the PyTorch OpInfo entries (`op_db`, as
"name" or "name.variant") whose ops end up fused into reduction kernels;
the differential test in tests/test_opinfo_reductions.py runs their sample
inputs against eager PyTorch.
"""

OPINFO_SUPPORTED = (
    "sum",
    "mean",
    "amax",
    "amin",
    "softmax",
    "softmax.with_dtype",
    "log_softmax",
    "log_softmax.with_dtype",
    "nn.functional.layer_norm",
    "native_layer_norm",
    "nn.functional.rms_norm",
    "nn.functional.group_norm",
    "nn.functional.batch_norm",  # inference samples fuse; training ones run through ATen
    "var",
    "var.unbiased",
    "std",
    "std.unbiased",
    "var_mean",
    "var_mean.unbiased",
    "std_mean",
    "std_mean.unbiased",
    "logsumexp",
    "prod",
    "argmax",
    "argmin",
    "max.reduction_with_dim",
    "min.reduction_with_dim",
)

from dataclasses import dataclass  # noqa: E402

from mlirfuse.ir import constant_int_list, constant_value, tensor_type  # noqa: E402
from mlirfuse.ops.dtypes import FLOAT_DTYPES  # noqa: E402
from mlirfuse.ops.family import Family, refusal  # noqa: E402

# op name -> (combine, dims operand or None for "all", keepdim operand or None for False)
REDUCTIONS = {
    "torch.aten.sum.dim_IntList": ("sum", 1, 2),
    "torch.aten.sum": ("sum", None, None),
    "torch.aten.mean.dim": ("mean", 1, 2),
    "torch.aten.mean": ("mean", None, None),
    "torch.aten.amax": ("max", 1, 2),
    "torch.aten.amin": ("min", 1, 2),
    "torch.aten.max": ("max", None, None),
    "torch.aten.min": ("min", None, None),
    "torch.aten.prod.dim_int": ("prod", 1, 2),
    "torch.aten.prod": ("prod", None, None),
    "torch.aten.argmax": ("argmax", 1, 2),
    "torch.aten.argmin": ("argmin", 1, 2),
}


@dataclass(frozen=True)
class Reduction:
    """What a reduction op computes: `combine` over `dims` of an input shaped `shape`."""

    combine: str  # sum | mean | max | min | prod | argmax | argmin
    shape: tuple[int, ...]
    dims: tuple[int, ...]
    keepdim: bool
    dtype: str  # result dtype

    @property
    def rnumel(self) -> int | None:
        """Elements per row; None when a reduced dim is `?` (known at run time only)."""
        n = 1
        for d in self.dims:
            if self.shape[d] is None:
                return None
            n *= self.shape[d]
        return n

    @property
    def keepdim_shape(self) -> tuple[int, ...]:
        return reduced_shape(self.shape, self.dims, keepdim=True)


def reduced_shape(shape, dims, keepdim: bool) -> tuple:
    """`shape` reduced over `dims`: kept as 1s with keepdim, dropped without."""
    if keepdim:
        return tuple(1 if i in dims else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in dims)


def reduction_dims(value, rank: int) -> list[int] | None:
    """A dim operand (an int, a list of ints, or None or [] for all dims) as sorted non-negative dims; None unless constant."""
    const = constant_value(value)
    if const is None:
        return list(range(rank))
    listed = [const] if isinstance(const, int) and not isinstance(const, bool) else constant_int_list(value)
    if listed is None:
        return None
    dims = sorted({d % rank for d in listed}) if rank else []
    return dims or list(range(rank))


def reduction(op) -> Reduction | str:
    """The Reduction `op` computes, or the reason mlirfuse does not fuse it."""
    name = op.operation.name
    combine, dims_at, keep_at = REDUCTIONS[name]
    if len(op.results) != 1:
        return "has more than one result"
    x, out = tensor_type(op.operands[0].type), tensor_type(op.results[0].type)
    if x is None or out is None:
        return "operand or result is not a ranked tensor of a supported dtype"
    rank = len(x.shape)
    if dims_at is None:
        dims = list(range(rank))
    else:
        dims = reduction_dims(op.operands[dims_at], rank)
        if dims is None:
            return "reduction dims are not constant"
    # A `?` row length is looped over (never persistent) and divided by at run time; argmax/argmin
    # keep static rows.
    if any(x.shape[d] is None for d in dims) and combine in ("argmax", "argmin"):
        return f"{combine} over a dynamic dim"
    keepdim = False if keep_at is None else constant_value(op.operands[keep_at])
    if not isinstance(keepdim, bool):
        return "keepdim is not constant"
    if combine in ("argmax", "argmin") and (rank == 0 or constant_value(op.operands[dims_at]) is None):
        return f"{combine} over all dims (flattened indices)"
    if combine in ("max", "min", "prod", "argmax", "argmin") and x.dtype not in FLOAT_DTYPES:
        return f"{combine} is fused for floating types only"
    if combine == "prod" and out.dtype not in FLOAT_DTYPES:
        return "prod with a non-float result"
    if out.dtype not in FLOAT_DTYPES and combine == "mean":
        return "mean of a non-float result"
    if any(x.shape[d] == 0 for d in dims) and combine in ("max", "min", "argmax", "argmin"):
        return "max/min over an empty dimension is an error in eager"
    return Reduction(combine, x.shape, tuple(dims), keepdim, out.dtype)


# None if the reduction `op` can start a reduction group; otherwise the reason.
why_not_fusible = refusal(reduction)


FAMILY = Family(
    __name__, frozenset(REDUCTIONS), why_not_fusible, fused=frozenset(REDUCTIONS), pure=frozenset(REDUCTIONS),
    lowering="mlirfuse/lowering/reduction.py",
    limits="constant dims and keepdim; max, min, prod, argmax and argmin of floats; mean and prod of float results; "
    "argmax and argmin over static rows, along a given dim",
)
