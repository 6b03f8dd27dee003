"""A model zoo from `transformers` (issues 13, 22): tiny configs, random weights, offline.

Each architecture with attention is compiled with the library's default
attention (`sdpa`) and with `attn_implementation="eager"`, `use_cache=False`,
grouped-query attention where the architecture has it, and a padding
`attention_mask` passed as a keyword argument (left padding for decoders,
right padding for encoders); the conv net, which has no attention, once.
The main output must match eager at f32 tolerances. Each model's
`cm.stats` is printed (`pytest -s tests/test_zoo.py`); `bench/zoo.py`
counts their device calls against Inductor's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import mlirfuse
from helpers import unfused_ops

transformers = pytest.importorskip("transformers")

VOCAB, BATCH, SEQ = 100, 2, 8
TOL = dict(rtol=1e-4, atol=1e-5)
# One tiny shape for every architecture: 2 layers, hidden 32, 4 heads of 8, MLP 64.
LAYERS, HIDDEN, HEADS, FFN, POSITIONS = 2, 32, 4, 64, 16
SIZES = dict(num_hidden_layers=LAYERS, hidden_size=HIDDEN, intermediate_size=FFN, max_position_embeddings=POSITIONS)
MHA = dict(SIZES, num_attention_heads=HEADS)
# Grouped-query attention: 2 key/value heads shared by 4 query heads.
GQA = dict(MHA, num_key_value_heads=2)


# name -> (model class, config class, config fields); every config also gets the vocabulary,
# use_cache=False and the attention implementation under test.
ARCHITECTURES = {
    "gpt2": ("GPT2Model", "GPT2Config", dict(n_layer=LAYERS, n_head=HEADS, n_embd=HIDDEN, n_positions=POSITIONS)),
    "llama": ("LlamaModel", "LlamaConfig", GQA),
    "mistral": ("MistralModel", "MistralConfig", GQA),
    "qwen2": ("Qwen2Model", "Qwen2Config", GQA),
    "phi": ("PhiModel", "PhiConfig", MHA),
    "gpt_neox": ("GPTNeoXModel", "GPTNeoXConfig", MHA),
    "opt": (
        "OPTModel",
        "OPTConfig",
        dict(
            num_hidden_layers=LAYERS, hidden_size=HIDDEN, ffn_dim=FFN, num_attention_heads=HEADS,
            max_position_embeddings=POSITIONS, word_embed_proj_dim=HIDDEN,
        ),
    ),
    "bert": ("BertModel", "BertConfig", MHA),
    "roberta": ("RobertaModel", "RobertaConfig", dict(MHA, pad_token_id=1)),
    "distilbert": (
        "DistilBertModel",
        "DistilBertConfig",
        dict(n_layers=LAYERS, dim=HIDDEN, hidden_dim=FFN, n_heads=HEADS, max_position_embeddings=POSITIONS),
    ),
    "t5": (
        "T5Model",
        "T5Config",
        dict(num_layers=LAYERS, d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=FFN, num_heads=HEADS, decoder_start_token_id=0),
    ),
    "bart": (
        "BartModel",
        "BartConfig",
        dict(
            encoder_layers=LAYERS, decoder_layers=LAYERS, d_model=HIDDEN, encoder_ffn_dim=FFN, decoder_ffn_dim=FFN,
            encoder_attention_heads=HEADS, decoder_attention_heads=HEADS, max_position_embeddings=POSITIONS,
        ),
    ),
    "vit": (
        "ViTModel",
        "ViTConfig",
        dict(MHA, image_size=16, patch_size=8),
    ),
    # Parallel attention and MLP off one layer norm pair, fused qkv projection, 2 key/value heads for 4.
    "falcon": (
        "FalconModel",
        "FalconConfig",
        dict(
            num_hidden_layers=LAYERS, hidden_size=HIDDEN, ffn_hidden_size=FFN, num_attention_heads=HEADS,
            num_kv_heads=2, new_decoder_architecture=True, max_position_embeddings=POSITIONS,
        ),
    ),
    # Sparse MoE: 4 experts, top-2 routing. The experts run as `transformers`' default, grouped_mm (tokens
    # sorted by expert; on CPU in f32 its `grouped_mm_fallback` custom op); `eager`'s loop over the experts
    # hit is data-dependent and does not export.
    "mixtral": (
        "MixtralModel",
        "MixtralConfig",
        dict(GQA, num_local_experts=4, num_experts_per_tok=2, experts_implementation="grouped_mm"),
    ),
    # ResNet with basic blocks: conv-BN-ReLU stem, max pool, two stages (the second strided, with a 1x1
    # projection shortcut), global average pool.
    "resnet": (
        "ResNetModel",
        "ResNetConfig",
        dict(embedding_size=16, hidden_sizes=[16, HIDDEN], depths=[1, 1], layer_type="basic"),
    ),
}
ENCODER_DECODER = {"t5", "bart"}
LEFT_PADDED = {"gpt2", "llama", "mistral", "qwen2", "phi", "gpt_neox", "opt", "falcon", "mixtral"}
IMAGES = {"vit", "resnet"}  # pixel_values [BATCH, 3, 16, 16] in place of token ids and a mask
ATTENTION_FREE = {"resnet"}  # compiled once, under the name of eager attention
# Falcon's key and value are `qkv[:, :, :, [-2]]` and `qkv[:, :, :, [-1]]`: index tensors, per layer.
LIFTED_CONSTANTS = {"falcon": [[-2], [-1]] * LAYERS}
CASES = [(name, attn) for name in ARCHITECTURES for attn in ("sdpa", "eager") if name not in ATTENTION_FREE or attn == "eager"]


def build(name: str, attn: str) -> torch.nn.Module:
    """The architecture with random weights; `attn` is ignored where it has no attention."""
    model_class, config_class, fields = ARCHITECTURES[name]
    attention = {} if name in ATTENTION_FREE else {"attn_implementation": attn}
    config = getattr(transformers, config_class)(**fields, vocab_size=VOCAB, use_cache=False, **attention)
    model = getattr(transformers, model_class)(config, **({"add_pooling_layer": False} if name == "vit" else {}))
    assert name in ATTENTION_FREE or model.config._attn_implementation == attn
    with torch.no_grad():
        # Batch norm statistics and affine parameters drawn, so that no inference batch norm is the identity.
        for bn in (m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)):
            bn.running_mean.normal_(0, 0.2)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_(0, 0.2)
    return model.eval()


def example(name: str, row: int = 0, padding: int = 3) -> tuple[tuple, dict]:
    """(positional inputs, keyword inputs): token ids and a mask padding `row`, or an image."""
    if name in IMAGES:
        return (torch.randn(BATCH, 3, 16, 16),), {}
    ids = torch.randint(2, VOCAB, (BATCH, SEQ))
    mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    if name in LEFT_PADDED:
        mask[row, :padding] = 0
    else:
        mask[row, SEQ - padding :] = 0
    kwargs = {"attention_mask": mask}
    if name in ENCODER_DECODER:
        kwargs["decoder_input_ids"] = torch.randint(2, VOCAB, (BATCH, SEQ // 2))
    return (ids,), kwargs


def non_persistent_buffers(model: torch.nn.Module) -> set[str]:
    return {
        f"{prefix}.{name}" if prefix else name
        for prefix, module in model.named_modules()
        for name in module._non_persistent_buffers_set
    }


@pytest.mark.parametrize(("name", "attn"), CASES)
def test_zoo_matches_eager(name, attn):
    model = build(name, attn)
    args, kwargs = example(name)
    cm = mlirfuse.compile(model, args, kwargs)
    print(f"\n{name} ({attn}): {cm.stats}")

    # Buffers (rotary inv_freq, position_ids, ...) bind to the module's own tensors, with
    # nothing copied into the program: the non-persistent ones as well as the rest.
    bound = {what for kind, what in cm.imported.bindings if kind == "buffer"}
    assert bound == {buffer for buffer, _ in model.named_buffers()}
    # The only tensor constants are those torch.export lifts from the model's code.
    constants = [what.tolist() for kind, what in cm.imported.bindings if kind == "constant"]
    assert constants == LIFTED_CONSTANTS.get(name, [])
    if name in {"llama", "mistral", "qwen2", "phi", "gpt_neox", "bert", "roberta", "distilbert", "falcon", "mixtral"}:
        assert non_persistent_buffers(model) & bound

    # The example, then other values of the same shapes: nothing (the mask least of all)
    # may have been specialized on the example's values.
    for args, kwargs in [(args, kwargs), example(name, row=1, padding=5)]:
        got = cm(*args, **kwargs)
        with torch.no_grad():
            expected = model(*args, **kwargs)
        torch.testing.assert_close(got.last_hidden_state, expected.last_hidden_state, **TOL)
    assert cm.stats["launches"] > 0


@pytest.mark.parametrize("name", ["opt", "roberta"])
def test_position_ids_cumsum_runs_in_a_scan_kernel(name):
    """Issue 22: the cumsum of OPT's position ids (from the mask) and RoBERTa's (from the ids) was an ATen call.

    It is now a scan kernel with its epilogue: OPT 20 -> 19 device calls, RoBERTa 23 -> 21.
    """
    model = build(name, "sdpa")
    args, kwargs = example(name)
    cm = mlirfuse.compile(model, args, kwargs)
    assert not [op for op in unfused_ops(cm) if "cumsum" in op], unfused_ops(cm)
    assert any(k.kind == "scan" and "tl.cumsum" in k.source for k in cm.kernels.values())
    for args, kwargs in [(args, kwargs), example(name, row=1, padding=5)]:
        with torch.no_grad():
            expected = model(*args, **kwargs)
        torch.testing.assert_close(cm(*args, **kwargs).last_hidden_state, expected.last_hidden_state, **TOL)


FRESH_PROCESS = """
import sys
import torch
import transformers
from transformers.models.bert import modeling_bert
from transformers.models.gpt2 import modeling_gpt2
from transformers.models.llama import modeling_llama

sys.path.insert(0, sys.argv[1])
from test_zoo import TOL, build, example  # mlirfuse comes in only now

import mlirfuse

for name in ("gpt2", "bert", "llama"):
    model = build(name, "sdpa")
    args, kwargs = example(name)
    got = mlirfuse.compile(model, args, kwargs)(*args, **kwargs)
    torch.testing.assert_close(got.last_hidden_state, model(*args, **kwargs).last_hidden_state, **TOL)
print("ok")
"""


def test_transformers_imported_first_in_a_fresh_process():
    """Issue 13's acceptance: `import transformers` first, no TRITON_INTERPRET; GPT-2, BERT, Llama match eager."""
    tests = Path(__file__).resolve().parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tests.parent), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, str(tests)], capture_output=True, text=True, env=env, timeout=600
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-4000:]
