"""Compile a `transformers` model with mlirfuse and print the fusion report.

    python examples/transformers_report.py                  # GPT-2, 2 layers
    python examples/transformers_report.py --arch llama --layers 1

A tiny configuration with random weights: nothing is downloaded. The model
is compiled with `explain` on, so the report ends with each kernel's
neighbours left unfused and why; then the compiled model runs (Triton's
interpreter on CPU) and is compared with eager PyTorch. Exit code 1 on a
mismatch. tests/test_examples.py runs it in CI.
"""

from __future__ import annotations

import argparse
import sys

import torch
import transformers

import mlirfuse
from mlirfuse.tools.main import fusion_report

VOCAB, BATCH, SEQ, HIDDEN, HEADS = 100, 2, 8, 32, 4

ARCHITECTURES = {
    "gpt2": lambda layers: transformers.GPT2Model(
        transformers.GPT2Config(n_layer=layers, n_embd=HIDDEN, n_head=HEADS, n_positions=16, vocab_size=VOCAB, use_cache=False)
    ),
    "llama": lambda layers: transformers.LlamaModel(
        transformers.LlamaConfig(
            num_hidden_layers=layers, hidden_size=HIDDEN, num_attention_heads=HEADS, num_key_value_heads=2,
            intermediate_size=64, max_position_embeddings=16, vocab_size=VOCAB, use_cache=False,
        )
    ),
    "bert": lambda layers: transformers.BertModel(
        transformers.BertConfig(
            num_hidden_layers=layers, hidden_size=HIDDEN, num_attention_heads=HEADS, intermediate_size=64,
            max_position_embeddings=16, vocab_size=VOCAB,
        )
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", choices=sorted(ARCHITECTURES), default="gpt2")
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    model = ARCHITECTURES[args.arch](args.layers).eval()
    ids = torch.randint(2, VOCAB, (BATCH, SEQ))
    mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    mask[0, :3] = 0  # one padded row: the mask is an input, not a constant

    cm = mlirfuse.compile(model, (ids,), {"attention_mask": mask}, options={"explain": True})
    print(f"{type(model).__name__}: {args.layers} layer(s), hidden {HIDDEN}, batch {BATCH} x {SEQ} tokens\n")
    print(fusion_report(cm))

    got = cm(ids, attention_mask=mask).last_hidden_state
    with torch.no_grad():
        want = model(ids, attention_mask=mask).last_hidden_state
    err = (got - want).abs().max().item()
    ok = torch.allclose(got, want, rtol=1e-4, atol=1e-5)
    print(f"\nmax abs error vs eager PyTorch: {err:.3e} ({'ok' if ok else 'MISMATCH'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
