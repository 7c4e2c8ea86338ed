"""Test oracle for test/tokenizer/*.test.ts (never used by the product).

usage: hf_oracle.py make-qwen DIR        build a tiny Qwen-style byte-level BPE tokenizer folder in DIR
       hf_oracle.py expect DIR CASES    print what transformers' AutoTokenizer gives for CASES (a JSON file):
                                         {"make_qwen": bool (build DIR first), "texts": [...],
                                          "chats": [[{role, content}, ...], ...], "variants": [template kwargs, ...]}
                                         -> one object per variant: {"ids": [[...]], "decoded": [...],
                                            "chat_text": [[no_gen, gen]], "chat_ids": [[no_gen, gen]],
                                            "eos_token_id": int, "len": int}
(one Python process per test: importing transformers dominates the time)
"""
import json
import sys

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

# Qwen2/Qwen3's pre-tokenizer split pattern.
QWEN_PATTERN = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

# A Qwen3-like template: default system prompt, namespace, loop variables, optional empty think block.
QWEN_STYLE_TEMPLATE = """{%- if messages[0]['role'] == 'system' %}
    {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
{%- else %}
    {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}
{%- endif %}
{%- set ns = namespace(last_user=-1) %}
{%- for message in messages %}
    {%- if message.role == 'user' %}{%- set ns.last_user = loop.index0 %}{%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if not (message.role == 'system' and loop.first) %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content | trim + '<|im_end|>' + '\\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\\n\\n</think>\\n\\n' }}
    {%- endif %}
{%- endif %}"""

SENTENCES = [
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.",
    "How many clips did Natalia sell altogether in April and May? The answer is 72.",
    "def solve(n):\n    return sum(i * i for i in range(n))\n",
    "Now it is Solver's turn. Executes the plan and produces the final answer.",
    "Let x = 3; then 2x + 1 = 7, so \\boxed{7}.",
]


def make_qwen(out_dir):
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(SENTENCES * 4, trainer=trainer)
    # Two non-special added tokens, as Qwen3 has (<think>, </think>).
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   chat_template=QWEN_STYLE_TEMPLATE)
    fast.add_tokens(["<think>", "</think>"])
    fast.save_pretrained(out_dir)
    with open(f"{out_dir}/generation_config.json", "w") as f:
        json.dump({"eos_token_id": [fast.convert_tokens_to_ids("<|im_end|>"), fast.convert_tokens_to_ids("<|endoftext|>")]}, f)


def expect(tok_dir, cases_file):
    with open(cases_file) as f:
        cases = json.load(f)
    if cases.get("make_qwen"):
        make_qwen(tok_dir)
    tok = AutoTokenizer.from_pretrained(tok_dir)
    results = []
    for kwargs in cases.get("variants", [{}]):
        out = {"ids": [], "decoded": [], "chat_text": [], "chat_ids": [], "eos_token_id": tok.eos_token_id, "len": len(tok)}
        for text in cases["texts"]:
            ids = tok.encode(text, add_special_tokens=False)
            out["ids"].append(ids)
            out["decoded"].append(tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))
        for chat in cases["chats"]:
            texts, idss = [], []
            for gen in (False, True):
                texts.append(tok.apply_chat_template(chat, tokenize=False, add_generation_prompt=gen, **kwargs))
                enc = tok.apply_chat_template(chat, tokenize=True, add_generation_prompt=gen, return_dict=True, **kwargs)
                idss.append(list(enc["input_ids"]))
            out["chat_text"].append(texts)
            out["chat_ids"].append(idss)
        results.append(out)
    print(json.dumps(results))


if __name__ == "__main__":
    if sys.argv[1] == "make-qwen":
        make_qwen(sys.argv[2])
    elif sys.argv[1] == "expect":
        expect(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
