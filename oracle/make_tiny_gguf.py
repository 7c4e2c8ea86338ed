"""A tiny random Llama / Qwen2 / Qwen3 model twice: as a Hugging Face folder (transformers'
save_pretrained, float32) and as a float32 GGUF file holding the same weights, laid out as llama.cpp's
converter lays them out, with a small byte-level BPE tokenizer and a ChatML chat template. The tests of
`marft models import` (test/cli/models-import.test.ts) import the GGUF file and compare the result with
the folder: importing must give back the same weights.

  make_tiny_gguf.py --arch llama|qwen2|qwen3 --gguf OUT.gguf --ref DIR [--seed N]

Every weight is perturbed (norms 1 + 0.1 N(0,1), biases non-zero). qwen2 has tied embeddings (no
output.weight in the GGUF file), llama and qwen3 untied. Qwen3's head_dim (16) is not hidden / heads,
so attention.key_length has to be honoured. Needs torch, transformers and gguf (.venv-models).
"""
import argparse
import json
import os

import numpy as np
import torch
import gguf

# GPT-2's byte-level alphabet: each byte as one printable character (a space is "Ġ").
def byte_alphabet() -> list[str]:
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    out, extra = [], 0
    for b in range(256):
        if b in printable:
            out.append(chr(b))
        else:
            out.append(chr(256 + extra))
            extra += 1
    return out


MERGES = ["Ġ t", "h e", "Ġt he", "i s"]
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
                 "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def vocabulary() -> tuple[list[str], list[int]]:
    tokens = byte_alphabet() + [m.replace(" ", "") for m in MERGES] + SPECIALS
    types = [gguf.TokenType.NORMAL] * (len(tokens) - len(SPECIALS)) + [gguf.TokenType.CONTROL] * len(SPECIALS)
    return tokens, types


def reference_model(arch: str, vocab: int, seed: int):
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM

    common = dict(vocab_size=vocab, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=256, rms_norm_eps=1e-5, bos_token_id=vocab - 2,
                  eos_token_id=vocab - 1, dtype="float32")
    if arch == "llama":
        config, cls = LlamaConfig(**common, rope_theta=50000.0, tie_word_embeddings=False), LlamaForCausalLM
    elif arch == "qwen2":
        config, cls = Qwen2Config(**common, rope_theta=10000.0, tie_word_embeddings=True), Qwen2ForCausalLM
    else:
        config, cls = Qwen3Config(**common, head_dim=16, rope_theta=1000000.0, tie_word_embeddings=False), Qwen3ForCausalLM
    torch.manual_seed(seed)
    model = cls(config).to(torch.float32)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn_like(p))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / max(1.0, p.shape[-1] ** 0.5))
    return model


# llama.cpp's converter interleaves the rotary halves of Llama's q and k rows (its rope is the GPT-J
# layout); transformers' GGUF loader undoes it. Qwen2 / Qwen3 keep the NEOX layout: no permutation.
def llama_permute(w: np.ndarray, heads: int) -> np.ndarray:
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


NAMES = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
         "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
         "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", required=True, choices=["llama", "qwen2", "qwen3"])
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tokens, types = vocabulary()
    model = reference_model(args.arch, len(tokens), args.seed)
    model.save_pretrained(args.ref)
    cfg = model.config

    w = gguf.GGUFWriter(args.gguf, args.arch)
    w.add_name(f"tiny-{args.arch}")
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_freq_base(float(cfg.rope_parameters["rope_theta"]))
    w.add_layer_norm_rms_eps(float(cfg.rms_norm_eps))
    w.add_vocab_size(len(tokens))
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    if args.arch == "llama":
        w.add_rope_dimension_count(head_dim)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(MERGES)
    w.add_bos_token_id(cfg.bos_token_id)
    w.add_eos_token_id(cfg.eos_token_id)
    w.add_add_bos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)

    for name, tensor in model.state_dict().items():
        if name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        t = tensor.detach().numpy().astype(np.float32)
        if name == "model.embed_tokens.weight":
            target = "token_embd.weight"
        elif name == "model.norm.weight":
            target = "output_norm.weight"
        elif name == "lm_head.weight":
            target = "output.weight"
        else:
            parts = name.split(".")  # model.layers.N.<module>.weight|bias
            module = ".".join(parts[3:-1])
            target = f"blk.{parts[2]}.{NAMES[module]}.{parts[-1]}"
            if args.arch == "llama" and module == "self_attn.q_proj":
                t = llama_permute(t, cfg.num_attention_heads)
            elif args.arch == "llama" and module == "self_attn.k_proj":
                t = llama_permute(t, cfg.num_key_value_heads)
        w.add_tensor(target, np.ascontiguousarray(t))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(json.dumps({"gguf": args.gguf, "ref": args.ref, "arch": args.arch, "vocab": len(tokens)}))


main()
