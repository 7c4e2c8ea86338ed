"""Tiny random Llama / Qwen2 / Qwen3 checkpoints for the engine's oracle tests.

Usage:
    .venv-oracle/bin/python oracle/make_tiny_checkpoints.py OUTDIR [--arch llama|qwen2|qwen3|all] [--seed N]

Writes, with transformers' save_pretrained (float32, model.safetensors, config.json,
generation_config.json), one folder per architecture and embedding variant:

    OUTDIR/<arch>-untied/   lm_head separate from embed_tokens
    OUTDIR/<arch>-tied/     tie_word_embeddings = true (no lm_head.weight stored)

and OUTDIR/manifest.json listing them. Shapes: vocab 128, hidden 64, 2 layers, 4 attention heads,
2 key/value heads (grouped-query attention), intermediate 128, rope_theta 10000 (Llama) or
1e6 (Qwen), rms_norm_eps 1e-6; Qwen3 uses head_dim 32, which differs from hidden / heads = 16.

Every weight is perturbed so that no mistake can hide behind a default value: linear weights
N(0, 1/fan_in), embeddings N(0, 4/hidden), RMSNorm weights (including Qwen3's q_norm / k_norm)
1 + 0.1 * N(0, 1), and Qwen2's q/k/v biases 0.1 * N(0, 1). There is no tokenizer: the tests
feed token ids. The same --seed gives the same files.
"""

import argparse
import json
import math
import os
import sys

import torch
from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config, Qwen3Config

ARCHS = ("llama", "qwen2", "qwen3")

COMMON = dict(
    vocab_size=128,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=256,
    rms_norm_eps=1e-6,
    bos_token_id=1,
    eos_token_id=2,
    pad_token_id=None,
)


def make_config(arch: str, tied: bool):
    if arch == "llama":
        return LlamaConfig(**COMMON, rope_theta=10000.0, tie_word_embeddings=tied)
    if arch == "qwen2":
        return Qwen2Config(**COMMON, rope_theta=1e6, tie_word_embeddings=tied)
    if arch == "qwen3":
        return Qwen3Config(**COMMON, head_dim=32, rope_theta=1e6, tie_word_embeddings=tied)
    raise ValueError(f"unknown architecture {arch!r} (expected one of {', '.join(ARCHS)})")


@torch.no_grad()
def perturb(model: torch.nn.Module, generator: torch.Generator) -> None:
    for name, p in model.named_parameters():
        noise = torch.randn(p.shape, generator=generator, dtype=torch.float32)
        if name.endswith("norm.weight"):
            p.copy_(1.0 + 0.1 * noise)
        elif name.endswith(".bias"):
            p.copy_(0.1 * noise)
        elif "embed_tokens" in name:
            # std 2/sqrt(hidden): tied models reuse this as lm_head, so logits have std ~2
            # (N(0, 1) would give std ~8 and log-probs near -40, hiding small relative errors).
            p.copy_(2.0 * noise / math.sqrt(p.shape[1]))
        elif p.dim() == 2:
            p.copy_(noise / math.sqrt(p.shape[1]))
        else:
            raise RuntimeError(f"no perturbation rule for parameter {name} {tuple(p.shape)}")


def write_checkpoint(outdir: str, arch: str, tied: bool, seed: int) -> dict:
    config = make_config(arch, tied)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    generator = torch.Generator().manual_seed(seed * 1000 + ARCHS.index(arch) * 2 + int(tied))
    perturb(model, generator)
    if tied:
        assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr(), "lm_head is not tied"
    name = f"{arch}-{'tied' if tied else 'untied'}"
    path = os.path.join(outdir, name)
    model.save_pretrained(path)
    return {"name": name, "arch": arch, "tied": tied, "path": path, "parameters": sum(p.numel() for p in model.parameters())}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--arch", default="all", choices=[*ARCHS, "all"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    os.makedirs(args.outdir, exist_ok=True)
    archs = ARCHS if args.arch == "all" else (args.arch,)
    written = [write_checkpoint(args.outdir, arch, tied, args.seed) for arch in archs for tied in (False, True)]
    with open(os.path.join(args.outdir, "manifest.json"), "w") as f:
        json.dump({"seed": args.seed, "checkpoints": written}, f, indent=2)
    for c in written:
        print(f"{c['path']}  ({c['parameters']} parameters)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
