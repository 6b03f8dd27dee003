"""mlirfuse: a fusion compiler for PyTorch on MLIR.

    import mlirfuse
    cm = mlirfuse.compile(model, (x,))
    y = cm(x)
"""

from mlirfuse.errors import (  # noqa: F401
    CompilationError,
    InputMismatchError,
    KernelBoundsError,
    MlirfuseError,
    PipelineError,
    RecompileLimitWarning,
    UnsupportedModelError,
)
from mlirfuse.log import configure_from_environment as _configure_log

_configure_log()  # MLIRFUSE_LOG=info|debug


def compile(model, example_inputs, example_kwargs=None, **options):
    """Compile an nn.Module; see `mlirfuse.compiler.compile`."""
    from mlirfuse.compiler import compile as _compile

    return _compile(model, example_inputs, example_kwargs, **options)


def save(cm, directory, targets=("sm_80", "sm_90"), **options):
    """Write a compiled model as a package; see `mlirfuse.package.save`."""
    from mlirfuse.package import save as _save

    return _save(cm, directory, targets, **options)


def load(directory, weights, mode=None, cubins=True):
    """A package as a callable bound to `weights`; see `mlirfuse.package.load`."""
    from mlirfuse.package import load as _load

    return _load(directory, weights, mode=mode, cubins=cubins)
