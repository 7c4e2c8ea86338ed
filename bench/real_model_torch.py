"""transformers / PEFT side of `npm run bench:engine -- --model DIR` (bench/real-model.ts drives it).

Loads the model folder in float32 on the CPU, then, on the same token ids as the TypeScript side:
  sample  generate(): the chat prompts (left-padded into one batch) x new_tokens, multinomial sampling at
          temperature 1, no top-k / top-p, exactly new_tokens each (min_new_tokens: no early stop)
  lora    one LoRA training step through PEFT (rank 8, alpha 16, every linear layer): forward, backward of
          -mean(per-token log-prob) and one AdamW step, on the given sequences
Each is run once untimed (warm-up: a short generate, one step), then timed. Prints one JSON line:
{"sample_ms", "lora_step_ms", "peak_rss_mb", "threads", "torch", "transformers"}.
"""
import json
import resource
import sys
import time

import torch
import transformers
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

spec = json.loads(open(sys.argv[1]).read())
torch.manual_seed(0)
model = AutoModelForCausalLM.from_pretrained(spec["model"], torch_dtype=torch.float32).eval()

prompts = spec["prompts"]
width = max(len(p) for p in prompts)
pad = spec["pad_token_id"]
ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])


def sample(new_tokens):
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                             do_sample=True, temperature=1.0, top_k=0, top_p=1.0, pad_token_id=pad)
    assert out.shape[1] == width + new_tokens, out.shape


sample(8)
t0 = time.perf_counter()
sample(spec["new_tokens"])
sample_ms = (time.perf_counter() - t0) * 1000

lora = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=[
    "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
lora.train()
optim = torch.optim.AdamW([p for p in lora.parameters() if p.requires_grad], lr=1e-4)
seqs = torch.tensor(spec["lora_tokens"])


def lora_step():
    optim.zero_grad(set_to_none=True)
    logits = lora(input_ids=seqs).logits
    lp = torch.log_softmax(logits[:, :-1], dim=-1).gather(2, seqs[:, 1:, None])
    (-lp.mean()).backward()
    torch.nn.utils.clip_grad_norm_([p for p in lora.parameters() if p.requires_grad], 1.0)
    optim.step()


lora_step()
t0 = time.perf_counter()
lora_step()
lora_ms = (time.perf_counter() - t0) * 1000

print(json.dumps({"sample_ms": sample_ms, "lora_step_ms": lora_ms, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "threads": torch.get_num_threads(), "torch": torch.__version__, "transformers": transformers.__version__}), flush=True)
