# bench/llama_to_gguf.py MODEL_DIR OUT.gguf: a Llama model folder (config.json, one model.safetensors of float32 tensors, tokenizer.json) as a
# float32 GGUF file, so that llama.cpp serves exactly the folder's numbers. What differs from
# scripts/hf-to-gguf.py (Qwen3 and the tiny models' merge-less vocabulary only): llama.cpp's llama
# takes q and k with each head's rotary halves interleaved (convert_hf_to_gguf.py's permute), and the
# vocabulary is a byte-level BPE with merges. The prompts travel as token ids, so llama.cpp's own
# tokenisation (its pre-tokeniser, here "default") is never used. A folder it cannot convert exactly
# is refused: one line on stderr, exit code 2.
import json, sys
from pathlib import Path
import numpy as np
import gguf

def refuse(message):
    print(message, file=sys.stderr)
    sys.exit(2)

model_dir, out = Path(sys.argv[1]), sys.argv[2]
config = json.loads((model_dir / "config.json").read_text())
if not (model_dir / "model.safetensors").is_file():
    refuse("no model.safetensors (only a single-file checkpoint is converted)")
rope = config.get("rope_parameters") or config.get("rope_scaling") or {}
if rope.get("rope_type", "default") != "default":
    refuse(f"rope_type {rope['rope_type']!r}: only unscaled rotary embeddings are converted")
# safetensors: an 8-byte header length, a JSON header, then the data, read in place.
raw = np.memmap(model_dir / "model.safetensors", dtype=np.uint8, mode="r")
n = int(raw[:8].view("<u8")[0])
header = json.loads(bytes(raw[8 : 8 + n]))
heads, kv_heads, hidden, vocab_size = config["num_attention_heads"], config["num_key_value_heads"], config["hidden_size"], config["vocab_size"]
head_dim = config.get("head_dim") or hidden // heads

w = gguf.GGUFWriter(out, "llama")
w.add_name(model_dir.name)
w.add_file_type(gguf.LlamaFileType.ALL_F32)
w.add_vocab_size(vocab_size)
w.add_context_length(config["max_position_embeddings"])
w.add_embedding_length(hidden)
w.add_block_count(config["num_hidden_layers"])
w.add_feed_forward_length(config["intermediate_size"])
w.add_head_count(heads)
w.add_head_count_kv(kv_heads)
w.add_key_length(head_dim)
w.add_value_length(head_dim)
w.add_rope_dimension_count(head_dim)
w.add_rope_freq_base(float(rope.get("rope_theta", config.get("rope_theta", 10000.0))))
w.add_layer_norm_rms_eps(float(config["rms_norm_eps"]))

spec = json.loads((model_dir / "tokenizer.json").read_text())
if spec["model"].get("type") != "BPE" or not spec["model"].get("merges"):
    refuse("tokenizer.json: only a BPE vocabulary with merges is converted")
# tokenizer.json's byte-level BPE already spells tokens as llama.cpp's "gpt2" vocabulary does.
tokens = [f"[PAD{i}]" for i in range(vocab_size)]
types = [gguf.TokenType.UNUSED] * vocab_size
for text, i in spec["model"]["vocab"].items():
    tokens[i], types[i] = text, gguf.TokenType.NORMAL
for added in spec.get("added_tokens", []):
    tokens[added["id"]] = added["content"]
    types[added["id"]] = gguf.TokenType.CONTROL if added.get("special") else gguf.TokenType.USER_DEFINED
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("default")
w.add_token_list(tokens)
w.add_token_types(types)
w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]])
for key, add in (("bos_token_id", w.add_bos_token_id), ("eos_token_id", w.add_eos_token_id)):
    ids = config.get(key)
    ids = ids if isinstance(ids, list) else [] if ids is None else [ids]
    if ids:
        add(ids[0])
w.add_add_bos_token(False)  # the prompts are sent as the other sides take them

def permute(t, n_head):
    return t.reshape(n_head, 2, t.shape[0] // n_head // 2, *t.shape[1:]).swapaxes(1, 2).reshape(t.shape)

names = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
         "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
for name, t in header.items():
    if name == "__metadata__":
        continue
    if t["dtype"] != "F32":
        refuse(f"tensor {name} is {t['dtype']}: only float32 checkpoints are converted (the other sides' weights)")
    begin, end = t["data_offsets"]
    tensor = raw[8 + n + begin : 8 + n + end].view("<f4").reshape(t["shape"])
    if name == "model.embed_tokens.weight":
        target = "token_embd.weight"
    elif name == "model.norm.weight":
        target = "output_norm.weight"
    elif name == "lm_head.weight":
        target = "output.weight"  # absent when tied: llama.cpp then reuses token_embd
    else:
        parts = name.split(".")  # model.layers.N.<module>.weight
        module = ".".join(parts[3:-1])
        if parts[:2] != ["model", "layers"] or parts[-1] != "weight" or module not in names:
            refuse(f"unexpected tensor {name}")
        target = f"blk.{parts[2]}.{names[module]}.weight"
        if module == "self_attn.q_proj":
            tensor = permute(tensor, heads)
        elif module == "self_attn.k_proj":
            tensor = permute(tensor, kv_heads)
    w.add_tensor(target, np.ascontiguousarray(tensor))

w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
