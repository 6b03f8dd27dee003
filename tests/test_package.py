"""Compiled packages (issue 20 item 5): `mlirfuse.save` writes one, `mlirfuse.load` runs it without export,
import, passes or lowering, checked file by file."""

from __future__ import annotations

import json

import pytest
import torch
import transformers

import mlirfuse
from mlirfuse.errors import InputMismatchError
from mlirfuse.models import TinyBlock
from mlirfuse.package import PackageError
from mlirfuse.runtime import binaries
from mlirfuse.runtime.kernels import load, source_key


def _gpt2(layers=2):
    config = transformers.GPT2Config(n_layer=layers, n_head=2, n_embd=32, n_positions=16, vocab_size=64,
                                     use_cache=False, attn_implementation="sdpa")
    torch.manual_seed(0)
    return transformers.GPT2Model(config).eval(), torch.randint(0, 64, (2, 8))


def _no_compiling(monkeypatch):
    """Any export, FX import, pass pipeline or kernel lowering from here on fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("a package load or call compiled something")

    monkeypatch.setattr(torch.export, "export", refuse)
    monkeypatch.setattr("mlirfuse.compiler.run_pipeline", refuse)
    monkeypatch.setattr("mlirfuse.runtime.cache.lower_kernel", refuse)
    monkeypatch.setattr("mlirfuse.lowering.triton.lower_kernel", refuse)


def test_a_saved_gpt2_loads_and_runs_as_eager_without_compiling(tmp_path, monkeypatch):
    model, ids = _gpt2()
    cm = mlirfuse.compile(model, (ids,))
    assert cm.stats.get("layer_calls") == 2  # the deduplicated layer is a function called per layer
    manifest = mlirfuse.save(cm, tmp_path / "pkg", targets=())
    assert sum(k["launches_per_call"] for k in manifest["kernels"].values()) == cm.stats["launches"]
    assert (tmp_path / "pkg" / "summary.txt").read_text().startswith("mlirfuse package of GPT2Model")
    _no_compiling(monkeypatch)
    run = mlirfuse.load(tmp_path / "pkg", weights=model)
    with torch.no_grad():
        expected = model(ids).last_hidden_state
    got = run(ids).last_hidden_state
    torch.testing.assert_close(got, expected)
    assert torch.equal(got, cm(ids).last_hidden_state)  # the same kernels, the same program
    other = torch.randint(0, 64, (2, 8))
    torch.testing.assert_close(run(other).last_hidden_state, model(other).last_hidden_state)


def test_weights_from_a_state_dict_and_the_inputs_guarded(tmp_path):
    model = TinyBlock(32, 2, 16).eval()
    x = torch.randn(2, 8, 32)
    mlirfuse.save(mlirfuse.compile(model, (x,)), tmp_path / "pkg", targets=())
    state = {k: v * 0.5 for k, v in model.state_dict().items()}  # other weights: the package computes with them
    run = mlirfuse.load(tmp_path / "pkg", weights=state)
    halved = TinyBlock(32, 2, 16).eval()
    halved.load_state_dict(state)
    with torch.no_grad():
        torch.testing.assert_close(run(x), halved(x))
    with pytest.raises(InputMismatchError, match=r"compiled for shape \[2, 8, 32\].*got shape \[2, 9, 32\]"):
        run(torch.randn(2, 9, 32))
    with pytest.raises(InputMismatchError, match="float64"):
        run(x.double())
    wrong = dict(state)
    name = next(k for k in wrong if k.endswith("weight"))
    wrong[name] = torch.zeros(3)
    with pytest.raises(PackageError, match=f"{name}.*in the weights"):
        mlirfuse.load(tmp_path / "pkg", weights=wrong)
    with pytest.raises(PackageError, match="the weights have no param"):
        mlirfuse.load(tmp_path / "pkg", weights={})


def test_an_altered_cubin_or_kernel_is_refused(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU()).eval()
    x = torch.randn(4, 16)
    cm = mlirfuse.compile(model, (x,))
    manifest = mlirfuse.save(cm, tmp_path / "pkg", targets=("sm_90",))
    cubins = sorted((tmp_path / "pkg" / "cubins" / "sm_90").glob("*.cubin"))
    assert len(cubins) == len(manifest["kernels"]) >= 1
    for k in manifest["kernels"].values():
        assert k["targets"]["sm_90"]["registers"] > 0 and k["canonical_hash"]
    mlirfuse.load(tmp_path / "pkg", weights=model)  # as written: loads
    data = bytearray(cubins[0].read_bytes())
    data[len(data) // 2] ^= 0xFF
    cubins[0].write_bytes(bytes(data))
    with pytest.raises(PackageError, match=rf"{cubins[0].name} was altered or truncated"):
        mlirfuse.load(tmp_path / "pkg", weights=model)


def test_kernels_equal_but_for_their_name_share_one_compile_and_cubin(tmp_path):
    from mlirfuse.runtime.aot import compile_key

    model, ids = _gpt2()
    cm = mlirfuse.compile(model, (ids,), aot_targets=("sm_90",))
    # GPT-2's final layer norm is the blocks' but for an identity view ([2, 8, 32] -> [-1, 8, 32]): two kernels
    # in the IR, one source but the name.
    distinct = {compile_key(k, 90) for k in cm.kernels.values()}
    assert cm.aot.started == len(distinct) < len(cm.kernels)
    manifest = mlirfuse.save(cm, tmp_path / "pkg", targets=("sm_90",))
    assert cm.aot.started == len(distinct)
    summary = (tmp_path / "pkg" / "summary.txt").read_text()
    cubins = tmp_path / "pkg" / "cubins" / "sm_90"
    shared = {name: k["targets"]["sm_90"] for name, k in manifest["kernels"].items()
              if k["targets"]["sm_90"]["function"] != name}
    assert len(shared) == len(cm.kernels) - len(distinct)
    for name, target in shared.items():
        function = target["function"]
        assert (cubins / f"{name}.cubin").read_bytes() == (cubins / f"{function}.cubin").read_bytes()
        assert cm.kernels[name].renamed(function).source == cm.kernels[function].source
        assert target["compile_seconds"] == 0 and f"{name} | persistent-reduction | 1 | " in summary
        assert f"@{function}'s cubin" in summary
    for name, k in manifest["kernels"].items():
        if name not in shared:
            assert {"ast", "llir", "cubin"} <= k["targets"]["sm_90"]["compile_stages"].keys()
    with torch.no_grad():
        got = mlirfuse.load(tmp_path / "pkg", weights=model)(ids).last_hidden_state
        torch.testing.assert_close(got, model(ids).last_hidden_state)


def test_broken_packages_are_refused_with_the_reason(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).eval()
    cm = mlirfuse.compile(model, (torch.randn(2, 8),))
    pkg = tmp_path / "pkg"
    mlirfuse.save(cm, pkg, targets=())
    with pytest.raises(PackageError, match="not empty"):
        mlirfuse.save(cm, pkg, targets=())
    with pytest.raises(PackageError, match="sm_<arch>"):
        mlirfuse.save(cm, tmp_path / "other", targets=("hopper",))
    pickled = next((pkg / "kernels").glob("*.pkl"))
    pickled.write_bytes(pickled.read_bytes()[:-10])  # truncated
    with pytest.raises(PackageError, match="altered or truncated"):
        mlirfuse.load(pkg, weights=model)
    pickled.unlink()
    with pytest.raises(PackageError, match="is missing"):
        mlirfuse.load(pkg, weights=model)
    manifest = pkg / "manifest.json"
    manifest.write_text(manifest.read_text()[:100])
    with pytest.raises(PackageError, match="not valid JSON"):
        mlirfuse.load(pkg, weights=model)
    with pytest.raises(PackageError, match="no manifest.json"):
        mlirfuse.load(tmp_path, weights=model)


def test_a_package_of_another_version_is_refused(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).eval()
    pkg = tmp_path / "pkg"
    mlirfuse.save(mlirfuse.compile(model, (torch.randn(2, 8),)), pkg, targets=())
    manifest = json.loads((pkg / "manifest.json").read_text())
    manifest["versions"] = manifest["versions"].replace("triton ", "triton 0.0.0-")
    (pkg / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(PackageError, match="written by another mlirfuse, torch, torch-mlir or Triton"):
        mlirfuse.load(pkg, weights=model)


def test_mlirfuse_compile_writes_a_package_the_api_loads(tmp_path, monkeypatch, capsys):
    from mlirfuse.tools.main import main

    (tmp_path / "pkgmodel.py").write_text(
        "import torch\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.SiLU(), torch.nn.Linear(16, 8))\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["compile", "pkgmodel:make", "--example", "3x8", "--target", "", "-o", str(tmp_path / "out")]) == 0
    assert "mlirfuse package of Sequential" in capsys.readouterr().out
    import pkgmodel

    model = pkgmodel.make().eval()
    x = torch.randn(3, 8)
    with torch.no_grad():
        torch.testing.assert_close(mlirfuse.load(tmp_path / "out", weights=model)(x), model(x))
    assert main(["compile", "pkgmodel:make", "--example", "3xq", "-o", str(tmp_path / "bad")]) == 1
    assert "dims are integers" in capsys.readouterr().err
    assert main(["compile", "pkgmodel:make", "--example", "3x8", "--target", "sm_90,hopper", "-o", str(tmp_path / "bad")]) == 1
    assert "a target is sm_<arch> (sm_80, sm_90), got 'hopper'" in capsys.readouterr().err
    assert main(["compile", "pkgmodel:nothing", "--example", "3x8", "-o", str(tmp_path / "bad")]) == 1
    assert "cannot find pkgmodel:nothing" in capsys.readouterr().err


def test_cubins_are_compiled_for_the_launches_a_dry_run_records(tmp_path):
    """Each kernel's cubin is compiled for its launches' specialization (aligned pointers, sizes and strides
    divisible by 16, ones as constants) and blocks, as Triton's JIT would compile them on the GPU; loading
    registers it, and Triton can load it from the package's files (no GPU needed for that part)."""
    model = torch.nn.Sequential(torch.nn.LayerNorm(32), torch.nn.Linear(32, 64), torch.nn.GELU()).eval()
    x = torch.randn(4, 8, 32)
    cm = mlirfuse.compile(model, (x,))
    manifest = mlirfuse.save(cm, tmp_path / "pkg", targets=("sm_90",))
    assert manifest["dry_runs"]["sm_90"] == {"stopped": None, "specialized_kernels": len(manifest["kernels"])}
    for name, entry in manifest["kernels"].items():
        launch = entry["targets"]["sm_90"]["launch"]
        assert launch["launches"] == launch["recorded"] == entry["launches_per_call"]
        kinds = [kind for kind, _ in launch["specialization"]]
        assert kinds[0].startswith("*") and launch["specialization"][0][1] == "D"  # a fresh buffer: aligned
        assert "constexpr" in kinds  # a contiguous tensor's last stride, 1
        assert launch["launch_kwargs"]["enable_fp_fusion"] is True and "num_warps" in launch["launch_kwargs"]
    mlirfuse.load(tmp_path / "pkg", weights=model)
    for name in manifest["kernels"]:
        kernel = cm.kernels[name]
        binary = binaries.lookup(name, source_key(kernel.source), 90)
        compiled = binary.bound(load(kernel, interpret=False)).compiled()
        assert compiled.name == name
        assert compiled.asm["cubin"] == (tmp_path / "pkg" / "cubins" / "sm_90" / f"{name}.cubin").read_bytes()


def test_a_cubin_takes_only_launches_of_its_specialization():
    t = torch.empty(64)
    spec = binaries.specialization([t, 32, 1, 0.5])
    assert [kind for kind, _ in spec] == ["*fp32", "i32", "constexpr", "fp32"]
    binary = binaries.Binary(None, None, {"specialization": spec, "launch_kwargs": {"XBLOCK": 64, "num_warps": 4}})
    kwargs = {"XBLOCK": 64, "num_warps": 4}
    assert binary.matches([torch.empty(64), 48, 1, 2.0], kwargs)
    assert not binary.matches([t[1:], 32, 1, 0.5], kwargs)  # 4 bytes in: not 16-byte aligned
    assert not binary.matches([t, 33, 1, 0.5], kwargs)  # not divisible by 16
    assert not binary.matches([t, 32, 2, 0.5], kwargs)  # a 1 was compiled in as a constant
    assert not binary.matches([t, 32, 1, 0.5], {"XBLOCK": 128, "num_warps": 4})
    assert not binary.matches([t.double(), 32, 1, 0.5], kwargs)
    args = binaries.compile_args(["p", "n", "s", "c"], spec, kwargs)
    assert args["signature"] == {"p": "*fp32", "n": "i32", "s": "constexpr", "c": "fp32", "XBLOCK": "constexpr"}
    assert args["constexprs"] == {"s": 1, "XBLOCK": 64}
    assert args["options"] == {"num_warps": 4}
    assert args["attrs"] == [[0, [["tt.divisibility", 16]]], [1, [["tt.divisibility", 16]]]]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_a_loaded_package_launches_its_cubins(tmp_path, monkeypatch):
    monkeypatch.setenv("MLIRFUSE_CHECK_BOUNDS", "0")  # launches as users run them
    model, ids = _gpt2()
    model, ids = model.cuda(), ids.cuda()
    major, minor = torch.cuda.get_device_capability()
    cm = mlirfuse.compile(model, (ids,))
    manifest = mlirfuse.save(cm, tmp_path / "pkg", targets=(f"sm_{major}{minor}",))
    assert manifest["dry_runs"][f"sm_{major}{minor}"]["stopped"] is None
    run = mlirfuse.load(tmp_path / "pkg", weights=model)
    before = dict(binaries.STATS)
    with torch.no_grad():
        torch.testing.assert_close(run(ids).last_hidden_state, model(ids).last_hidden_state)
    assert binaries.STATS["jit"] == before["jit"]
    assert binaries.STATS["cubin"] - before["cubin"] == cm.stats["launches"]


def test_a_dynamic_shapes_package_serves_every_size_in_its_ranges(tmp_path, monkeypatch):
    from torch.export import Dim

    model = TinyBlock(32, 2, 16).eval()
    x = torch.randn(2, 8, 32)
    cm = mlirfuse.compile(model, (x,), dynamic_shapes=({0: Dim("batch", max=8), 1: Dim("seq", min=2, max=15)},))
    manifest = mlirfuse.save(cm, tmp_path / "pkg", targets=("sm_90",))
    (dims,) = manifest["input_dims"]
    assert [d[1:] if isinstance(d, list) else d for d in dims] == [[0, 8], [2, 15], 32]
    dynamic = [name for name, k in cm.kernels.items() if k.dynamic is not None]
    assert dynamic
    for name in dynamic:  # compiled for any size: no divisibility of sizes or strides assumed
        spec = manifest["kernels"][name]["targets"]["sm_90"]["launch"]["specialization"]
        assert all(attr != "D" for kind, attr in spec if kind in ("i32", "i64"))
    _no_compiling(monkeypatch)
    run = mlirfuse.load(tmp_path / "pkg", weights=model)
    with torch.no_grad():
        for shape in [(1, 7, 32), (4, 15, 32), (3, 2, 32)]:
            y = torch.randn(shape)
            torch.testing.assert_close(run(y), model(y))
    with pytest.raises(InputMismatchError, match=r"dim 1 \(s\d+\) is 16, outside its range \[2, 15\]"):
        run(torch.randn(2, 16, 32))
    with pytest.raises(InputMismatchError, match=r"dim 2 is 32 in the package"):
        run(torch.randn(2, 8, 31))
    with pytest.raises(InputMismatchError, match="float64"):
        run(torch.randn(2, 8, 32, dtype=torch.float64))


def test_dynamic_dims_bind_symbols_across_inputs():
    from mlirfuse.package import dims_mismatch

    dims = [[["s0", 1, None], 4], [["s0", 1, None], ["2*s0", None, None]]]
    metas = [((3, 4), torch.float32, torch.device("cpu"))] * 2
    assert dims_mismatch(dims, metas, [torch.empty(5, 4), torch.empty(5, 10)]) is None
    assert "s0, 5 in an earlier dim, got 6" in dims_mismatch(dims, metas, [torch.empty(5, 4), torch.empty(6, 12)])
    assert "2*s0 = 10, got 11" in dims_mismatch(dims, metas, [torch.empty(5, 4), torch.empty(5, 11)])
    assert "outside its range [1, None]" in dims_mismatch(dims, metas, [torch.empty(0, 4), torch.empty(0, 0)])


def test_a_cubin_for_any_size_takes_divisible_sizes_and_ones():
    t = torch.empty(64)
    spec = [["*fp32", "D"], ["i32", ""], ["i32", ""]]
    binary = binaries.Binary(None, None, {"specialization": spec, "launch_kwargs": {}})
    assert binary.matches([t, 32, 1], {}) and binary.matches([t, 7, 5], {})
    assert not binary.matches([t[1:], 7, 5], {})  # the pointer's alignment is still assumed


def test_mlirfuse_compile_dynamic_writes_a_package_for_every_batch(tmp_path, monkeypatch, capsys):
    from mlirfuse.tools.main import main

    (tmp_path / "dynmodel.py").write_text(
        "import torch\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.SiLU(), torch.nn.LayerNorm(16))\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["compile", "dynmodel:make", "--example", "3x8", "--dynamic", "0.0=rows:1:64", "--target", "",
                 "-o", str(tmp_path / "out")]) == 0
    import dynmodel

    model = dynmodel.make().eval()
    run = mlirfuse.load(tmp_path / "out", weights=model)
    with torch.no_grad():
        for rows in (1, 5, 64):
            x = torch.randn(rows, 8)
            torch.testing.assert_close(run(x), model(x))
    with pytest.raises(InputMismatchError, match=r"outside its range \[1, 64\]"):
        run(torch.randn(65, 8))
    for bad, why in [("0.0", "expected INPUT.DIM=NAME"), ("1.0=rows", "there are 1 example inputs"),
                     ("0.0=2x", "is not a name")]:
        assert main(["compile", "dynmodel:make", "--example", "3x8", "--dynamic", bad, "--target", "",
                     "-o", str(tmp_path / "bad")]) == 1
        assert why in capsys.readouterr().err
