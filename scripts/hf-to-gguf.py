# Writes a float32 GGUF file (llama.cpp's model format) from a Hugging Face folder (config.json,
# model.safetensors, tokenizer.json), so llama.cpp's servers can serve the same weights the embedded
# engine loads:
#
#   .venv-llamacpp/bin/python scripts/hf-to-gguf.py MODEL_DIR OUT.gguf
#
# Needs only numpy and the `gguf` package (in .venv-llamacpp: bash scripts/setup.sh --llamacpp, and in
# .venv-models: --models or --smollm2). llama.cpp's own convert_hf_to_gguf.py is not used: it needs torch
# and transformers, and it refuses a tokenizer whose pre-tokenizer it does not recognise by hash (the
# tiny models' character tokenizer has none). Two architectures:
#   - qwen3, the tiny models (scripts/make-tiny-model.ts): tensors unchanged (llama.cpp's qwen3 uses
#     the same NEOX rotary layout as Hugging Face, so no q/k permutation);
#   - llama (SmolLM2-135M-Instruct, and marft export of an agent trained on it): llama.cpp's llama
#     rotates interleaved pairs, so q and k are permuted per head as llama.cpp's own converter does.
# Two vocabularies: a byte-level BPE with merges (a released model's tokenizer.json: its tokens are
# already spelt in GPT-2's byte alphabet and go in as they are, with the merges), or a BPE without
# merges (the tiny models' character tokenizer: each token is mapped to that alphabet, and one merge
# no text can use is written, since llama.cpp needs a list and GGUF cannot store an empty one).
import json
import struct
import sys
from pathlib import Path

import numpy as np
import gguf


def fail(message: str) -> None:
    print(f"hf-to-gguf: {message}", file=sys.stderr)
    sys.exit(2)


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    # The format is an 8-byte header length, a JSON header and the raw data; reading it by hand keeps
    # the safetensors package out of this environment.
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            fail(f"{path}: tensor {name} is {t['dtype']}; only float32 checkpoints are converted")
        begin, end = t["data_offsets"]
        out[name] = np.frombuffer(data, dtype="<f4", count=(end - begin) // 4, offset=8 + n + begin).reshape(t["shape"])
    return out


# GPT-2's byte-level alphabet: llama.cpp's BPE vocabulary ("gpt2") stores each token's bytes as these
# printable characters (a space is "Ġ", a newline "Ċ") and maps them back when it detokenises.
def byte_level(text: str) -> str:
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return "".join(table[b] for b in text.encode("utf-8"))


def vocabulary(model_dir: Path, vocab_size: int) -> tuple[list[str], list[int], list[str]]:
    """The tokens, their types and the merges llama.cpp's "gpt2" vocabulary takes."""
    spec = json.loads((model_dir / "tokenizer.json").read_text())
    model = spec["model"]
    if model.get("type") != "BPE":
        fail(f"{model_dir}/tokenizer.json: a {model.get('type')} vocabulary; only BPE ones are converted")
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges") or []]
    byte_level_already = len(merges) > 0
    if not byte_level_already:
        merges = [f"{byte_level(chr(0))} {byte_level(chr(0))}"]
    tokens: list[str | None] = [None] * vocab_size
    types = [gguf.TokenType.NORMAL] * vocab_size
    for text, i in model["vocab"].items():
        tokens[i] = text if byte_level_already else byte_level(text)
    for added in spec.get("added_tokens", []):
        # Special tokens keep their text: llama.cpp matches them whole (they are control tokens).
        tokens[added["id"]] = added["content"]
        types[added["id"]] = gguf.TokenType.CONTROL if added.get("special") else gguf.TokenType.USER_DEFINED
    missing = [i for i, t in enumerate(tokens) if t is None]
    if missing:
        fail(f"{model_dir}/tokenizer.json: no token for ids {missing[:5]} (config.json's vocab_size is {vocab_size})")
    return tokens, types, merges


def permute_rotary(t: np.ndarray, n_head: int) -> np.ndarray:
    """Each head's rows from Hugging Face's rotary halves to llama.cpp's interleaved pairs."""
    return t.reshape(n_head, 2, t.shape[0] // n_head // 2, *t.shape[1:]).swapaxes(1, 2).reshape(t.shape)


def main() -> None:
    if len(sys.argv) != 3:
        fail("usage: hf-to-gguf.py MODEL_DIR OUT.gguf")
    model_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        if not (model_dir / name).is_file():
            fail(f"{model_dir}: no {name} (a Hugging Face model folder is expected)")
    config = json.loads((model_dir / "config.json").read_text())
    arch = config.get("model_type")
    if arch not in ("qwen3", "llama"):
        fail(f"{model_dir}: model_type {arch!r}; only qwen3 (what scripts/make-tiny-model.ts writes) and llama (SmolLM2) are converted")
    rope_kind = (config.get("rope_parameters") or config.get("rope_scaling") or {}).get("rope_type", "default")
    if rope_kind != "default":
        fail(f"{model_dir}: rope_type {rope_kind!r}; only unscaled rotary embeddings are converted")
    weights = read_safetensors(model_dir / "model.safetensors")
    heads, kv_heads, hidden = config["num_attention_heads"], config["num_key_value_heads"], config["hidden_size"]
    head_dim = config.get("head_dim") or hidden // heads
    rope = config.get("rope_parameters") or {}
    eos = config.get("eos_token_id")
    eos = eos if isinstance(eos, list) else [] if eos is None else [eos]

    w = gguf.GGUFWriter(out, arch)
    w.add_name(model_dir.name)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_context_length(config["max_position_embeddings"])
    w.add_embedding_length(hidden)
    w.add_block_count(config["num_hidden_layers"])
    w.add_feed_forward_length(config["intermediate_size"])
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    if arch == "llama":
        w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(float(rope.get("rope_theta", config.get("rope_theta", 10000.0))))
    w.add_layer_norm_rms_eps(float(config["rms_norm_eps"]))

    tokens, types, merges = vocabulary(model_dir, config["vocab_size"])
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    # The first end-of-sequence id is llama.cpp's eos, a second its end-of-turn: both end generation.
    if eos:
        w.add_eos_token_id(eos[0])
    if len(eos) > 1:
        w.add_eot_token_id(eos[1])
    # Without a bos id llama.cpp takes 11 for a BPE vocabulary, an ordinary character here (and
    # llama-cpp-python drops that token from echoed log-probs): name the tokenizer's own instead.
    bos = config.get("bos_token_id")
    if bos is None:
        bos_text = json.loads((model_dir / "tokenizer_config.json").read_text()).get("bos_token") if (model_dir / "tokenizer_config.json").exists() else None
        bos = next((i for i, t in enumerate(tokens) if bos_text is not None and t == bos_text), None)
    if bos is not None:
        w.add_bos_token_id(bos)
    w.add_add_bos_token(False)  # prompts are sent as they are, as the other engines take them

    names = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    for name, tensor in weights.items():
        if name == "model.embed_tokens.weight":
            target = "token_embd.weight"
        elif name == "model.norm.weight":
            target = "output_norm.weight"
        elif name == "lm_head.weight":
            target = "output.weight"  # absent when tied: llama.cpp then reuses token_embd
        else:
            parts = name.split(".")  # model.layers.N.<module>.weight
            module = ".".join(parts[3:-1])
            if parts[:2] != ["model", "layers"] or module not in names:
                fail(f"{model_dir}: unexpected tensor {name}")
            target = f"blk.{parts[2]}.{names[module]}.weight"
            if arch == "llama" and module == "self_attn.q_proj":
                tensor = permute_rotary(tensor, heads)
            elif arch == "llama" and module == "self_attn.k_proj":
                tensor = permute_rotary(tensor, kv_heads)
        w.add_tensor(target, np.ascontiguousarray(tensor, dtype=np.float32))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(json.dumps({"out": str(out), "tensors": len(weights), "vocabSize": config["vocab_size"]}))


main()
