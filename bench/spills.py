"""Every GEMM (single or back-to-back), convolution and attention template kernel of bench/launches.py's models, compiled for sm_80 and sm_90: spills?

    python bench/spills.py              # print the table, append it to bench/RESULTS.md
    python bench/spills.py --no-write   # print only
    python bench/spills.py --real       # also real-size layers: Llama-7B-sized bf16, GPT-2-medium f16, 512 tokens

Compiled ahead of time (no GPU needed, `mlirfuse.runtime.aot.compile_kernels`
with the block sizes, warps and stages the runtime would launch them with);
registers, stack frame (where ptxas spills) and local memory come from
`cuobjdump -res-usage` on each cubin. Issue 10's bar: zero stack and local
bytes for every kernel. (tests/test_matmul_aot.py and
tests/test_attention.py check representative kernels the same way in CI.)
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
from launches import MODELS, matmul_mode  # noqa: E402

import mlirfuse  # noqa: E402
from mlirfuse.runtime.aot import compile_kernels, resource_usage  # noqa: E402
from report import header, markdown_table, publish  # noqa: E402

ARCHS = (80, 90)
COLUMNS = ("model", "kernel", "kind", *(f"sm_{a} reg / stack / local" for a in ARCHS), "spills")


def _transformer_layer(kind: str, hidden: int, heads: int, ffn: int, dtype, tokens: int = 512):
    """One decoder layer of a real size (a `transformers` model of 1 layer, random weights), `tokens` ids."""
    import transformers

    if kind == "llama":
        config = transformers.LlamaConfig(num_hidden_layers=1, hidden_size=hidden, num_attention_heads=heads,
                                          num_key_value_heads=heads, intermediate_size=ffn, vocab_size=1024,
                                          max_position_embeddings=tokens, use_cache=False, attn_implementation="sdpa")
        model = transformers.LlamaModel(config)
    else:
        config = transformers.GPT2Config(n_layer=1, n_embd=hidden, n_head=heads, n_positions=tokens, vocab_size=1024,
                                         use_cache=False, attn_implementation="sdpa")
        model = transformers.GPT2Model(config)
    return model.to(dtype), (torch.randint(0, 1024, (1, tokens)),)


# --real: issue 21's real sizes (compiled only, never run here).
REAL_MODELS = {
    "Llama-7B-sized layer bf16 d=4096 32 heads ffn 11008 [1,512]": lambda: _transformer_layer(
        "llama", 4096, 32, 11008, torch.bfloat16),
    "GPT-2-medium layer f16 d=1024 16 heads [1,512]": lambda: _transformer_layer("gpt2", 1024, 16, 4096, torch.float16),
    "GPT-2 block f32 d=768 12 heads [8,512]": lambda: _gpt2_block_f32(),
}


def _gpt2_block_f32():
    from reductions import GPT2Block

    return GPT2Block(768, 12, 512), (torch.randn(8, 512, 768),)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="do not append to bench/RESULTS.md")
    parser.add_argument("--real", action="store_true", help="also the real-size layers (a Llama-7B-sized one in bf16, ...)")
    args = parser.parse_args(argv)
    rows, spilled = [], 0
    for name, build in {**MODELS, **(REAL_MODELS if args.real else {})}.items():
        torch.manual_seed(0)
        model, inputs = build()
        cm = mlirfuse.compile(model.eval(), inputs, **matmul_mode())
        kernels = [k for k in cm.kernels.values() if k.kind in ("matmul", "matmul-chain", "attention", "conv")]
        usage = {arch: [resource_usage(c.cubin) for c in compile_kernels(kernels, arch=arch)] for arch in ARCHS}
        for i, kernel in enumerate(kernels):
            cells = [f"{u['reg']} / {u['stack']} / {u['local']}" for u in (usage[a][i] for a in ARCHS)]
            spills = any(usage[a][i]["stack"] or usage[a][i]["local"] for a in ARCHS)
            spilled += spills
            rows.append([name.split(" [")[0], kernel.name, kernel.kind, *cells, "yes" if spills else "no"])
            print(" | ".join(rows[-1]), file=sys.stderr)
    report = (
        f"{header('spills.py')}\n\n{markdown_table(COLUMNS, rows, 3)}\n\n"
        f"{len(rows)} template kernels, {spilled} with spills (stack or local bytes) on sm_80 or sm_90.\n"
    )
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
