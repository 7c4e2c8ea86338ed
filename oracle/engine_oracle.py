"""Reference computations for the embedded engine's oracle tests (test/engine/*.test.ts).

Every subcommand reads its inputs from files and writes JSON (or safetensors) so the TypeScript tests
compare per-token numbers against transformers / PEFT / torch on the CPU in float32.

  make        --arch llama|qwen2|qwen3 --out DIR [--tied] [--seed N]   tiny random checkpoint, every weight perturbed
  make-lora   --model DIR --out DIR --rank R --alpha A [--seed N] [--scale S]
              PEFT adapter with non-zero A and B (entries S * N(0,1), default 0.2)
  logprobs    --model DIR [--adapter DIR] --input F --out F            per-token log-probs of full sequences
  grads       --model DIR [--adapter DIR] --input F --out F.safetensors [--full]
              loss = sum_b sum_k w[b][k] * logprob[b][k]; gradients of the LoRA A/B (or every base weight)
  critic      --model DIR --adapter DIR --head F.safetensors --input F --out F.safetensors
              values of a LoRA critic (adapter + linear head on the final normed hidden state) and the
              gradients of loss = sum w * value
  mlp-critic  --model DIR --head F.safetensors --input F --out F.safetensors   same, frozen base + ReLU MLP head
  generate    --model DIR [--adapter DIR] --input F --out F --max-new N [--stop-at-eos]
              greedy decoding: exactly N tokens, or with --stop-at-eos up to N, ending at (and with) the
              model's eos as generate() stops by default
  chat-tokens --model DIR --input F --out F      token ids of conversations ([[{"role","content"}...]...])
              through the tokenizer's chat template (a generation prompt after a last user message)
  adamw       --input F --out F                                     torch.optim.AdamW + clip_grad_norm_
  batch       --input F      a JSON list of {"cmd": ..., other flags by their dest names}, run in one process
                             (importing torch and transformers dominates the cost of a call)
"""
import argparse
import json
import math
import os
import shutil

import torch
from safetensors.torch import load_file, save_file

torch.set_num_threads(1)


def make(args):
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config, Qwen3Config

    common = dict(vocab_size=97, hidden_size=64, intermediate_size=112, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                  rms_norm_eps=1e-6, tie_word_embeddings=args.tied, bos_token_id=1, eos_token_id=2)
    if args.arch == "llama":
        cfg = LlamaConfig(**common, rope_theta=10000.0)
    elif args.arch == "qwen2":
        cfg = Qwen2Config(**common, rope_theta=1000000.0)
    else:
        cfg = Qwen3Config(**common, head_dim=24, rope_theta=1000000.0)
    torch.manual_seed(args.seed)
    model = AutoModelForCausalLM.from_config(cfg).float()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1 + 0.3 * torch.randn_like(p))
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn_like(p))
            elif "embed" in name:
                p.copy_(torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) * (1.5 / math.sqrt(p.shape[1])))
    # Test files may run in parallel and ask for the same cached checkpoint: write it elsewhere, then
    # rename it into place (atomic; the loser of a race drops its copy).
    tmp = f"{args.out}.tmp-{os.getpid()}"
    model.save_pretrained(tmp, safe_serialization=True)
    try:
        os.rename(tmp, args.out)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)


def load(model_dir, adapter_dir=None):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    if adapter_dir:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter_dir, is_trainable=True)
    model.eval()
    return model


def make_lora(args):
    from peft import LoraConfig, get_peft_model

    model = load(args.model)
    torch.manual_seed(args.seed)
    cfg = LoraConfig(r=args.rank, lora_alpha=args.alpha, lora_dropout=0.0,
                     target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    peft_model = get_peft_model(model, cfg)
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_B" in name or "lora_A" in name:
                p.copy_(torch.randn_like(p) * args.scale)
    peft_model.save_pretrained(args.out)


def sequence_logprobs(model, tokens):
    ids = torch.tensor([tokens])
    logits = model(input_ids=ids).logits[0].float()
    lp = torch.log_softmax(logits[:-1], dim=-1)
    return lp.gather(1, ids[0, 1:, None])[:, 0]


def logprobs(args):
    model = load(args.model, args.adapter)
    seqs = json.load(open(args.input))
    with torch.no_grad():
        out = [sequence_logprobs(model, s).tolist() for s in seqs]
    json.dump({"logprobs": out}, open(args.out, "w"))


def grads(args):
    model = load(args.model, args.adapter)
    req = json.load(open(args.input))
    named = dict(model.named_parameters())
    if args.full:
        for p in named.values():
            p.requires_grad_(True)
    loss = 0
    for tokens, w in zip(req["tokens"], req["weights"]):
        loss = loss + (sequence_logprobs(model, tokens) * torch.tensor(w)).sum()
    loss.backward()
    out = {}
    for name, p in named.items():
        if p.requires_grad and p.grad is not None:
            out[name] = p.grad.detach().contiguous()
    save_file(out, args.out)


def final_hidden(model, tokens):
    ids = torch.tensor([tokens])
    return model(input_ids=ids, output_hidden_states=True).hidden_states[-1][0]


def critic(args, mlp):
    model = load(args.model, None if mlp else args.adapter)
    if mlp:
        model.requires_grad_(False)
    head = {k: v.clone().requires_grad_(True) for k, v in load_file(args.head).items()}
    n_layers = len([k for k in head if k.endswith(".weight")])
    req = json.load(open(args.input))
    values_out = []
    loss = 0
    for tokens, w in zip(req["tokens"], req["weights"]):
        h = final_hidden(model, tokens)[:-1]
        for i in range(n_layers):
            h = h @ head[f"layers.{i}.weight"].T + head[f"layers.{i}.bias"]
            if i + 1 < n_layers:
                h = torch.relu(h)
        v = h[:, 0]
        values_out.append(v)
        loss = loss + (v * torch.tensor(w)).sum()
    loss.backward()
    out = {f"values.{i}": v.detach().contiguous() for i, v in enumerate(values_out)}
    for k, t in head.items():
        out[f"head.{k}"] = t.grad.contiguous()
    for name, p in model.named_parameters():
        if p.requires_grad and p.grad is not None:
            out[name] = p.grad.detach().contiguous()
    save_file(out, args.out)


def generate(args):
    model = load(args.model, args.adapter)
    prompts = json.load(open(args.input))
    out = []
    with torch.no_grad():
        for p in prompts:
            ids = torch.tensor([p])
            if args.stop_at_eos:
                g = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=args.max_new, do_sample=False)
            else:
                g = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=args.max_new,
                                   min_new_tokens=args.max_new, do_sample=False, pad_token_id=0)
            out.append(g[0, len(p):].tolist())
    json.dump({"tokens": out}, open(args.out, "w"))


def chat_tokens(args):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    out = []
    for messages in json.load(open(args.input)):
        prompt = messages[-1]["role"] == "user"
        out.append(list(tokenizer.apply_chat_template(messages, add_generation_prompt=prompt, tokenize=True, return_dict=False)))
    json.dump({"tokens": out}, open(args.out, "w"))


def adamw(args):
    req = json.load(open(args.input))
    params = [torch.tensor(p, dtype=torch.float32, requires_grad=True) for p in req["params"]]
    h = req["hyper"]
    opt = torch.optim.AdamW(params, lr=h["lr"], betas=(h["beta1"], h["beta2"]), eps=h["eps"],
                            weight_decay=h["weightDecay"], foreach=False)
    norms = []
    for step_grads in req["grads"]:
        for p, g in zip(params, step_grads):
            p.grad = torch.tensor(g, dtype=torch.float32)
        norms.append(float(torch.nn.utils.clip_grad_norm_(params, h["maxGradNorm"]) if h["maxGradNorm"] > 0
                           else torch.norm(torch.stack([torch.norm(p.grad) for p in params]))))
        opt.step()
    json.dump({"params": [p.detach().tolist() for p in params], "norms": norms}, open(args.out, "w"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd")
    ap.add_argument("--arch")
    ap.add_argument("--out")
    ap.add_argument("--tied", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model")
    ap.add_argument("--adapter")
    ap.add_argument("--head")
    ap.add_argument("--input")
    ap.add_argument("--rank", type=int, default=4)
    ap.add_argument("--alpha", type=float, default=8)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--max-new", type=int, default=32)
    ap.add_argument("--stop-at-eos", action="store_true")
    ap.add_argument("--scale", type=float, default=0.2)
    args = ap.parse_args()
    commands = {
        "make": make, "make-lora": make_lora, "logprobs": logprobs, "grads": grads,
        "critic": lambda a: critic(a, False), "mlp-critic": lambda a: critic(a, True),
        "generate": generate, "adamw": adamw, "chat-tokens": chat_tokens,
    }
    if args.cmd == "batch":
        defaults = vars(ap.parse_args(["x"]))
        for job in json.load(open(args.input)):
            merged = {**defaults, **{k.replace("-", "_"): v for k, v in job.items()}}
            commands[merged["cmd"]](argparse.Namespace(**merged))
    else:
        commands[args.cmd](args)


if __name__ == "__main__":
    main()
