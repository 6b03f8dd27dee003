"""The persistent compile cache: compiled programs and lowered kernels, shared across processes.

    $MLIRFUSE_CACHE_DIR (default ~/.cache/mlirfuse)
      programs/<key>.entry        one exported graph's final IR after one pipeline
      lowered/<key>.entry         one kernel's lowering (its TritonKernel, under a placeholder name)
      kernels/<name>_<hash>.py    the sources Triton imports (runtime/kernels.py)

Program level: keyed by the imported torch-dialect IR, which is the exported
graph (ops, attributes, shapes, dtypes, constants), with the flat inputs'
shapes, dtypes and devices (the guards of the specialization), the pipeline
and its options, `explain`, and the versions of mlirfuse (its sources),
torch, torch-mlir and Triton. A hit parses the stored IR and builds the
Program from it: no pass runs. A compile under a fusion policy (a user's
function, which no key can name soundly) bypasses this level.

Kernel level: keyed by the kernel's canonical form (the deduplication's:
values numbered in order, attributes sorted, no symbol name), its other
attributes, the target (Triton source) and the versions of Triton and
mlirfuse. An entry holds the kernel under a placeholder name; a hit takes
the name of the kernel it serves. Keys never hold names, ids, paths or times.

An entry is one header line (magic, sha256 and length of the payload) and
the payload. It is written to a temporary file, fsynced and renamed into
place, so a reader sees a whole entry or none whatever writers run at once.
Every read checks the digest: a truncated or corrupted entry is logged,
deleted and rebuilt, never loaded. After each write the cache is held under
MLIRFUSE_CACHE_MAX_BYTES (default 1 GiB) by deleting the least recently
used files (a hit touches its entry); a process counts the bytes it writes
and lists the directory only when that count passes the bound, or after 30
seconds (other processes write too). MLIRFUSE_NO_CACHE=1, or
`mlirfuse.compile(..., cache=False)`, bypasses both levels.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import pickle
import tempfile
import time
from pathlib import Path

from mlirfuse.dialect import canonical_form
from mlirfuse.ir import asm, ir
from mlirfuse.lowering.triton import TritonKernel, lower_kernel
from mlirfuse.passes import default_pipeline
from mlirfuse.passes.pipeline_text import as_pipeline
from mlirfuse.passes.policy import current

logger = logging.getLogger("mlirfuse")

PROGRAMS, LOWERED, SOURCES = "programs", "lowered", "kernels"
LEVELS = (PROGRAMS, LOWERED, SOURCES)
DEFAULT_MAX_BYTES = 1 << 30
MAGIC = b"mlirfuse-cache-entry-1"
# What an entry calls its kernel: no generated identifier has this form.
PLACEHOLDER = "__mlirfuse_kernel__"
# A writer's temporary file older than this was left by a killed process: eviction removes it.
STALE_TMP_SECONDS = 3600


def root() -> Path:
    """The cache directory (not created here)."""
    return Path(
        os.environ.get("MLIRFUSE_CACHE_DIR")
        or os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "mlirfuse")
    )


def level_dir(level: str) -> Path:
    """One level's directory, created if missing."""
    path = root() / level
    path.mkdir(parents=True, exist_ok=True)
    return path


def enabled() -> bool:
    return os.environ.get("MLIRFUSE_NO_CACHE", "") in ("", "0")


def max_bytes() -> int:
    """The size bound: MLIRFUSE_CACHE_MAX_BYTES, else 1 GiB; a value that is no non-negative integer is an error."""
    text = os.environ.get("MLIRFUSE_CACHE_MAX_BYTES", "")
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"MLIRFUSE_CACHE_MAX_BYTES must be a number of bytes, got {text!r}")
    return value


def _source_digest(package: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _version(distribution: str, module: str) -> str:
    """`distribution`'s installed version; for a package imported from a source tree or an unpacked archive
    (no metadata), a digest of its Python sources stands in."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        spec = importlib.util.find_spec(module)
        if spec is None:
            raise
        # A namespace package (torch_mlir has no __init__.py) has locations and no origin.
        folders = list(spec.submodule_search_locations or [Path(spec.origin).parent])
        return "unpackaged+" + "+".join(_source_digest(Path(folder)) for folder in folders)


@functools.cache
def mlirfuse_version() -> str:
    """The package version and a digest of its sources: a changed checkout never reads another's entries."""
    package = Path(__file__).resolve().parent.parent
    try:
        version = importlib.metadata.version("mlirfuse")
    except importlib.metadata.PackageNotFoundError:  # a source tree on PYTHONPATH: the digest says it all
        version = "unpackaged"
    return f"{version}+{_source_digest(package)}"


@functools.cache
def versions() -> str:
    """Everything outside the key's arguments that a compiled program or kernel depends on."""
    return "\n".join(
        f"{name} {_version(name, module)}"
        for name, module in (("torch", "torch"), ("torch-mlir", "torch_mlir"), ("triton", "triton"))
    ) + f"\nmlirfuse {mlirfuse_version()}"


def digest(*parts: str) -> str:
    """The key of an entry made of `parts` (each framed, so no two tuples of parts share a key)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode()
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


# --- entries -------------------------------------------------------------------------------------


def _path(level: str, key: str) -> Path:
    return level_dir(level) / f"{key}.entry"


def write(level: str, key: str, payload: bytes) -> None:
    """Store `payload` under `key`: whole or not at all, then evict down to the bound.

    A cache that cannot be written (read-only, full) is logged and skipped: the compile goes on.
    """
    header = b"%s %s %d\n" % (MAGIC, hashlib.sha256(payload).hexdigest().encode(), len(payload))
    tmp = None
    try:
        path = _path(level, key)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(header + payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        wrote(len(header) + len(payload))
    except OSError as e:
        logger.warning("mlirfuse: cannot write the compile cache under %s: %s", root(), e)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def read(level: str, key: str) -> bytes | None:
    """The payload stored under `key`, or None: missing, or found damaged (then deleted, with a warning)."""
    try:
        path = _path(level, key)
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        logger.warning("mlirfuse: cannot read the compile cache under %s: %s", root(), e)
        return None
    payload = verified(data)
    if payload is None:
        discard(path, "its checksum or length does not match")
        return None
    with contextlib.suppress(OSError):  # least recently used goes first (a read-only cache stays usable)
        os.utime(path)
    return payload


def verified(data: bytes) -> bytes | None:
    """An entry's payload if its header's length and sha256 match it, else None."""
    header, newline, payload = data.partition(b"\n")
    fields = header.split(b" ")
    if not newline or len(fields) != 3 or fields[0] != MAGIC or not fields[2].isdigit():
        return None
    if int(fields[2]) != len(payload) or hashlib.sha256(payload).hexdigest().encode() != fields[1]:
        return None
    return payload


def discard(path: Path, why: str) -> None:
    logger.warning("mlirfuse: discarding cache entry %s (%s); it is rebuilt", path, why)
    path.unlink(missing_ok=True)


def _files() -> list[tuple[Path, os.stat_result]]:
    """Every file of every level, with its stat; files that vanish meanwhile (another process) are skipped."""
    if root().exists() and not root().is_dir():
        raise NotADirectoryError(f"the cache directory '{root()}' is not a directory (MLIRFUSE_CACHE_DIR)")
    found = []
    for level in LEVELS:
        try:
            listing = os.scandir(root() / level)
        except (FileNotFoundError, NotADirectoryError):
            continue
        with listing:
            for item in listing:
                try:
                    found.append((Path(item.path), item.stat()))
                except FileNotFoundError:
                    continue
    return found


def evict(bound: int, keep: Path | None = None) -> int:
    """Delete least recently used files until the cache holds at most `bound` bytes; returns the bytes it holds.

    `keep`: a file about to be read (a kernel source Triton imports next), never deleted. Writers'
    temporary files go when stale (older than an hour), never counted as entries.
    """
    now = time.time()
    entries, total = [], 0
    for path, st in _files():
        if path.name.endswith(".tmp"):
            if now - st.st_mtime > STALE_TMP_SECONDS:
                path.unlink(missing_ok=True)
            continue
        entries.append((st.st_mtime, path, st.st_size))
        total += st.st_size
    for _, path, size in sorted(entries):
        if total <= bound:
            break
        if path != keep:
            path.unlink(missing_ok=True)
            total -= size
    _HELD.update(root=root(), bytes=total, at=time.monotonic())
    return total


# This process's estimate of the cache's bytes: scanning every file after every write would cost a
# directory listing per kernel. Rescanned when the estimate passes the bound, and at least every
# RESCAN_SECONDS (other processes write too).
_HELD: dict = {"root": None, "bytes": 0, "at": 0.0}
RESCAN_SECONDS = 30.0


def wrote(size: int, keep: Path | None = None) -> None:
    """`size` bytes were just written: evict down to the bound if the estimate says the cache may be past it.

    A bad bound or a file that cannot be deleted is logged: the compile goes on.
    """
    try:
        bound = max_bytes()
        held = _HELD
        if held["root"] != root() or time.monotonic() - held["at"] > RESCAN_SECONDS or held["bytes"] + size > bound:
            evict(bound, keep)
        else:
            held["bytes"] += size
    except (OSError, ValueError) as e:
        logger.warning("mlirfuse: cannot hold the compile cache under %s to its bound: %s", root(), e)


def info() -> dict:
    """What `mlirfuse cache info` prints: the directory, per level its entries and bytes, the bound."""
    levels = {level: {"entries": 0, "bytes": 0} for level in LEVELS}
    for path, st in _files():
        if not path.name.endswith(".tmp"):
            levels[path.parent.name]["entries"] += 1
            levels[path.parent.name]["bytes"] += st.st_size
    return {"dir": str(root()), "levels": levels, "max_bytes": max_bytes()}


def clear() -> int:
    """Delete every file of every level; returns how many."""
    files = _files()
    for path, _ in files:
        path.unlink(missing_ok=True)
    return len(files)


# --- program level -------------------------------------------------------------------------------


def pipeline_identity(pipeline, explain: bool) -> str:
    """The pipeline as its steps say it: each pass with every option's value (frozen dataclasses' repr)."""
    steps = as_pipeline(pipeline or default_pipeline()).steps
    return repr([(step.kind, step.what, step.instance) for step in steps]) + f"\nexplain={explain}"


class ProgramCache:
    """One compile's program level: `lookup` before the pipeline, `store` after a Program was built."""

    def __init__(self, imported, pipeline, explain: bool, use: bool = True):
        self.key = None
        self.hits = self.misses = 0
        if use and enabled() and current() is None:
            self.key = digest(
                "program", str(imported.module), repr(imported.input_meta), pipeline_identity(pipeline, explain), versions()
            )

    def lookup(self, imported) -> str | None:
        """The stored final IR, parsed into `imported.module` (replacing the torch-dialect one); None on a miss."""
        if self.key is None:
            return None
        payload = read(PROGRAMS, self.key)
        text = None
        if payload is not None:
            try:
                text = payload.decode()
                module = ir.Module.parse(text, imported.context)
            except (UnicodeDecodeError, ir.MLIRError) as e:
                discard(_path(PROGRAMS, self.key), f"it does not parse: {str(e)[:200]}")
                text = None
        if text is None:
            self.misses += 1
            return None
        self.hits += 1
        imported.module = module
        return text

    def store(self, text: str) -> None:
        if self.key is not None and self.misses:
            write(PROGRAMS, self.key, text.encode())

    def stats(self) -> dict[str, int]:
        return {"program_cache_hits": self.hits, "program_cache_misses": self.misses}


# --- kernel level --------------------------------------------------------------------------------


def kernel_key(kernel) -> str:
    """A fusion.kernel's key: its canonical form and every attribute but its name, the target, the versions."""
    attrs = sorted(f"{name} = {asm(kernel.attributes[name])}" for name in kernel.attributes if name != "sym_name")
    return digest("kernel", canonical_form(kernel), "\n".join(attrs), "target=triton-source", versions())


def kernel_payload(kernel: TritonKernel) -> bytes | None:
    """`kernel` pickled under the placeholder name; None where its name shows anywhere else (not cached)."""
    if PLACEHOLDER in kernel.source:
        return None
    try:
        payload = pickle.dumps(kernel.renamed(PLACEHOLDER))
    except (pickle.PicklingError, TypeError, AttributeError) as e:  # a launch fact holding a function
        logger.info("mlirfuse: kernel %s is not cached: %s", kernel.name, e)
        return None
    return None if kernel.name.encode() in payload else payload


class KernelCache:
    """Lowers fusion.kernels through the kernel level (the `lower` a Program takes); counts what it did."""

    def __init__(self, use: bool = True):
        self.use = use and enabled()
        self.hits = self.misses = self.compiled = 0

    def __call__(self, kernel) -> TritonKernel:
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        key = kernel_key(kernel) if self.use else None
        payload = read(LOWERED, key) if key else None
        if payload is not None:
            try:
                cached = pickle.loads(payload)
            except Exception as e:  # a verified entry this code cannot read (cannot happen unless written by a bug)
                discard(_path(LOWERED, key), f"it does not unpickle: {e}")
            else:
                self.hits += 1
                return cached.renamed(name)
        self.misses += key is not None
        self.compiled += 1
        lowered = lower_kernel(kernel)
        if key is not None and (payload := kernel_payload(lowered)) is not None:
            write(LOWERED, key, payload)
        return lowered

    def stats(self) -> dict[str, int]:
        return {"kernel_cache_hits": self.hits, "kernel_cache_misses": self.misses, "kernels_compiled": self.compiled}
