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
    "var",
    "var.unbiased",
    "std",
    "std.unbiased",
    "var_mean",
    "var_mean.unbiased",
    "std_mean",
    "std_mean.unbiased",
    "logsumexp",
)
