// `npm run bench:engine -- --model DIR` (bench/real-model.ts): a user mistake is one line and exit 2,
// before any model is loaded; on SmolLM2 (when imported) a small run ends with the JSON line its
// header promises, every side's numbers present (llama.cpp's where .venv-llamacpp is built, null
// otherwise). The real-size numbers are measured by hand (docs/performance.md), never asserted: speed
// is not a test's business.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../python-oracle.ts';
import { skipWithoutSmollm2, smollm2Dir } from './smollm2-helpers.ts';

// Built by bash scripts/setup.sh --llamacpp (about 13 minutes; CI does not build it): without it the
// bench reports llama.cpp as null with its reason.
const llamacppBuilt = existsSync(join(repoRoot, '.venv-llamacpp/bin/llama-server')) && existsSync(join(repoRoot, '.venv-llamacpp/bin/python'));

const bench = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'bench/engine.ts'), ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 900_000 });

test('--model without a folder, or a folder that is not a model, or a bad count: one line, exit 2', () => {
  for (const [args, message] of [
    [['--model'], /--model needs a model folder/],
    [['--model', '/nonexistent/model'], /is not a model folder \(no config\.json\)/],
    [['--model', smollm2Dir, '--prompts', '0'], /--prompts needs a positive integer, got '0'/],
    [['--model', smollm2Dir, '--group', 'x'], /--group needs a positive integer, got 'x'/],
  ] as const) {
    const r = bench([...args]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

test('on SmolLM2: 2 prompts x 4 tokens, a LoRA step on 2 x 16 tokens and a group workload of 2 prompts x G = 2, stopping at the end of the answer capped at 1 in flight, with marft, transformers and (where built) llama.cpp end with the JSON line (vLLM skipped)', { skip: skipWithoutSmollm2, timeout: 900_000 }, () => {
  const r = bench(['--model', smollm2Dir, '--prompts', '2', '--new-tokens', '4', '--lora-batch', '2', '--lora-length', '16', '--group', '2', '--group-prompts', '2', '--group-new-tokens', '3', '--batch-cap', '1', '--no-vllm']);
  assert.equal(r.status, 0, r.stderr);
  const last = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, Record<string, number | null>>;
  assert.equal(last.model as unknown, 'smollm2-135m-instruct');
  assert.ok(last.sample_tokens_per_s!.marft! > 0 && last.sample_tokens_per_s!.transformers! > 0, r.stdout);
  assert.equal(last.sample_tokens_per_s!.vllm, null);
  if (llamacppBuilt) assert.ok(last.sample_tokens_per_s!['llama.cpp']! > 0 && last.peak_rss_mb!['llama.cpp']! > 0, r.stdout);
  else {
    assert.equal(last.sample_tokens_per_s!['llama.cpp'], null);
    assert.equal(last.peak_rss_mb!['llama.cpp'], null);
    assert.match(r.stdout, /^llama\.cpp: skipped, no \.venv-llamacpp/m);
  }
  assert.ok(last.lora_step_ms!.marft! > 0 && last.lora_step_ms!.pytorch! > 0, r.stdout);
  const c = last.stopping_tokens_per_s!;
  assert.ok(c.uncapped! > 0 && c.continuous! > 0 && c.chunks! > 0 && c.cap === 1, r.stdout);
  const g = last.group_sampling_tokens_per_s!;
  assert.ok(g.marft_shared_prefill! > 0 && g.marft_prefill_per_request! > 0, r.stdout);
  assert.deepEqual([g.prompts, g.group, g.new_tokens], [2, 2, 3]);
  assert.ok(g.prompt_tokens! > 150, `the group prompts carry the Reasoner's role: ${g.prompt_tokens} tokens`);
  assert.ok(last.peak_rss_mb!.marft! > 500 && last.peak_rss_mb!.transformers! > 500, r.stdout);
});
