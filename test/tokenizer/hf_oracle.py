"""Test oracle for test/tokenizer/*.test.ts (never used by the product).

usage: hf_oracle.py make-qwen DIR        build a tiny Qwen-style byte-level BPE tokenizer folder in DIR
       hf_oracle.py make KIND DIR        build a folder of another kind (see MAKERS): qwen3, qwen3-jinja, qwen3-both,
                                         llama-legacy, llama-metaspace, tinyllama
       hf_oracle.py expect DIR CASES    print what transformers' AutoTokenizer gives for CASES (a JSON file):
                                         {"make_qwen": bool (build DIR first), "make": KIND (build DIR first),
                                          "texts": [...], "chats": [[{role, content}, ...], ...],
                                          "variants": [template kwargs, ...]}
                                         -> one object per variant: {"ids": [[...]], "decoded": [...],
                                            "chat_text": [[no_gen, gen]], "chat_ids": [[no_gen, gen]],
                                            "eos_token_id": int, "len": int,
                                            "file_ids": [[...]], "file_decoded": [...], "file_chat_ids": [[no_gen, gen]]}
                                         where a chat the template refuses (raise_exception) gives
                                         {"error": message} in place of its text and ids, and file_* are what
                                         the tokenizers library itself gives for DIR/tokenizer.json (no
                                         transformers class in between; file_chat_ids encode chat_text)
(one Python process per test: importing transformers dominates the time)
"""
import json
import os
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
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


# Qwen3's chat template as its model folders ship it (tools, <think> blocks kept only after the last user
# query, enable_thinking), kept here verbatim so the tests render the real thing.
QWEN3_TEMPLATE = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\n\n' }}
    {%- endif %}
    {{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and message.content is string and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if message.content is string %}
        {%- set content = message.content %}
    {%- else %}
        {%- set content = '' %}
    {%- endif %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {%- set reasoning_content = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning_content = message.reasoning_content %}
        {%- else %}
            {%- if '</think>' in content %}
                {%- set reasoning_content = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') %}
                {%- set content = content.split('</think>')[-1].lstrip('\n') %}
            {%- endif %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index %}
            {%- if loop.last or (not loop.last and reasoning_content) %}
                {{- '<|im_start|>' + message.role + '\n<think>\n' + reasoning_content.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') }}
            {%- else %}
                {{- '<|im_start|>' + message.role + '\n' + content }}
            {%- endif %}
        {%- else %}
            {{- '<|im_start|>' + message.role + '\n' + content }}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %}"""

# Llama-2-chat's template: [INST] blocks, the system prompt folded into the first user turn, and
# raise_exception when roles do not alternate.
LLAMA2_TEMPLATE = r"""{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}"""

# TinyLlama-1.1B-Chat's (Zephyr-style) template: no whitespace control, so the line breaks between
# blocks depend on transformers' trim_blocks / lstrip_blocks.
TINYLLAMA_TEMPLATE = "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}"


def _added_tokens_decoder(tokens):
    """tokenizer_config.json's added_tokens_decoder, as the hub's folders carry it: [(id, content, special)]."""
    return {str(i): {"content": c, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False, "special": sp}
            for i, c, sp in tokens}


def _write_folder(out_dir, tok, config, generation_config, template_in=None, template=None):
    """tokenizer.json from the tokenizers library, tokenizer_config.json written as the hub's folders have it."""
    os.makedirs(out_dir, exist_ok=True)
    tok.save(os.path.join(out_dir, "tokenizer.json"))
    if template_in == "config":
        config = {**config, "chat_template": template}
    elif template_in == "jinja":
        with open(os.path.join(out_dir, "chat_template.jinja"), "w") as f:
            f.write(template)
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
    with open(os.path.join(out_dir, "generation_config.json"), "w") as f:
        json.dump(generation_config, f)


def _qwen3_tokenizer():
    """Qwen's byte-level BPE pipeline with Qwen3's kinds of added tokens: three special, the rest not."""
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(SENTENCES * 4, trainer=trainer)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    plain = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in plain])
    added = [(tok.token_to_id(t), t, t in specials) for t in specials + plain]
    return tok, added


def make_qwen3(out_dir, template_in="config", stale_config_template=None):
    tok, added = _qwen3_tokenizer()
    config = {
        "add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": _added_tokens_decoder(added),
        "bos_token": None, "clean_up_tokenization_spaces": False, "eos_token": "<|im_end|>", "errors": "replace",
        "model_max_length": 131072, "pad_token": "<|endoftext|>", "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer", "unk_token": None,
    }
    if stale_config_template is not None:
        config["chat_template"] = stale_config_template
    eos = [tok.token_to_id("<|im_end|>"), tok.token_to_id("<|endoftext|>")]
    _write_folder(out_dir, tok, config, {"bos_token_id": eos[1], "eos_token_id": eos, "pad_token_id": eos[1]},
                  template_in, QWEN3_TEMPLATE)


def _llama_tokenizer(style):
    """A SentencePiece-style BPE as Llama-2 / TinyLlama ship it in tokenizer.json: "▁" for spaces, <unk> <s> </s>
    at 0-2, the 256 byte tokens <0x00>..<0xFF> at 3-258 (byte fallback for characters outside the vocabulary),
    then merges learned here. style "legacy": the Prepend("▁") + Replace(" ", "▁") normalizer of Llama-2's file;
    "metaspace": the Metaspace pre-tokenizer (prepend_scheme "first") that non-legacy conversions write."""
    learn = Tokenizer(models.BPE(unk_token="<unk>"))
    if style == "legacy":
        learn.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    else:
        learn.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    learn.train_from_iterator(SENTENCES * 4, trainer=trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False))
    learned = json.loads(learn.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece, _ in sorted(learned["vocab"].items(), key=lambda kv: kv[1]):
        vocab.setdefault(piece, len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in learned["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = learn.normalizer
    tok.pre_tokenizer = learn.pre_tokenizer
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ["<unk>", "<s>", "</s>"]])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    return tok


def make_llama(out_dir, style, tokenizer_class, legacy, template):
    config = {
        "add_bos_token": True, "add_eos_token": False,
        "added_tokens_decoder": _added_tokens_decoder([(0, "<unk>", True), (1, "<s>", True), (2, "</s>", True)]),
        "bos_token": "<s>", "clean_up_tokenization_spaces": False, "eos_token": "</s>", "legacy": legacy,
        "model_max_length": 2048, "pad_token": "</s>", "padding_side": "right", "sp_model_kwargs": {},
        "tokenizer_class": tokenizer_class, "unk_token": "<unk>", "use_default_system_prompt": False,
    }
    _write_folder(out_dir, _llama_tokenizer(style), config, {"bos_token_id": 1, "eos_token_id": 2}, "config", template)


MAKERS = {
    # Qwen3's folder as its hub repository has it: template in tokenizer_config.json, Qwen2Tokenizer class.
    "qwen3": lambda d: make_qwen3(d, "config"),
    # As newer transformers save it: the template in chat_template.jinja only.
    "qwen3-jinja": lambda d: make_qwen3(d, "jinja"),
    # Both, different: transformers reads chat_template.jinja and ignores the config's.
    "qwen3-both": lambda d: make_qwen3(d, "jinja", stale_config_template="{{ 'stale template' }}"),
    # Llama-2's tokenizer.json read as it is (transformers' generic fast class).
    "llama-legacy": lambda d: make_llama(d, "legacy", "PreTrainedTokenizerFast", True, LLAMA2_TEMPLATE),
    # A Metaspace tokenizer.json with LlamaTokenizer (which rebuilds the same pipeline in transformers 5).
    "llama-metaspace": lambda d: make_llama(d, "metaspace", "LlamaTokenizer", False, LLAMA2_TEMPLATE),
    # TinyLlama-1.1B-Chat's folder: Llama-2's legacy tokenizer.json, LlamaTokenizer, "legacy": false, Zephyr template.
    "tinyllama": lambda d: make_llama(d, "legacy", "LlamaTokenizer", False, TINYLLAMA_TEMPLATE),
}


def expect(tok_dir, cases_file):
    with open(cases_file) as f:
        cases = json.load(f)
    if cases.get("make_qwen"):
        make_qwen(tok_dir)
    if cases.get("make"):
        MAKERS[cases["make"]](tok_dir)
    tok = AutoTokenizer.from_pretrained(tok_dir)
    raw = Tokenizer.from_file(os.path.join(tok_dir, "tokenizer.json"))
    results = []
    for kwargs in cases.get("variants", [{}]):
        out = {"ids": [], "decoded": [], "chat_text": [], "chat_ids": [], "eos_token_id": tok.eos_token_id, "len": len(tok),
               "file_ids": [], "file_decoded": [], "file_chat_ids": []}
        for text in cases["texts"]:
            ids = tok.encode(text, add_special_tokens=False)
            out["ids"].append(ids)
            out["decoded"].append(tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))
            file_ids = raw.encode(text, add_special_tokens=False).ids
            out["file_ids"].append(file_ids)
            out["file_decoded"].append(raw.decode(file_ids, skip_special_tokens=False))
        for chat in cases["chats"]:
            texts, idss = [], []
            for gen in (False, True):
                try:
                    texts.append(tok.apply_chat_template(chat, tokenize=False, add_generation_prompt=gen, **kwargs))
                    enc = tok.apply_chat_template(chat, tokenize=True, add_generation_prompt=gen, return_dict=True, **kwargs)
                    idss.append(list(enc["input_ids"]))
                except Exception as e:  # the template's raise_exception (a TemplateError)
                    texts.append({"error": str(e)})
                    idss.append({"error": str(e)})
            out["chat_text"].append(texts)
            out["chat_ids"].append(idss)
            out["file_chat_ids"].append([t if isinstance(t, dict) else raw.encode(t, add_special_tokens=False).ids for t in texts])
        results.append(out)
    print(json.dumps(results))


if __name__ == "__main__":
    if sys.argv[1] == "make-qwen":
        make_qwen(sys.argv[2])
    elif sys.argv[1] == "make":
        MAKERS[sys.argv[2]](sys.argv[3])
    elif sys.argv[1] == "expect":
        expect(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
