"""Each distinct layer compiled once (frontend/layers.py): found before export, called per occurrence.

Every model is compiled with deduplication on and off; both must match eager,
and the IR must show the shared layer as one private function called once per
occurrence. The refusal cases compile whole, and `cm.layers` says why.
"""

from __future__ import annotations

import copy
import re

import pytest
import torch
from torch import nn

import mlirfuse
from mlirfuse.models import MLP

TOL = dict(rtol=1e-4, atol=1e-5)


class Block(MLP):
    """models.MLP (a pre-LN MLP block with a residual: enough ops to be worth a call) under the name the
    assertions read (@layer_Block)."""


class Stack(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.head = nn.Linear(32, 8)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def calls_in(mlir: str) -> dict[str, int]:
    """Function name -> how many `func.call`s of it the IR has."""
    found: dict[str, int] = {}
    for name in re.findall(r"\bcall @(\w+)\(", mlir):
        found[name] = found.get(name, 0) + 1
    return found


def compile_both(model, args, kwargs=None):
    """The model compiled with deduplication on and off, both checked against eager on the example."""
    kwargs = kwargs or {}
    with torch.no_grad():
        expected = model(*args, **kwargs)
    on = mlirfuse.compile(model, args, kwargs, dedup_layers=True)
    off = mlirfuse.compile(model, args, kwargs, dedup_layers=False)
    for cm in (on, off):
        torch.testing.assert_close(cm(*args, **kwargs), expected, **TOL)
    assert "layer_classes" not in off.stats and not calls_in(off.mlir)
    return on, off


def test_module_list_stack_compiles_one_block_called_per_layer():
    torch.manual_seed(0)
    model = Stack([Block() for _ in range(4)]).eval()
    x = torch.randn(2, 8, 32)
    on, off = compile_both(model, (x,))

    assert on.stats["layer_classes"] == 1 and on.stats["layer_calls"] == 4
    assert len(re.findall(r"func\.func private @layer_Block\(", on.mlir)) == 1
    assert calls_in(on.mlir) == {"layer_Block": 4}
    assert "4 occurrences of 1 class" in str(on.layers)
    # The same kernels run per layer: the results are those of the program compiled whole.
    torch.testing.assert_close(on(x), off(x), rtol=0, atol=0)
    # Stats count a layer's work per call.
    assert on.stats["aten_ops"] == off.stats["aten_ops"]
    assert on.stats["launches"] == 4 * len(re.findall(r"fusion.launch", on.mlir.split("@layer_Block(")[-1])) + 1
    # Other inputs of the example's shapes reuse the program.
    y = torch.randn(2, 8, 32)
    with torch.no_grad():
        torch.testing.assert_close(on(y), model(y), **TOL)


class PositionedBlock(nn.Module):
    """A block handed position ids it never reads (as a `transformers` decoder layer is, rotary done outside)."""

    def __init__(self):
        super().__init__()
        self.mlp = Block()

    def forward(self, x, position_ids):
        return self.mlp(x)


class PositionedStack(Stack):
    def forward(self, x):
        position_ids = (torch.arange(x.shape[1]) + 1).unsqueeze(0)
        for block in self.blocks:
            x = block(x, position_ids)
        return self.head(x)


def test_arguments_a_layer_never_reads_are_dropped():
    """Issue 22: the unread position ids are no longer passed, so nothing computes them (one launch less)."""
    torch.manual_seed(0)
    model = PositionedStack([PositionedBlock() for _ in range(2)]).eval()
    x = torch.randn(2, 8, 32)
    on, off = compile_both(model, (x,))
    assert calls_in(on.mlir) == {"layer_PositionedBlock": 2}
    assert "arange" not in on.mlir.split("func.func @forward")[1].split("call @")[0]
    assert on.stats["launches"] == off.stats["launches"]


class NormedStack(Stack):
    """Outer code the frontend decomposes (vector_norm) around the blocks, reading one block's weight itself."""

    def forward(self, x):
        x = x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        for block in self.blocks:
            x = block(x)
        return self.head(x * self.blocks[1].ln.weight)


def test_outer_graph_is_decomposed_without_the_layers_state(monkeypatch):
    """The outer program is decomposed holding only the state its own ops read (not every layer's:
    that made its re-trace grow with depth); the layers' parameters are bound per call after import."""
    from mlirfuse.frontend import layers

    decomposed = []
    run_decompositions = torch.export.ExportedProgram.run_decompositions
    monkeypatch.setattr(torch.export.ExportedProgram, "run_decompositions",
                        lambda self, *a, **k: decomposed.append(self) or run_decompositions(self, *a, **k))
    torch.manual_seed(0)
    model = NormedStack([Block() for _ in range(3)]).eval()
    on, _ = compile_both(model, (torch.randn(2, 8, 32),))
    assert calls_in(on.mlir) == {"layer_Block": 3}

    (outer,) = [p for p in decomposed if any(str(n.target).startswith("mlirfuse.layer_") for n in p.graph.nodes)]
    read = {s.target for s in outer.graph_signature.input_specs if s.kind.name == "PARAMETER"}
    assert read == {"head.weight", "head.bias", "blocks.1.ln.weight"}
    # Its composite ops were still decomposed before import.
    imported = layers.import_with_layers(model, (torch.randn(2, 8, 32),), {})
    forward = str(imported.module).split("func.func @forward")[1].split("func.func private")[0]
    assert "linalg_vector_norm" not in forward and "torch.aten.sum.dim_IntList" in forward
    # Every parameter bound once, by its own name: blocks.1.ln.weight is the outer graph's and its layer's.
    bound = [what for kind, what in imported.bindings if kind == "param"]
    assert sorted(bound) == sorted(name for name, _ in model.named_parameters())


def test_option_and_environment_turn_it_off(monkeypatch):
    model = Stack([Block() for _ in range(2)]).eval()
    x = torch.randn(2, 8, 32)
    monkeypatch.setenv("MLIRFUSE_NO_LAYER_DEDUP", "1")
    assert not calls_in(mlirfuse.compile(model, (x,)).mlir)
    monkeypatch.setenv("MLIRFUSE_NO_LAYER_DEDUP", "0")
    assert calls_in(mlirfuse.compile(model, (x,)).mlir) == {"layer_Block": 2}


def test_calls_of_other_shapes_are_another_layer():
    """One block class called at two sequence lengths: two functions, each called twice."""

    class Pyramid(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(4)])

        def forward(self, x):
            for i, block in enumerate(self.blocks):
                if i == 2:
                    x = x[:, ::2]
                x = block(x)
            return x

    on, _ = compile_both(Pyramid().eval(), (torch.randn(2, 8, 32),))
    assert calls_in(on.mlir) == {"layer_Block": 2, "layer_Block_1": 2}
    assert on.stats["layer_classes"] == 2


def test_python_attributes_choosing_other_ops_make_other_classes():
    """Blocks whose attribute picks another path: grouped by the ops they ran, never one program for both."""

    class Flipping(Block):
        def __init__(self, flip: bool):
            super().__init__()
            self.flip = flip

        def forward(self, x):
            y = super().forward(x)
            return y.flip(-1) if self.flip else y

    model = Stack([Flipping(i % 2 == 1) for i in range(4)]).eval()
    on, _ = compile_both(model, (torch.randn(2, 8, 32),))
    assert sorted(calls_in(on.mlir).values()) == [2, 2]


def test_hooked_block_is_refused_and_the_others_shared():
    model = Stack([Block() for _ in range(4)]).eval()
    model.blocks[2].register_forward_hook(lambda module, args, out: None)
    on, _ = compile_both(model, (torch.randn(2, 8, 32),))
    assert calls_in(on.mlir) == {"layer_Block": 3}
    assert ("blocks.2", "it has a forward hook (a compiled layer would not run it)") in on.layers.refusals
    assert "refused blocks.2: it has a forward hook" in str(on.layers)


class Counting(Block):
    """Writes its own buffer in place: the write-back belongs to the caller's program."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        return super().forward(x)


def test_block_mutating_a_buffer_is_refused():
    model = Stack([Counting() for _ in range(3)]).eval()
    eager = copy.deepcopy(model)
    x = torch.randn(2, 8, 32)
    cm = mlirfuse.compile(model, (x,))
    assert "layer_classes" not in cm.stats and not calls_in(cm.mlir)
    paths = {path: why for path, why in cm.layers.refusals}
    assert paths.keys() >= {"blocks.0", "blocks.1", "blocks.2"}
    assert "writes a tensor it did not create" in paths["blocks.0"] and "'calls'" in paths["blocks.0"]
    # Compiling ran nothing on the model's own tensors.
    assert all(b.calls.item() == 0 for b in model.blocks)
    with torch.no_grad():
        torch.testing.assert_close(cm(x), eager(x), **TOL)
    assert [b.calls.item() for b in model.blocks] == [b.calls.item() for b in eager.blocks] == [1, 1, 1]


def test_blocks_of_differing_shapes_are_refused():
    class Wide(Block):
        def __init__(self, hidden):
            super().__init__(hidden=hidden)

    model = Stack([Wide(64), Wide(96), Wide(128)]).eval()
    on, _ = compile_both(model, (torch.randn(2, 8, 32),))
    assert "layer_classes" not in on.stats and not calls_in(on.mlir)
    assert on.layers.refusals == [("blocks", "its Wide layers differ in parameter or buffer shapes: no two are one layer")]


def test_block_returning_its_input_is_refused():
    class Both(Block):
        def forward(self, x):
            return super().forward(x), x

    class Pairs(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Both() for _ in range(3)])

        def forward(self, x):
            outs = []
            for block in self.blocks:
                x, skip = block(x)
                outs.append(skip)
            return x, torch.stack(outs)

    on, _ = compile_both(Pairs().eval(), (torch.randn(2, 8, 32),))
    assert not calls_in(on.mlir)
    assert ("blocks.0", "it returns its input 0 (an alias a call would hide)") in on.layers.refusals


def test_dynamic_shapes_turn_it_off():
    model = Stack([Block() for _ in range(2)]).eval()
    batch = torch.export.Dim("batch", min=2, max=16)
    cm = mlirfuse.compile(model, (torch.randn(2, 8, 32),), dynamic_shapes=({0: batch},))
    assert not calls_in(cm.mlir)
    assert "dynamic_shapes" in str(cm.layers)


transformers = pytest.importorskip("transformers")


def padded(rows: int = 2, seq: int = 8) -> tuple[tuple, dict]:
    """Token ids and an attention mask padding part of the first row, as keyword argument."""
    ids = torch.randint(0, 100, (rows, seq))
    mask = torch.ones(rows, seq, dtype=torch.long)
    mask[0, :3] = 0
    return (ids,), {"attention_mask": mask}


def test_gpt2_blocks_compile_once():
    config = transformers.GPT2Config(n_layer=3, n_head=4, n_embd=32, n_positions=16, vocab_size=100, use_cache=False)
    torch.manual_seed(0)
    model = transformers.GPT2Model(config).eval()
    on, _ = compile_both(model, *padded())
    assert calls_in(on.mlir) == {"layer_GPT2Block": 3}
    assert on.stats["layer_classes"] == 1
    # Parameters stay bound to the module's own tensors, every layer's.
    bound = {what for kind, what in on.imported.bindings if kind == "param"}
    assert bound == {name for name, _ in model.named_parameters()}


def test_bert_encoder_layers_compile_once():
    config = transformers.BertConfig(
        num_hidden_layers=3, hidden_size=32, num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=16, vocab_size=100,
    )
    torch.manual_seed(0)
    model = transformers.BertModel(config, add_pooling_layer=False).eval()
    on, _ = compile_both(model, *padded())
    assert calls_in(on.mlir) == {"layer_BertLayer": 3}
    assert on.stats["layer_calls"] == 3
