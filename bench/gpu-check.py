"""One-GPU check of the torch engine (issue 11): LoRA training tokens/s, peak memory and sampling tokens/s.

Runs the torch engine's own Python code (engines/torch/marft_torch: TorchEngine.forward / backward /
optim_step / sample, the code the TypeScript client drives over its socket) on random weights of
Qwen2.5-1.5B's shape, built here (no download), saved to a temporary folder and loaded back the way
the worker loads a model. Prints one JSON object (and writes it to --out). About 2-4 minutes on one
modern GPU; docs/performance.md says what was measured.

    .venv-torch/bin/python bench/gpu-check.py                       # Qwen2.5-1.5B shape, bf16, CUDA
    .venv-torch/bin/python bench/gpu-check.py --shape tiny --device cpu --dtype float32   # smoke run on a CPU
"""
import argparse
import json
import os
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engines", "torch"))
from marft_torch.engine import TorchEngine  # noqa: E402
from marft_torch.framing import f32_bytes  # noqa: E402
from marft_torch.lora import linear_module  # noqa: E402
from marft_torch.parallel import Group  # noqa: E402

# Qwen2.5-1.5B's config.json (the architecture's numbers only; the weights here are random).
SHAPES = {
    "qwen2.5-1.5b": dict(vocab_size=151936, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                         num_attention_heads=12, num_key_value_heads=2, max_position_embeddings=32768,
                         rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True),
    # For checking this script on a CPU: the same architecture, small.
    "tiny": dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                 rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True),
}
MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def save_random_model(shape: str, dtype: torch.dtype, out: str) -> None:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(**SHAPES[shape], bos_token_id=151643, eos_token_id=151643)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(device):  # initialise on the GPU: a 1.5B model's init on the CPU takes minutes
        model = Qwen2ForCausalLM(cfg).to(dtype)
    model.save_pretrained(out)
    del model


def adapter_msg(engine: TorchEngine, rank: int) -> dict:
    """A PEFT-style adapter on every linear layer: A small random, B small random (so both factors get gradients)."""
    g = torch.Generator().manual_seed(1)
    factors = []
    for layer in range(len(engine.lm.model.layers)):
        for m in MODULES:
            lin = linear_module(engine.lm, layer, m)
            A = torch.randn(rank, lin.in_features, generator=g) * 0.01
            B = torch.randn(lin.out_features, rank, generator=g) * 0.001
            factors.append({"layer": layer, "module": m, "A": f32_bytes(A), "B": f32_bytes(B)})
    return {"rank": rank, "alpha": 2.0 * rank, "targetModules": MODULES, "factors": factors}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="qwen2.5-1.5b", choices=sorted(SHAPES))
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16"])
    ap.add_argument("--batch", type=int, default=4, help="sequences per training step")
    ap.add_argument("--seq-len", type=int, default=1024, help="tokens per training sequence")
    ap.add_argument("--steps", type=int, default=6, help="timed training steps (after 2 warm-up steps)")
    ap.add_argument("--rank", type=int, default=16, help="LoRA rank")
    ap.add_argument("--sample-batch", type=int, default=8)
    ap.add_argument("--prompt-len", type=int, default=256)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--out", help="also write the JSON result here")
    a = ap.parse_args()

    t0 = time.time()
    group = Group(a.device)
    dev = group.device
    result = {"shape": a.shape, "device": str(dev), "dtype": a.dtype, "torch": torch.__version__,
              "gpu": torch.cuda.get_device_name(dev) if dev.type == "cuda" else None}
    with tempfile.TemporaryDirectory(prefix="marft-gpu-check-") as d:
        save_random_model(a.shape, torch.bfloat16 if a.dtype == "bfloat16" else torch.float32, d)
        engine = TorchEngine(group, d, a.dtype)
    result["build_and_load_s"] = round(time.time() - t0, 1)
    result["parameters"] = sum(p.numel() for p in engine.lm.parameters())
    engine.put_adapter("policy", adapter_msg(engine, a.rank))
    target = {"kind": "adapter", "name": "policy"}
    vocab = engine.vocab
    g = torch.Generator().manual_seed(2)

    # ---- LoRA training: forward with a retained graph, backward of a per-token loss, AdamW --------------
    batch = [{"tokens": torch.randint(0, vocab, (a.seq_len,), generator=g).tolist(), "scoreFrom": 1} for _ in range(a.batch)]
    weights = [f32_bytes(torch.full((a.seq_len - 1,), -1.0 / (a.batch * (a.seq_len - 1)))) for _ in range(a.batch)]
    optim = {"lr": 1e-5, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weightDecay": 0.0, "maxGradNorm": 1.0}
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    times = []
    for step in range(2 + a.steps):
        sync(dev)
        s = time.time()
        out = engine.forward(target, batch, None, True)
        engine.backward(out["handle"], weights, None)
        norm = engine.optim_step(target, optim)["gradNorm"]
        sync(dev)
        if step >= 2:
            times.append(time.time() - s)
    tokens = a.batch * a.seq_len
    result["train"] = {"batch": a.batch, "seq_len": a.seq_len, "lora_rank": a.rank, "steps": a.steps,
                       "step_s": round(sum(times) / len(times), 4), "tokens_per_s": round(tokens * len(times) / sum(times), 1),
                       "grad_norm_finite": bool(torch.isfinite(torch.tensor(norm)))}
    if dev.type == "cuda":
        result["train"]["peak_memory_gib"] = round(torch.cuda.max_memory_allocated(dev) / 2**30, 2)

    # ---- sampling: the engine's KV-cache sampler through the adapter ------------------------------------
    prompts = [torch.randint(0, vocab, (a.prompt_len,), generator=g).tolist() for _ in range(a.sample_batch)]
    params = {"temperature": 1.0, "topP": 1.0, "topK": 0, "maxNewTokens": a.new_tokens, "stopTokenIds": [], "seed": 3}
    sync(dev)
    s = time.time()
    samples = engine.sample(target, prompts, params)
    sync(dev)
    dt = time.time() - s
    generated = sum(len(r["tokens"]) for r in samples)
    result["sample"] = {"batch": a.sample_batch, "prompt_len": a.prompt_len, "new_tokens": a.new_tokens,
                        "generated": generated, "seconds": round(dt, 2), "tokens_per_s": round(generated / dt, 1)}
    result["total_s"] = round(time.time() - t0, 1)
    text = json.dumps(result)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
