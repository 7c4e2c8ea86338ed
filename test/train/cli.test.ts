// `marft train` / `marft eval` through the real CLI on the tabular engine (a few seconds).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.ts';
import { tinyModelConfig } from '../../src/tasks/tiny-model.ts';
import { CharTokenizer } from '../../src/tokenizer/index.ts';

const cli = new URL('../../bin/marft.mjs', import.meta.url).pathname;
const example = new URL('../../examples/coordination-tabular.yaml', import.meta.url).pathname;
const marft = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

test('train writes config, metrics and atomic checkpoints; eval scores the checkpoint against the untrained system', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'marft-cli-')), 'run');
  const t = marft('train', example, '--run-dir', dir, '--no-progress');
  assert.equal(t.status, 0, t.stderr);
  const lines = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 100);
  assert.ok(existsSync(join(dir, 'config.json')));
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'checkpoints', 'latest.json'), 'utf8')), { dir: 'step-000100', format: 'marft-run-pointer', version: 1 });
  assert.ok(!existsSync(join(dir, 'checkpoints', 'step-000080')), 'only keepCheckpoints = 2 are kept');
  assert.ok(existsSync(join(dir, 'checkpoints', 'step-000090', 'state.json')));
  const e = marft('eval', example, '--checkpoint', dir, '--base');
  assert.equal(e.status, 0, e.stderr);
  const result = JSON.parse(e.stdout.trim().split('\n').pop()!) as { score: number; base: number; step: number; perSeed: number[] };
  assert.equal(result.step, 100);
  assert.equal(result.perSeed.length, 2);
  assert.ok(result.base < 0.25 && result.score >= 0.9, `base ${result.base}, trained ${result.score}`);
  // A second fresh run into the same folder is refused (it would mix two runs).
  const again = marft('train', example, '--run-dir', dir);
  assert.equal(again.status, 2);
  assert.match(again.stderr, /already holds a run with checkpoints; continue it with --resume/);
});

test('user mistakes are one line naming the key, exit code 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-cli-bad-'));
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'actor:\n  actionNormalisation: words\n');
  const r = marft('train', bad, '--run-dir', join(dir, 'run'));
  assert.equal(r.status, 2);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /actor\.actionNormalisation: got "words", expected one of 'sum', 'token', 'word'/);
  writeFileSync(bad, 'task: { name: nope }\nmodel: { engine: tabular }\n');
  assert.match(marft('train', bad, '--run-dir', join(dir, 'run2')).stderr, /task\.name: got "nope", expected one of .*'coordination-game'/);
  assert.match(marft('train', '--resume', join(dir, 'missing')).stderr, /--resume .*missing: no such folder/);
  assert.match(marft('train', '--resume', dir).stderr, /not a marft run folder \(it holds other files and no run\)/);
  assert.match(marft('train', bad).stderr, /--run-dir is required/);
  assert.equal(marft('train', '--help').status, 0);
  assert.equal(marft('eval', '--help').status, 0);
});

test('a task option that does not fit the model (found once the engine exists) is one line, exit code 2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-cli-mismatch-'));
  const model = join(dir, 'model');
  const narrow = createEngine(tinyModelConfig(new CharTokenizer('0123456789'), { hiddenSize: 8, layers: 1, contextLength: 64 }), { seed: 1 });
  await narrow.saveBase(model);
  const config = join(dir, 'mismatch.yaml');
  writeFileSync(config, `task: { name: workflow, options: { dataset: gsm8k, workflow: duo, tokenizer: char } }\nmodel: { engine: embedded, path: ${JSON.stringify(model)} }\ntrain: { steps: 1 }\n`);
  const r = marft('train', config, '--run-dir', join(dir, 'run'), '--no-progress');
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /^marft train: the model's vocabulary \(18\) is smaller than the tokenizer's \(105\)/);
  rmSync(dir, { recursive: true, force: true });
});
