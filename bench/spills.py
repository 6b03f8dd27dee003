"""Every kernel of bench/launches.py's models (and, with --real / --zoo, of real-size layers) compiled for sm_80 and sm_90: spills?

    python bench/spills.py              # print the table, make it bench/RESULTS.md's spills section
    python bench/spills.py --no-write   # print only
    python bench/spills.py --real       # also real-size layers: Llama-7B-sized bf16, GPT-2-medium f16, BERT-large f32
    python bench/spills.py --zoo        # also every architecture of tests/test_zoo.py at a real size (d=1024, 512 tokens)

Every kernel kind (pointwise, reduction, scan, concat, pooling, GEMM,
back-to-back GEMM, convolution, attention) is compiled ahead of time (no GPU needed,
`mlirfuse.runtime.aot.compile_kernels`) as a GPU launches it: a dry run of
the program on meta tensors (runtime/dryrun.py, what a package's cubins are
compiled for) gives each launch's blocks, warps, stages and specialization
(strides of 1 and 16-divisible sizes and pointers, as Triton's JIT
specializes); a kernel the run does not reach is compiled for any arguments.
(Compiled for any arguments instead, spills differ both ways: before this
table was made from launches, it showed none where three f32 GEMMs with a
residual, the LSTM's one-warp GEMMs and RoPE's cos/sin spilled as launched
on sm_80.) A kernel whose source and launch another model already had is
compiled once. Registers, stack frame and local memory
come from `cuobjdump -res-usage` on each cubin, spill stores and loads from
ptxas's own report (`-v`) at compile time: a stack frame alone is no spill
(local arrays live there: libdevice's f32 sin/cos keep one for their
large-argument reduction, as CUDA eager's do). Issue 21's bar: zero spill
stores and loads, zero local memory, zero compile failures. One row
per model (its distinct kernels by kind, the most registers any takes, spills,
failures); each template kernel (GEMM, chain, convolution, attention) and each kernel that
spills or fails gets a row of its own below. (tests/test_matmul_aot.py and
tests/test_attention.py check representative kernels the same way in CI.)
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
from launches import MODELS, matmul_mode  # noqa: E402

import mlirfuse  # noqa: E402
from mlirfuse.compiler import example_arguments  # noqa: E402
from mlirfuse.errors import MlirfuseError  # noqa: E402
from mlirfuse.runtime.aot import compile_kernels, is_spill  # noqa: E402
from mlirfuse.runtime.dryrun import launch_specializations  # noqa: E402
from report import header, markdown_table, publish  # noqa: E402

ARCHS = (80, 90)
TEMPLATES = ("matmul", "matmul-chain", "attention", "conv")
MODEL_COLUMNS = ("model", "kernels", "by kind", *(f"sm_{a} most reg" for a in ARCHS), "spills", "failures")
KERNEL_COLUMNS = ("model", "kernel", "kind", *(f"sm_{a} reg / spill stores / stack" for a in ARCHS), "spills")


def _transformer_layer(kind: str, hidden: int, heads: int, ffn: int, dtype, tokens: int = 512):
    """One layer of a real size (a `transformers` model of 1 layer, random weights), `tokens` ids."""
    import transformers

    if kind == "llama":
        config = transformers.LlamaConfig(num_hidden_layers=1, hidden_size=hidden, num_attention_heads=heads,
                                          num_key_value_heads=heads, intermediate_size=ffn, vocab_size=1024,
                                          max_position_embeddings=tokens, use_cache=False, attn_implementation="sdpa")
        model = transformers.LlamaModel(config)
    elif kind == "bert":
        config = transformers.BertConfig(num_hidden_layers=1, hidden_size=hidden, num_attention_heads=heads,
                                         intermediate_size=ffn, vocab_size=1024, max_position_embeddings=tokens,
                                         attn_implementation="sdpa")
        model = transformers.BertModel(config, add_pooling_layer=False)
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
    "BERT-large layer f32 d=1024 16 heads ffn 4096 [1,512]": lambda: _transformer_layer("bert", 1024, 16, 4096, torch.float32),
    "GPT-2 block f32 d=768 12 heads [8,512]": lambda: _gpt2_block_f32(),
}


def _gpt2_block_f32():
    from reductions import GPT2Block

    return GPT2Block(768, 12, 512), (torch.randn(8, 512, 768),)


# --zoo: tests/test_zoo.py's architectures with their sizes made real (one layer, d=1024, 16 heads of 64,
# 4 key/value heads where the zoo has grouped-query attention, MLP 4096, 512 tokens), decoders in bf16,
# T5 in f16, encoders in f32. BART in bf16: in f16 its layers check their activations for inf/NaN
# (`if dtype == float16 and isinf(h).any()`), a data-dependent branch torch.export cannot trace.
# Mixtral keeps its 4 experts, top 2; the ResNet is ResNet-18's stages at 224x224, in f32.
ZOO_SIZES = {"hidden": 1024, "heads": 16, "kv_heads": 4, "ffn": 4096, "layers": 1, "tokens": 512}
ZOO_DTYPES = {"t5": torch.float16, "bart": torch.bfloat16, "bert": torch.float32, "roberta": torch.float32,
              "distilbert": torch.float32, "vit": torch.float32, "resnet": torch.float32}
ZOO_KEPT = {"num_local_experts", "num_experts_per_tok"}
ZOO_REAL = {"resnet": dict(embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2])}


def _zoo_model(name: str):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import test_zoo
    import transformers

    model_class, config_class, fields = test_zoo.ARCHITECTURES[name]
    small = {test_zoo.HIDDEN: "hidden", test_zoo.HEADS: "heads", test_zoo.FFN: "ffn", test_zoo.LAYERS: "layers",
             test_zoo.POSITIONS: "tokens"}
    real = {}
    for key, value in fields.items():
        if key in ZOO_KEPT:
            real[key] = value
        elif key in ("num_key_value_heads", "num_kv_heads"):
            real[key] = ZOO_SIZES["kv_heads"]
        elif key == "d_kv":
            real[key] = ZOO_SIZES["hidden"] // ZOO_SIZES["heads"]
        elif key in ("image_size", "patch_size"):
            real[key] = {"image_size": 224, "patch_size": 16}[key]
        elif isinstance(value, int) and value in small:
            real[key] = ZOO_SIZES[small[value]]
        else:
            real[key] = value
    real.update(ZOO_REAL.get(name, {}))
    attention = {} if name in test_zoo.ATTENTION_FREE else {"attn_implementation": "sdpa"}
    config = getattr(transformers, config_class)(**real, vocab_size=1024, use_cache=False, **attention)
    model = getattr(transformers, model_class)(config, **({"add_pooling_layer": False} if name == "vit" else {}))
    if name in test_zoo.IMAGES:
        inputs, kwargs = (torch.randn(1, 3, 224, 224),), {}
    else:
        tokens = ZOO_SIZES["tokens"]
        inputs, kwargs = (torch.randint(2, 1024, (1, tokens)),), {"attention_mask": torch.ones(1, tokens, dtype=torch.long)}
        if name in test_zoo.ENCODER_DECODER:
            kwargs["decoder_input_ids"] = torch.randint(2, 1024, (1, ZOO_SIZES["tokens"] // 2))
    dtype = ZOO_DTYPES.get(name, torch.bfloat16)
    if name in test_zoo.IMAGES:
        inputs = (inputs[0].to(dtype),)
    return model.to(dtype), inputs, kwargs


def zoo_models() -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import test_zoo

    return {f"zoo {name} {str(ZOO_DTYPES.get(name, torch.bfloat16)).removeprefix('torch.')} d=1024 [1,512]":
            (lambda name=name: _zoo_model(name)) for name in test_zoo.ARCHITECTURES}


def _spec_key(kernel, specialized: dict) -> tuple:
    """What a kernel's cubin is compiled from: its source and its launch's specialization (None: any arguments)."""
    spec = specialized.get(kernel.name)
    return kernel.source, None if spec is None else repr((spec["specialization"], sorted(spec["launch_kwargs"].items())))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="do not write bench/RESULTS.md")
    parser.add_argument("--real", action="store_true", help="also the real-size layers (a Llama-7B-sized one in bf16, ...)")
    parser.add_argument("--zoo", action="store_true", help="also tests/test_zoo.py's architectures at a real size")
    parser.add_argument("--jobs", type=int, default=None, help="parallel compiles (default: the CPU count)")
    args = parser.parse_args(argv)
    models = {**MODELS, **(REAL_MODELS if args.real else {}), **(zoo_models() if args.zoo else {})}
    done: dict[tuple, dict | str] = {}  # ((source, specialization), arch) -> resource usage, or the compile error
    model_rows, kernel_rows, total, spilled, failed, distinct = [], [], 0, 0, 0, set()
    for name, build in models.items():
        torch.manual_seed(0)
        built = build()
        model, inputs, kwargs = built if len(built) == 3 else (*built, {})
        try:
            cm = mlirfuse.compile(model.eval(), inputs, kwargs, **matmul_mode())
        except MlirfuseError as e:
            model_rows.append([name, "-", f"compile failed: {str(e).splitlines()[0][:80]}", "-", "-", "-", "1"])
            failed += 1
            continue
        kernels = list(cm.kernels.values())
        arguments = example_arguments(cm.imported, model)
        usage_of = {}  # (kernel name, arch) -> its resource usage or compile error
        for arch in ARCHS:
            # Each kernel for the launch a GPU makes (a dry run on meta tensors: strides of 1 and 16-divisible
            # sizes specialized, as Triton's JIT and a package's cubins are); one the run did not reach, for any.
            specialized, stopped = launch_specializations(cm.program, cm.kernels, list(arguments), arch)
            if stopped:
                print(f"{name}: the dry run on sm_{arch} stopped early ({stopped}); later kernels compiled for any "
                      "arguments", file=sys.stderr)
            keyed = {k.name: _spec_key(k, specialized) for k in kernels}
            todo = list({keyed[k.name]: k for k in kernels if (keyed[k.name], arch) not in done}.values())
            try:
                compiled = compile_kernels(todo, arch=arch, jobs=args.jobs, specialized=specialized)
                for kernel, c in zip(todo, compiled):
                    done[keyed[kernel.name], arch] = c.resources()
            except MlirfuseError:  # one at a time: each failing kernel gets its own message
                for kernel in todo:
                    try:
                        done[keyed[kernel.name], arch] = compile_kernels(
                            [kernel], arch=arch, jobs=1, specialized=specialized)[0].resources()
                    except MlirfuseError as e:
                        done[keyed[kernel.name], arch] = str(e).splitlines()[0]
            usage_of.update({(k.name, arch): done[keyed[k.name], arch] for k in kernels})
        kinds = collections.Counter(k.kind for k in kernels)
        most = {arch: max((u["reg"] for k in kernels if isinstance(u := usage_of[k.name, arch], dict)), default=0)
                for arch in ARCHS}
        spills = fails = 0
        for kernel in kernels:
            usage = [usage_of[kernel.name, arch] for arch in ARCHS]
            bad = any(isinstance(u, str) for u in usage)
            spill = not bad and any(is_spill(u) for u in usage)
            spills += spill
            fails += bad
            if kernel.kind in TEMPLATES or spill or bad:
                cells = [u if isinstance(u, str) else f"{u['reg']} / {u['spill_stores']} / {u['stack']}" for u in usage]
                kernel_rows.append([name.split(" [")[0], kernel.name, kernel.kind, *cells,
                                    "failed" if bad else "yes" if spill else "no"])
        total += len(kernels)
        distinct.update(k.source for k in kernels)
        spilled += spills
        failed += fails
        model_rows.append([name, str(len(kernels)), ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())),
                           *(str(most[a]) for a in ARCHS), str(spills), str(fails)])
        print(" | ".join(model_rows[-1]), file=sys.stderr)
    report = (
        f"{header('spills.py')}\n\n{markdown_table(MODEL_COLUMNS, model_rows, 3)}\n\n"
        f"{total} kernels ({len(distinct)} distinct sources) of {len(models)} models: {spilled} with spills "
        f"(spill stores or loads, or local memory) on sm_80 or sm_90, {failed} compile failures.\n\n"
        f"Template kernels (and any kernel that spilled or failed):\n\n{markdown_table(KERNEL_COLUMNS, kernel_rows, 3)}\n"
    )
    publish(report, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
