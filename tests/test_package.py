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
