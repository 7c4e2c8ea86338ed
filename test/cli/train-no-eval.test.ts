// `marft train --no-eval` skips the held-out scoring before the first step and after the last (marft
// experiment scores each checkpoint itself with `marft eval`, so a cell scored the held-out set
// three times). The evaluations decode with their own seeds, so skipping them must leave training
// exactly as it was: the checkpoint's adapters, critic, optimiser state and step are compared byte
// for byte (the same process arithmetic on the same machine, so equality is guaranteed). MARFT is
// used because it has the most state (a critic besides the adapters). Tiny budgets; a few seconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { runCli } from './spawn-cli.ts';

/** sha256 of every file under `dir` but the manifest and metrics (they hold timings), by relative path. */
function digests(dir: string, root = dir, out: Record<string, string> = {}): Record<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) digests(path, root, out);
    else if (name !== 'manifest.json' && name !== 'metrics.jsonl') out[relative(root, path)] = createHash('sha256').update(new Uint8Array(readFileSync(path))).digest('hex');
  }
  return out;
}

test('marft train --no-eval writes no evaluations and trains exactly as a run that scores before and after', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-no-eval-'));
  try {
    const config = join(dir, 'duo.yaml');
    writeFileSync(config, [
      'task: { name: arith-duo, options: { heldOut: 100, pretrainSteps: 2 } }',
      'algorithm: marft-action',
      'rollout: { batchSize: 2, maxNewTokens: 16 }',
      'train: { steps: 2, checkpointEvery: 2 }',
      'eval: { problems: 4, seeds: 2 }',
      '',
    ].join('\n'));
    const last = (stdout: string): Record<string, unknown> => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    const scored = join(dir, 'scored');
    const a = await runCli({ args: ['train', config, '--run-dir', scored, '--no-progress'] });
    assert.equal(a.status, 0, a.stderr);
    assert.equal(typeof last(a.stdout).eval_before, 'number');
    assert.ok(existsSync(join(scored, 'evaluations.json')));

    const unscored = join(dir, 'unscored');
    const b = await runCli({ args: ['train', config, '--run-dir', unscored, '--no-progress', '--no-eval'] });
    assert.equal(b.status, 0, b.stderr);
    assert.equal(last(b.stdout).eval_before, null);
    assert.equal(last(b.stdout).eval_after, null);
    assert.equal(existsSync(join(unscored, 'evaluations.json')), false, 'no evaluations.json without evaluations');

    const step = (run: string): string => join(run, 'checkpoints', 'step-000002');
    const da = digests(step(scored));
    assert.ok(Object.keys(da).some((f) => f.startsWith('adapters')) && Object.keys(da).some((f) => f.includes('critic')), `the checkpoint holds adapters and a critic: ${Object.keys(da).join(', ')}`);
    assert.deepEqual(digests(step(unscored)), da);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
