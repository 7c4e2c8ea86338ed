// scripts/hf-to-gguf.py on a Llama folder with a merged byte-level BPE vocabulary: SmolLM2-135M-Instruct
// (what `marft export --gguf` writes for an agent trained on it, and what the real-model bench serves
// with llama.cpp). Read back by transformers' own GGUF loader (.venv-models, which CI makes), a reader
// written apart from the script: every weight equals the safetensors folder's exactly (the loader undoes
// the q/k permutation into llama.cpp's interleaved rotary order, so a wrong permutation shows here), and
// the vocabulary round-trips: the GGUF's tokenizer encodes the test conversations to the folder's ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../python-oracle.ts';
import { conversations, skipWithoutSmollm2, smollm2Dir } from '../engine/smollm2-helpers.ts';

const modelsPython = join(repoRoot, '.venv-models/bin/python');
const skip = skipWithoutSmollm2 || (existsSync(modelsPython) ? false : `no ${modelsPython}: bash scripts/setup.sh --models makes it`);

const CHECK = `
import json, os, sys, torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoTokenizer
folder, gguf_path, texts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
d, f = os.path.dirname(gguf_path), os.path.basename(gguf_path)
model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
got = model.state_dict()
want = load_file(os.path.join(folder, "model.safetensors"))
differing = sorted(n for n, t in want.items() if n not in got or not torch.equal(got[n], t))
ours = AutoTokenizer.from_pretrained(folder)
theirs = AutoTokenizer.from_pretrained(d, gguf_file=f)
ids = [ours(t)["input_ids"] == theirs(t)["input_ids"] for t in texts]
print(json.dumps({"tensors": len(want), "differing": differing[:5], "same_ids": ids}))
`;

test('SmolLM2 through scripts/hf-to-gguf.py: transformers\' GGUF loader reads back every weight exactly and the same token ids', { skip, timeout: 600_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-gguf-smollm2-'));
  try {
    const gguf = join(dir, 'smollm2.gguf');
    const convert = spawnSync(modelsPython, [join(repoRoot, 'scripts/hf-to-gguf.py'), smollm2Dir, gguf], { encoding: 'utf8' });
    assert.equal(convert.status, 0, convert.stderr);
    assert.equal((JSON.parse(convert.stdout.trim()) as { vocabSize: number }).vocabSize, 49152);
    const texts = conversations.flatMap((c) => [c.user, c.answer]);
    const read = spawnSync(modelsPython, ['-c', CHECK, smollm2Dir, gguf, JSON.stringify(texts)], { encoding: 'utf8', maxBuffer: 1 << 24 });
    assert.equal(read.status, 0, read.stderr);
    const got = JSON.parse(read.stdout.trim().split('\n').pop()!) as { tensors: number; differing: string[]; same_ids: boolean[] };
    assert.ok(got.tensors > 200, `only ${got.tensors} tensors in the folder`);
    assert.deepEqual(got.differing, [], 'tensors that differ from the folder\'s');
    assert.deepEqual(got.same_ids, texts.map(() => true), 'texts the GGUF\'s tokenizer encodes differently');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
