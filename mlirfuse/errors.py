"""Exceptions mlirfuse raises for user mistakes; each message names the problem."""


class MlirfuseError(Exception):
    """Base class: a problem with what the user gave mlirfuse, not a bug in it."""


class PipelineError(MlirfuseError):
    """An unknown pass, a malformed pipeline string or a bad pass option.

    `option` names the offending option, if one; `source` and `column`
    (0-based), once known, place the problem in the pipeline text, and
    `located()` prints it as `origin:1:col: error: ...` under a caret line.
    """

    def __init__(self, message: str, *, option: str | None = None, source: str | None = None, column: int | None = None):
        super().__init__(message)
        self.message, self.option, self.source, self.column = message, option, source, column

    def located(self, origin: str = "<pass-pipeline>") -> str:
        if self.source is None or self.column is None:
            return f"{origin}: error: {self.message}"
        return f"{origin}:1:{self.column + 1}: error: {self.message}\n{self.source}\n{' ' * self.column}^"


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
