"""The persistent compile cache (mlirfuse/runtime/cache.py, issue 20 item 4).

Every test gets an empty cache directory of its own and turns the cache on
(tests/conftest.py turns it off for every other test). The cross-process
tests run real subprocesses on one directory.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import mlirfuse
from mlirfuse.runtime import cache
from helpers import Lambda

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("MLIRFUSE_CACHE_DIR", str(directory))
    monkeypatch.delenv("MLIRFUSE_NO_CACHE", raising=False)
    monkeypatch.delenv("MLIRFUSE_CACHE_MAX_BYTES", raising=False)
    return directory


def entries(directory: Path, level: str) -> list[Path]:
    return sorted((directory / level).glob("*.entry"))


def chain(x, w):
    h = torch.sigmoid(torch.relu(x) * 2) + 1
    return torch.softmax(h @ w, dim=-1)


def compile_chain(x, w, **options):
    cm = mlirfuse.compile(Lambda(chain), (x, w), **options)
    torch.testing.assert_close(cm(x, w), chain(x, w), rtol=1e-5, atol=1e-6)
    return cm


def served(cm) -> dict:
    return {k: v for k, v in cm.stats.items() if k in ("passes_run", "kernels_compiled") or "cache" in k}


# --- in one process -------------------------------------------------------------------------------


def test_second_compile_is_served_from_both_levels(cache_dir):
    x, w = torch.randn(4, 8), torch.randn(8, 16)
    first = compile_chain(x, w)
    kernels = first.stats["kernels"]
    assert served(first) == {
        "passes_run": first.stats["passes_run"], "kernels_compiled": kernels, "program_cache_hits": 0,
        "program_cache_misses": 1, "kernel_cache_hits": 0, "kernel_cache_misses": kernels,
    }
    assert first.stats["passes_run"] > 0
    assert len(entries(cache_dir, cache.PROGRAMS)) == 1 and len(entries(cache_dir, cache.LOWERED)) == kernels
    second = compile_chain(x, w)
    assert served(second) == {
        "passes_run": 0, "kernels_compiled": 0, "program_cache_hits": 1, "program_cache_misses": 0,
        "kernel_cache_hits": kernels, "kernel_cache_misses": 0,
    }
    assert second.mlir == first.mlir
    assert {n: k.source for n, k in second.kernels.items()} == {n: k.source for n, k in first.kernels.items()}


def test_another_shape_dtype_or_pipeline_misses_the_program_level(cache_dir):
    x, w = torch.randn(4, 8), torch.randn(8, 16)
    compile_chain(x, w)
    for args, options in [
        ((torch.randn(4, 9), torch.randn(9, 16)), {}),
        ((x.double(), w.double()), {}),
        ((x, w), {"options": {"horizontal": False}}),
        ((x, w), {"explain": True}),
        ((x, w), {"matmul": "aten"}),
    ]:
        cm = compile_chain(*args, **options)
        assert (cm.stats["program_cache_misses"], cm.stats["program_cache_hits"]) == (1, 0), (args[0].shape, options)
        assert cm.stats["passes_run"] > 0
    # Each was stored: the same compiles again are hits.
    assert compile_chain(x.double(), w.double()).stats["program_cache_hits"] == 1
    assert compile_chain(x, w, matmul="aten").stats["program_cache_hits"] == 1


def test_a_kernel_is_keyed_by_its_form_not_its_name(cache_dir):
    """The same pointwise kernel, first alone (fused_relu_mul_0), then after another (a second name): served to both."""
    x, w = torch.randn(4, 8), torch.randn(8, 8)
    alone = mlirfuse.compile(Lambda(lambda a: torch.relu(a) * 2), (x,))
    (name,) = alone.kernels
    later = Lambda(lambda a, b: torch.relu(torch.sin(a) @ b) * 2)
    cm = mlirfuse.compile(later, (x, w), matmul="aten")
    assert cm.stats["kernel_cache_hits"] == 1 and cm.stats["kernels_compiled"] == cm.stats["kernels"] - 1
    (renamed,) = [n for n in cm.kernels if n != name and n.startswith(name.rsplit("_", 1)[0] + "_")]
    source = cm.kernels[renamed].source
    assert f"def {renamed}(" in source and name not in source.replace(renamed, "")
    assert cache.PLACEHOLDER not in source
    torch.testing.assert_close(cm(x, w), later(x, w))


def test_a_kernel_shared_modulo_constants_is_served_with_other_values(cache_dir):
    """A kernel taking constants as arguments (lift-constants) is keyed without their values: another model's
    values are served the same lowering, and each launch still computes with its own."""

    def scaled(s):
        return Lambda(lambda x, y: (torch.sigmoid(x * s[0]) - s[1], torch.sigmoid(y * s[2]) - s[3]))

    x, y = torch.randn(64), torch.randn(64)
    first = mlirfuse.compile(scaled((0.5, 0.25, 2.0, 0.125)), (x, y))
    model = scaled((3.0, 1.0, -1.0, 0.5))
    cm = mlirfuse.compile(model, (x, y))
    assert first.stats["constant_merges"] == cm.stats["constant_merges"] == 1
    assert cm.stats["program_cache_misses"] == 1 and cm.stats["kernel_cache_hits"] == 1 and cm.stats["kernels_compiled"] == 0
    for got, want in zip(cm(x, y), model(x, y)):
        torch.testing.assert_close(got, want)


def test_policy_and_cache_false_bypass_the_program_level(cache_dir):
    x, w = torch.randn(4, 8), torch.randn(8, 16)
    compile_chain(x, w)
    vetoing = compile_chain(x, w, policy=lambda candidate: None)
    assert vetoing.stats["program_cache_hits"] == vetoing.stats["program_cache_misses"] == 0
    assert vetoing.stats["passes_run"] > 0 and vetoing.stats["kernel_cache_hits"] == vetoing.stats["kernels"]
    fresh = compile_chain(x, w, cache=False)
    assert served(fresh) == {
        "passes_run": fresh.stats["passes_run"], "kernels_compiled": fresh.stats["kernels"], "program_cache_hits": 0,
        "program_cache_misses": 0, "kernel_cache_hits": 0, "kernel_cache_misses": 0,
    }


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # one payload byte flipped, the length kept
        at = len(data) - 10
        path.write_bytes(data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:])


@pytest.mark.parametrize("how", ["truncated", "corrupted"])
def test_a_damaged_entry_is_discarded_and_rebuilt(cache_dir, caplog, how):
    x, w = torch.randn(4, 8), torch.randn(8, 16)
    first = compile_chain(x, w)
    (program,) = entries(cache_dir, cache.PROGRAMS)
    kernel = entries(cache_dir, cache.LOWERED)[0]
    good = {program: program.read_bytes(), kernel: kernel.read_bytes()}
    _damage(program, how)
    _damage(kernel, how)
    with caplog.at_level(logging.WARNING, logger="mlirfuse"):
        cm = compile_chain(x, w)  # compares with eager
    warned = [r.getMessage() for r in caplog.records if "discarding cache entry" in r.getMessage()]
    assert len(warned) == 2 and str(program) in warned[0] + warned[1] and str(kernel) in warned[0] + warned[1]
    assert cm.stats["program_cache_misses"] == 1 and cm.stats["passes_run"] == first.stats["passes_run"]
    assert cm.stats["kernel_cache_misses"] == cm.stats["kernels_compiled"] == 1
    assert cm.stats["kernel_cache_hits"] == cm.stats["kernels"] - 1
    assert cm.mlir == first.mlir
    # Rebuilt in place, whole again: the same bytes as before the damage.
    for path, data in good.items():
        assert path.read_bytes() == data and cache.verified(data) is not None


def test_a_verified_entry_that_does_not_parse_is_discarded(cache_dir, caplog):
    """A checksum cannot catch an entry written whole but wrong; the parser can: discarded, never half-used."""
    x, w = torch.randn(4, 8), torch.randn(8, 16)
    first = compile_chain(x, w)
    (program,) = entries(cache_dir, cache.PROGRAMS)
    cache.write(cache.PROGRAMS, program.stem, b"func.func @forward( {")
    with caplog.at_level(logging.WARNING, logger="mlirfuse"):
        cm = compile_chain(x, w)
    assert any("does not parse" in r.getMessage() for r in caplog.records)
    assert cm.stats["program_cache_misses"] == 1 and cm.mlir == first.mlir
    assert cache.verified(program.read_bytes()).decode() == first.mlir


def test_entries_verify_and_reject_every_damage():
    payload = b"some payload\nwith lines"
    entry = cache.MAGIC + b" " + cache.hashlib.sha256(payload).hexdigest().encode() + b" %d\n" % len(payload) + payload
    assert cache.verified(entry) == payload
    for damaged in [entry[:-1], entry + b"x", entry[:20], b"", entry.replace(b"some", b"same"), b"x" + entry]:
        assert cache.verified(damaged) is None, damaged


def test_eviction_keeps_the_most_recently_used_under_the_bound(cache_dir):
    paths = []
    for i in range(5):
        cache.write(cache.LOWERED, f"{i:064x}", bytes(1000))
        paths.append(cache_dir / cache.LOWERED / f"{i:064x}.entry")
        os.utime(paths[-1], (1000 + i, 1000 + i))  # written in order 0..4
    assert cache.read(cache.LOWERED, f"{0:064x}") == bytes(1000)  # a hit: entry 0 is now the most recent
    size = paths[0].stat().st_size
    assert cache.evict(3 * size) == 3 * size
    assert [p.exists() for p in paths] == [True, False, False, True, True]
    assert sum(p.stat().st_size for p in paths if p.exists()) <= 3 * size


def test_a_tiny_bound_holds_through_compiles_and_calls(cache_dir, monkeypatch):
    x, w = torch.randn(4, 8), torch.randn(8, 16)
    kernels = compile_chain(x, w).stats["kernels"]  # compiled and called: compared with eager
    written = sum(level["entries"] for level in cache.info()["levels"].values())
    assert written == 1 + 2 * kernels  # the program, each kernel's lowering and source
    cache.clear()
    monkeypatch.setenv("MLIRFUSE_CACHE_MAX_BYTES", "6000")
    for _ in range(2):
        compile_chain(x, w)
        held = cache.info()
        assert held["max_bytes"] == 6000
        assert sum(level["bytes"] for level in held["levels"].values()) <= 6000
        assert 0 < sum(level["entries"] for level in held["levels"].values()) < written


# --- across processes -----------------------------------------------------------------------------

STACK = """
import json, sys
import torch
import transformers
import mlirfuse

layers, out = int(sys.argv[1]), sys.argv[2]
config = transformers.GPT2Config(n_layer=layers, n_embd=32, n_head=4, n_positions=16, vocab_size=100, use_cache=False)
torch.manual_seed(0)
model = transformers.GPT2Model(config).eval()
ids = torch.randint(0, 100, (2, 8))
cm = mlirfuse.compile(model, (ids,))
got = cm(ids).last_hidden_state
with torch.no_grad():
    torch.testing.assert_close(got, model(ids).last_hidden_state, rtol=1e-4, atol=1e-5)
torch.save(got, out + ".pt")
with open(out + ".json", "w") as f:
    json.dump(cm.stats, f)
"""


def _env(directory: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MLIRFUSE_NO_CACHE", "MLIRFUSE_CACHE_MAX_BYTES")}
    env["MLIRFUSE_CACHE_DIR"] = str(directory)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def _start(tmp_path: Path, where: str, layers: int, directory: Path) -> tuple[subprocess.Popen, Path]:
    """The stack's script written under tmp_path/where (each process its own path) and started: the process, its output stem."""
    folder = tmp_path / where
    folder.mkdir()
    script = folder / "stack.py"
    script.write_text(STACK)
    command = [sys.executable, str(script), str(layers), str(folder / "out")]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(directory)), folder / "out"


def _finish(proc: subprocess.Popen, stem: Path) -> tuple[dict, torch.Tensor]:
    """The stack's cm.stats and output once its process ended well."""
    _, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-4000:]
    return json.loads(Path(f"{stem}.json").read_text()), torch.load(f"{stem}.pt")


def test_a_second_process_runs_no_pass_and_compiles_no_kernel(tmp_path):
    """Issue 20's acceptance: the 12-layer stack, compiled again by another process from another path."""
    pytest.importorskip("transformers")
    directory = tmp_path / "cache"
    first, out1 = _finish(*_start(tmp_path, "first", 12, directory))
    second, out2 = _finish(*_start(tmp_path, "second", 12, directory))
    assert first["passes_run"] > 0 and first["kernels_compiled"] == first["kernels"] > 0
    assert first["program_cache_misses"] == 1
    assert second["passes_run"] == 0 and second["kernels_compiled"] == 0
    assert second["program_cache_hits"] == 1 and second["kernel_cache_hits"] == second["kernels"] == first["kernels"]
    assert torch.equal(out1, out2)


def test_two_processes_at_once_on_an_empty_cache(tmp_path):
    pytest.importorskip("transformers")
    directory = tmp_path / "cache"
    started = [_start(tmp_path, where, 2, directory) for where in ("one", "two")]
    (_, out1), (_, out2) = [_finish(*run) for run in started]
    assert torch.equal(out1, out2)
    files = [p for level in (cache.PROGRAMS, cache.LOWERED) for p in entries(directory, level)]
    assert files and all(cache.verified(p.read_bytes()) is not None for p in files)
    assert not list(directory.rglob("*.tmp"))
    # And they serve a third process whole.
    stats, _ = _finish(*_start(tmp_path, "three", 2, directory))
    assert stats["passes_run"] == 0 and stats["kernels_compiled"] == 0


# --- mlirfuse cache info|clear ----------------------------------------------------------------------


def _cli(directory: Path, *args: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mlirfuse.tools.main", "cache", *args],
        capture_output=True, text=True, env=_env(directory) | env, timeout=120,
    )


def test_cli_info_and_clear(cache_dir):
    compile_chain(torch.randn(4, 8), torch.randn(8, 16))
    counts = {level: len(list((cache_dir / level).iterdir())) for level in cache.LEVELS}
    info = _cli(cache_dir, "info", MLIRFUSE_CACHE_MAX_BYTES="123456")
    assert info.returncode == 0, info.stderr
    assert info.stdout.splitlines()[0] == f"mlirfuse cache: {cache_dir}"
    for level, count in counts.items():
        assert count > 0 and any(line.split()[:2] == [level, str(count)] for line in info.stdout.splitlines()), info.stdout
    assert "of 123456 bytes" in info.stdout
    cleared = _cli(cache_dir, "clear")
    assert cleared.returncode == 0 and cleared.stdout.strip() == f"removed {sum(counts.values())} files from {cache_dir}"
    assert all(not list((cache_dir / level).iterdir()) for level in cache.LEVELS)
    assert " 0 entries" in _cli(cache_dir, "info").stdout


@pytest.mark.parametrize("problem", ["bound", "file"])
def test_cli_errors_are_one_line_and_exit_1(tmp_path, problem):
    directory = tmp_path / "cache"
    env = {}
    if problem == "bound":
        env["MLIRFUSE_CACHE_MAX_BYTES"] = "1GB"
    else:
        directory.write_text("not a directory")
    proc = _cli(directory, "info", **env)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("mlirfuse cache: error: ") and "Traceback" not in proc.stderr
    assert ("MLIRFUSE_CACHE_MAX_BYTES" if problem == "bound" else "is not a directory") in proc.stderr


def test_a_cache_that_cannot_be_written_does_not_fail_the_compile(cache_dir, caplog):
    cache_dir.mkdir()
    (cache_dir / cache.PROGRAMS).write_text("a file where the level's directory goes")
    with caplog.at_level(logging.WARNING, logger="mlirfuse"):
        cm = compile_chain(torch.randn(4, 8), torch.randn(8, 16))
    assert cm.stats["program_cache_misses"] == 1
    assert any("cannot write the compile cache" in r.getMessage() for r in caplog.records)


def test_a_bad_bound_is_logged_and_the_compile_goes_on(cache_dir, caplog, monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CACHE_MAX_BYTES", "1GB")
    with caplog.at_level(logging.WARNING, logger="mlirfuse"):
        cm = compile_chain(torch.randn(4, 8), torch.randn(8, 16))  # compiled, called, compared with eager
    assert cm.stats["program_cache_misses"] == 1 and len(entries(cache_dir, cache.PROGRAMS)) == 1
    assert any("MLIRFUSE_CACHE_MAX_BYTES must be a number of bytes" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("text", ["", "0"])
def test_no_cache_is_off_only_when_set(monkeypatch, text):
    monkeypatch.setenv("MLIRFUSE_NO_CACHE", text)
    assert cache.enabled()
    monkeypatch.setenv("MLIRFUSE_NO_CACHE", "1")
    assert not cache.enabled()



def test_a_package_without_metadata_keys_by_its_sources(tmp_path, monkeypatch):
    # A package imported from a folder on PYTHONPATH (the GPU machine's torch-mlir, an unpacked archive) has no
    # distribution metadata: versions() raised PackageNotFoundError and no compile could start. Its sources stand in.
    package = tmp_path / "unpackaged_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = cache._version("unpackaged-pkg", "unpackaged_pkg")
    assert first.startswith("unpackaged+")
    (package / "__init__.py").write_text("X = 2\n")
    assert cache._version("unpackaged-pkg", "unpackaged_pkg") != first
    (package / "__init__.py").unlink()  # a namespace package has locations and no origin (torch_mlir)
    (package / "mod.py").write_text("Y = 1\n")
    assert cache._version("unpackaged-pkg", "unpackaged_pkg").startswith("unpackaged+")
