// `marft train` accepts every task docs name, the demo's arith-duo included (docs/demo.md): tasks are
// registered in one place (src/run/task-registry.ts), not when the module defining them happens to be
// loaded (arith-duo was registered only when `marft demo` loaded it, so `marft train` rejected it).
// Tiny budgets: two pretraining steps, one MARFT step of two problems; about 2 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registeredTasks } from '../../src/run/task-registry.ts';
import { runCli } from './spawn-cli.ts';

test('every task is registered in one place, without importing the module that defines it', () => {
  assert.deepEqual(registeredTasks(), ['arith-duo', 'arith-pair', 'bandit', 'code-pair', 'coordination-game', 'relay-game', 'workflow']);
});

test('marft train runs the demo task arith-duo from a configuration', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-arith-duo-'));
  try {
    const config = join(dir, 'arith-duo.yaml');
    writeFileSync(config, [
      'task: { name: arith-duo, options: { heldOut: 100, pretrainSteps: 2 } }',
      'rollout: { batchSize: 2, maxNewTokens: 16 }',
      'train: { steps: 1 }',
      '',
    ].join('\n'));
    const run = join(dir, 'run');
    const r = await runCli({ args: ['train', config, '--run-dir', run, '--no-progress'] });
    assert.equal(r.status, 0, `exit code ${r.status}; stderr: ${r.stderr}`);
    assert.equal(JSON.parse(r.stdout.trim().split('\n').at(-1)!).steps, 1);
    // The model the task built (two pretraining steps) is saved for a resume or an evaluation.
    assert.ok(existsSync(join(run, 'base', 'config.json')), 'RUN/base holds the task-built model');
    assert.ok(existsSync(join(run, 'checkpoints', 'step-000001')), 'the step was checkpointed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
