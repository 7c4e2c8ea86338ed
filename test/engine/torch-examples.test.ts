// Issue 11's "`npx marft train CONFIG --set model.engine=torch` runs the shipped examples end to end on
// the CPU", as a test: every shipped example that needs no downloaded model trains one step through the
// CLI with the torch engine (the task's own tiny decoder through RUN/base, or the folder of
// scripts/make-tiny-model.ts for GSM8K), writes finite metrics and a checkpoint with its adapters.
// coordination-embedded (with numbers against the embedded engine) is test/engine/torch-train.test.ts,
// mas-opd-tiny is test/engine/torch-opd-step.test.ts; mas-opd-paper needs real Qwen3 folders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../cli/spawn-cli.ts';
import { tempDir } from './oracle-helpers.ts';
import { skipWithoutTorch } from './torch-helpers.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
/** About 60 s on 2 shared cores (six CLI runs, each starting a torch worker): skipped in the fast suite. */
const skip = skipWithoutTorch || (process.env.MARFT_LONG_TESTS === '0' ? 'long test (MARFT_LONG_TESTS=0)' : false);

const EXAMPLES = ['bandit-tabular', 'coordination-tabular', 'cure-mbpp-tiny', 'marft-defaults', 'mbpp-duo-code', 'gsm8k-duo'];

test('every shipped example without a downloaded model trains one step with --set model.engine=torch: finite metrics, a checkpoint with its adapters', { skip, timeout: 600_000 }, async () => {
  const dir = tempDir('torch-examples');
  try {
    const model = join(dir, 'tiny-model');
    execFileSync(process.execPath, ['--import', 'tsx', join(repo, 'scripts/make-tiny-model.ts'), '--out', model, '--hidden-size', '32', '--seed', '3'], { cwd: repo });
    const shipped = readdirSync(join(repo, 'examples')).filter((f) => f.endsWith('.yaml')).map((f) => f.replace(/\.yaml$/, ''));
    const covered = [...EXAMPLES, 'coordination-embedded', 'mas-opd-tiny', 'mas-opd-paper'];
    assert.deepEqual(shipped.filter((e) => !covered.includes(e)), [], 'a new example: add it here or say which test covers it');
    for (const example of EXAMPLES) {
      const runDir = join(dir, example);
      const modelPath = example === 'gsm8k-duo' ? ['--set', `model.path=${model}`, '--set', `task.options.tokenizer=${model}`] : [];
      const r = await runCli({
        cwd: repo,
        args: ['train', `examples/${example}.yaml`, '--run-dir', runDir, '--set', 'model.engine=torch', '--set', 'train.steps=1', '--set', 'model.threads=1', ...modelPath, '--no-progress'],
      });
      assert.equal(r.status, 0, `${example}: exit ${r.status}\n${r.stderr}`);
      const config = JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8')) as { model: { engine: string } };
      assert.equal(config.model.engine, 'torch', example);
      const lines = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n');
      assert.equal(lines.length, 1, example);
      const metrics = JSON.parse(lines[0]!) as Record<string, unknown>;
      for (const [k, v] of Object.entries(metrics)) if (typeof v === 'number') assert.ok(Number.isFinite(v), `${example}: ${k} = ${v}`);
      assert.ok(typeof metrics['policy_loss'] === 'number', `${example}: no policy_loss`);
      const adapters = join(runDir, 'checkpoints', 'step-000001', 'adapters');
      const saved = readdirSync(adapters);
      assert.ok(saved.length > 0, `${example}: no adapter saved`);
      for (const a of saved) assert.ok(existsSync(join(adapters, a, 'adapter_model.safetensors')), `${example}: ${a} is not a PEFT folder`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
