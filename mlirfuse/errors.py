"""Exceptions mlirfuse raises for user mistakes; each message names the problem."""


class MlirfuseError(Exception):
    """Base class: a problem with what the user gave mlirfuse, not a bug in it."""


class PipelineError(MlirfuseError):
    """An unknown pass, a malformed pipeline string or a bad pass option."""


class UnsupportedModelError(MlirfuseError):
    """The model could not be exported, imported or run by mlirfuse."""


class InputMismatchError(MlirfuseError):
    """Call-time inputs differ from the example inputs (raised by `compile(..., strict=True)`; otherwise they recompile)."""


class CompilationError(MlirfuseError):
    """A pass or the verifier rejected the IR; carries MLIR's diagnostics."""


class KernelBoundsError(MlirfuseError):
    """A checked launch (`MLIRFUSE_CHECK_BOUNDS=1`) touched memory outside its tensors: a bug in a kernel."""


class RecompileLimitWarning(UserWarning):
    """New inputs run the eager model: the specialization bound was reached or compiling for them failed."""
