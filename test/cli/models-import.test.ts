// `marft models import FILE.gguf OUT_DIR` (src/cli/commands/models.ts, scripts/gguf-to-hf.py):
//   - a user's mistakes in one line, exit code 2: no such file, a folder, not GGUF, an existing output
//     folder, no Python environment, an unsupported architecture, a truncated GGUF file;
//   - tiny random Llama / Qwen2 / Qwen3 models written both as a Hugging Face folder and as a float32
//     GGUF file laid out as llama.cpp's converter lays it out (oracle/make_tiny_gguf.py: Llama's
//     permuted q/k rows, Qwen2's biases and tied embeddings, Qwen3's q/k norms and a head width that is
//     not hidden / heads) import back to the same model: the engine's log-probs on the imported folder
//     equal those on the original bit for bit, the tokenizer applies the file's merges and chat template,
//     and SHA256SUMS holds for every file.
// The conversions need .venv-models (bash scripts/setup.sh --models; CI makes it through --smollm2, so
// there a missing environment fails).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../../src/engine/index.ts';
import { loadTokenizer } from '../../src/tokenizer/index.ts';
import { repoRoot, tempDir } from '../python-oracle.ts';
import { assertUserError, runCli, runInProcess } from './spawn-cli.ts';

const python = join(repoRoot, '.venv-models/bin/python');
const missing = !existsSync(python);
const skip = missing ? `no ${python}: bash scripts/setup.sh --models makes the environment the import runs in` : false;
if (missing && process.env.CI === 'true') {
  test('.venv-models exists (CI runs bash scripts/setup.sh --smollm2)', () => assert.fail(`${python} is missing: CI must make it so that this file's tests run`));
}

const work = tempDir('models-import');

test('models import: mistakes are one line with exit code 2 (before any Python runs)', async () => {
  const text = join(work, 'notes.txt');
  writeFileSync(text, 'not a model\n');
  const gguf = join(work, 'magic-only.gguf');
  writeFileSync(gguf, 'GGUF');
  const full = join(work, 'full');
  mkdirSync(full, { recursive: true });
  writeFileSync(join(full, 'x'), '');
  const cases: [string, string[], RegExp][] = [
    ['no arguments after import', ['models', 'import'], /^marft models: usage: marft models import FILE\.gguf OUT_DIR/],
    ['unknown subcommand', ['models', 'export', 'a', 'b'], /^marft models: unknown subcommand 'export' \(subcommands: import\)$/],
    ['a third argument', ['models', 'import', gguf, join(work, 'o'), 'extra'], /unexpected argument 'extra'/],
    ['no such file', ['models', 'import', join(work, 'nope.gguf'), join(work, 'o')], /nope\.gguf: no such file$/],
    ['a folder', ['models', 'import', work, join(work, 'o')], /: is a folder; a GGUF file is expected$/],
    ['not GGUF', ['models', 'import', text, join(work, 'o')], /notes\.txt: not a GGUF file \(it does not start with the GGUF magic bytes\)$/],
    ['output folder not empty', ['models', 'import', gguf, full], /full: already exists; remove it or choose another folder$/],
    ['output is a file', ['models', 'import', gguf, text], /notes\.txt: already exists; remove it or choose another folder$/],
    ['no Python environment', ['models', 'import', gguf, join(work, 'o'), '--python', join(work, 'no-python')],
      /no .*no-python: bash scripts\/setup\.sh --models makes the Python environment \(torch, transformers, gguf\) the import runs in$/],
  ];
  for (const [what, args, message] of cases) assertUserError(await runInProcess(args), message, what);
  assert.ok(!existsSync(join(work, 'o')));
});

test('models import: an unsupported architecture and a truncated file are refused in one line', { skip, timeout: 120_000 }, async () => {
  const gpt2 = join(work, 'gpt2.gguf');
  execFileSync(python, ['-c', `
import gguf, numpy as np
w = gguf.GGUFWriter(${JSON.stringify(gpt2)}, "gpt2")
w.add_block_count(1)
w.add_tensor("token_embd.weight", np.zeros((4, 2), dtype=np.float32))
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
`]);
  const truncated = join(work, 'truncated.gguf');
  writeFileSync(truncated, new Uint8Array(readFileSync(gpt2)).subarray(0, 40));
  assertUserError(await runCli({ args: ['models', 'import', gpt2, join(work, 'o')] }),
    /^marft models: .*gpt2\.gguf: architecture 'gpt2' is not supported \(supported: llama, qwen2, qwen3\)$/, 'gpt2');
  assertUserError(await runCli({ args: ['models', 'import', truncated, join(work, 'o')] }), /^marft models: .*truncated\.gguf: unreadable GGUF file \(.+\)$/, 'truncated');
  assert.ok(!existsSync(join(work, 'o')));
});

function sha256(file: string): string {
  return createHash('sha256').update(new Uint8Array(readFileSync(file))).digest('hex');
}

for (const arch of ['llama', 'qwen2', 'qwen3'] as const) {
  test(`models import: a float32 ${arch} GGUF file imports back to the same model (log-probs bit for bit, tokenizer, chat template, checksums)`, { skip, timeout: 300_000 }, async () => {
    const gguf = join(work, `${arch}.gguf`);
    const ref = join(work, `${arch}-ref`);
    const out = join(work, 'models', arch); // a parent that does not exist yet
    execFileSync(python, [join(repoRoot, 'oracle/make_tiny_gguf.py'), '--arch', arch, '--gguf', gguf, '--ref', ref, '--seed', '2'], { env: { ...process.env, TQDM_DISABLE: '1' } });
    const r = await runCli({ args: ['models', 'import', gguf, out] });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout.trim(), new RegExp(`^${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ${arch}, 2 layers, hidden 64, vocabulary 263, \\d+ parameters \\(float32\\), context 256, chat template; written in [\\d.]+ s$`), r.stdout);
    assert.match(r.stderr, /^\[models import\] reading the tokenizer of .*\n\[models import\] dequantising the weights \(F32\) to float32\n\[models import\] writing /);

    const [imported, original] = [await loadEngine(out), await loadEngine(ref)];
    try {
      const batch = [[5, 6, 7, 8, 9, 10, 11, 200, 12], [260, 1, 2, 3], [100, 101]].map((tokens) => ({ tokens, scoreFrom: 1 }));
      const [a, b] = [await imported.score({ kind: 'base' }, batch), await original.score({ kind: 'base' }, batch)];
      assert.deepEqual(a, b, 'the same weights, the same engine: the same log-probs');
      assert.deepEqual(imported.info, original.info);
    } finally {
      await imported.dispose();
      await original.dispose();
    }
    const tokenizer = loadTokenizer(out);
    // The file's merges ("Ġ t", "h e", "Ġt he", "i s"): " the" is one token, id 256 + 2.
    assert.deepEqual(tokenizer.encode(' the'), [258]);
    assert.equal(tokenizer.decode(tokenizer.encode('is the sea')), 'is the sea');
    assert.equal(tokenizer.renderChat([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }), '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
    assert.deepEqual(tokenizer.eosTokenIds, [262]);

    const sums = readFileSync(join(out, 'SHA256SUMS'), 'utf8').trim().split('\n').map((l) => l.split('  '));
    assert.deepEqual(sums.map(([, f]) => f), ['LICENSE', 'chat_template.jinja', 'config.json', 'generation_config.json', 'model.safetensors', 'source.json', 'tokenizer.json', 'tokenizer_config.json']);
    for (const [hash, file] of sums) assert.equal(sha256(join(out, file!)), hash, file);
    const source = JSON.parse(readFileSync(join(out, 'source.json'), 'utf8')) as { file: string; sha256: string; package: unknown };
    assert.equal(source.file, `${arch}.gguf`);
    assert.equal(source.sha256, sha256(gguf));
    assert.equal(source.package, null);
    // No licence in the file's metadata: LICENSE says so rather than inventing one.
    assert.match(readFileSync(join(out, 'LICENSE'), 'utf8'), /^Licence of these weights, as the GGUF file's metadata names it: not stated\n/);
  });
}
