"""PyTorch side of `npm run bench:engine` (bench/engine.ts drives it, interleaving with the embedded engine).

Builds the reference benchmark model (Llama shape: hidden 256, 4 layers, 4 heads, FFN 1024, vocab 2048) in
transformers on the CPU in float32, the same token batch as the TypeScript side, and a PEFT LoRA copy.
Reads one command per line on stdin and answers one line with the milliseconds it took:
  full     forward + backward of loss = -mean(per-token logprob), every weight trainable
  lora     the same through a LoRA adapter (rank 8, alpha 16, all linear layers), base frozen
  sample   generate 32 prompts x 128 new tokens (multinomial sampling, temperature 1, KV cache)
  quit
"""
import json
import sys
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=2048, hidden_size=256, intermediate_size=1024, num_hidden_layers=4,
                  num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512,
                  tie_word_embeddings=False, bos_token_id=None, eos_token_id=None, pad_token_id=0)
full_model = LlamaForCausalLM(cfg).float()
lora_base = LlamaForCausalLM(cfg).float()
from peft import LoraConfig, get_peft_model  # noqa: E402

lora_model = get_peft_model(lora_base, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=[
    "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))

spec = json.loads(sys.argv[1])
ids = torch.tensor(spec["tokens"])
prompts = torch.tensor(spec["prompts"])


def step(model):
    model.zero_grad(set_to_none=True)
    logits = model(input_ids=ids).logits
    lp = torch.log_softmax(logits[:, :-1], dim=-1).gather(2, ids[:, 1:, None])
    (-lp.mean()).backward()


def sample():
    with torch.no_grad():
        full_model.generate(input_ids=prompts, attention_mask=torch.ones_like(prompts), max_new_tokens=spec["new_tokens"],
                            min_new_tokens=spec["new_tokens"], do_sample=True, temperature=1.0, top_k=0, top_p=1.0)


actions = {"full": lambda: step(full_model), "lora": lambda: step(lora_model), "sample": sample}
print(json.dumps({"ready": True, "threads": torch.get_num_threads(), "torch": torch.__version__}), flush=True)
for line in sys.stdin:
    cmd = line.strip()
    if cmd == "quit":
        break
    t0 = time.perf_counter()
    actions[cmd]()
    print(f"{(time.perf_counter() - t0) * 1000:.3f}", flush=True)
