// A diverging run (learning rate 1e10, Adam ε = 0) stops with one line naming the step and the
// likely cause; no checkpoint holds a non-finite (or, on the tabular engine, float32-overflowing)
// parameter; resuming with the same configuration gives the same one-line error, not a crash; and
// resuming with a corrected configuration (acceptConfigChange) trains on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointProblem } from '../../src/runs/checkpoint.ts';
import { assertFolderFinite } from '../../src/runs/finite-guard.ts';
import { MetricsLog } from '../../src/runs/metrics-log.ts';
import { DivergenceError } from '../../src/runs/run-errors.ts';
import { embeddedConfig, noticeLog, runIn, tabularConfig } from './reliability-fixtures.ts';

const cli = new URL('../../bin/marft.mjs', import.meta.url).pathname;
const huge = { actor: { optim: { lr: 1e10 } }, critic: { optim: { lr: 1e10 } } };

/** Every number in a JSON document (the tabular engine's files). */
function numbersIn(value: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const v of value) numbersIn(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) numbersIn(v, out);
  else out.push(value);
  return out;
}

/** Checks every checkpoint of the run is intact and holds only finite, float32-representable numbers. */
async function assertCheckpointsFinite(runDir: string): Promise<string[]> {
  const root = join(runDir, 'checkpoints');
  const steps = readdirSync(root).filter((d) => d.startsWith('step-'));
  for (const d of steps) {
    assert.equal(await checkpointProblem(join(root, d)), null, d);
    await assertFolderFinite(join(root, d));
    for (const kind of ['adapters', 'critics']) {
      for (const name of readdirSync(join(root, d, kind))) {
        for (const file of readdirSync(join(root, d, kind, name)).filter((f) => f.startsWith('tabular_'))) {
          const values = numbersIn(JSON.parse(readFileSync(join(root, d, kind, name, file), 'utf8')).rows);
          assert.ok(values.every((x) => typeof x === 'number' && Math.abs(x) <= 3.4028234663852886e38), `${d}/${kind}/${name}/${file}`);
        }
      }
    }
  }
  return steps;
}

async function divergence(run: Promise<unknown>): Promise<DivergenceError> {
  try {
    await run;
  } catch (err) {
    if (err instanceof DivergenceError) return err;
    throw err;
  }
  assert.fail('the run did not diverge');
}

test('tabular engine, lr 1e10: a one-line error naming the step and the learning rate; nothing non-finite checkpointed; resume repeats the error, a corrected resume trains on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-diverge-'));
  const err = await divergence(runIn(dir, tabularConfig(huge)));
  assert.equal(err.message.split('\n').length, 1);
  assert.match(err.message, new RegExp(`^step ${err.step}: .* (is|are) not finite.*; the learning rate \\((actor|critic)\\.optim\\.lr = 1e10\\) may be too large; nothing of this step was checkpointed`));
  const steps = await assertCheckpointsFinite(dir);
  assert.ok(steps.length > 0 && steps.every((d) => Number(d.slice(5)) <= err.step), `checkpoints ${steps} past step ${err.step}`);
  // The diverged step's line is kept for diagnosis.
  const lines = await new MetricsLog(join(dir, 'metrics.jsonl')).read();
  assert.equal(lines.length, err.step + 1);
  assert.equal(lines[err.step]!.step, err.step);

  const again = await divergence(runIn(dir, tabularConfig(huge)));
  assert.equal(again.message, err.message);

  const { notices, notice } = noticeLog();
  const fixed = await runIn(dir, tabularConfig(), { acceptConfigChange: true, notice });
  assert.equal(fixed.metrics.length, 12);
  assert.ok(fixed.resumedFrom !== null && fixed.resumedFrom <= err.step);
  assert.ok(notices.some((n) => /configuration changed at step \d+: actor\.optim\.lr 1e10 → 0\.1, critic\.optim\.lr 1e10 → 0\.1/.test(n)), notices.join('\n'));
  await assertCheckpointsFinite(dir);
});

test('tabular engine, Adam β1 = 1: the NaN metric is named with its cause, and metrics.jsonl keeps it as "NaN", read back as NaN', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-diverge-beta-'));
  const err = await divergence(runIn(dir, tabularConfig({ critic: { optim: { beta1: 1 } } })));
  assert.match(err.message, new RegExp(`^step ${err.step}: the critic's values are not finite \\(NaN\\); critic\\.optim\\.beta1 = 1 makes Adam's bias correction divide by zero`));
  const last = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').pop()!;
  assert.match(last, /"value_mean":"NaN"/);
  const read = await new MetricsLog(join(dir, 'metrics.jsonl')).read();
  assert.ok(Number.isNaN(read[err.step]!.value_mean));
  assert.ok(err.step < 3 && !existsSync(join(dir, 'checkpoints')), 'it diverges before the first checkpoint, which is then never written');
});

test('embedded engine, lr 1e10 and Adam ε = 0: the step whose update left NaN parameters is named; resume does not die on NaN logits', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-diverge-emb-'));
  const err = await divergence(runIn(dir, embeddedConfig(huge)));
  assert.match(err.message, new RegExp(`^step ${err.step}: the parameters of the (policy adapter 'policy'|critic 'critic') are not finite; the learning rate \\((actor|critic)\\.optim\\.lr = 1e10\\) may be too large`));
  const steps = await assertCheckpointsFinite(dir);
  assert.ok(steps.every((d) => Number(d.slice(5)) <= err.step));
  // Before this guard the resumed run died in the sampler ("logit 0 is NaN"); now it is the same one line.
  assert.equal((await divergence(runIn(dir, embeddedConfig(huge)))).message, err.message);
  const fixed = await runIn(dir, embeddedConfig(), { acceptConfigChange: true });
  assert.equal(fixed.metrics.length, 3);

  const eps0 = await divergence(runIn(mkdtempSync(join(tmpdir(), 'marft-diverge-eps-')), embeddedConfig({ actor: { optim: { eps: 0 } } })));
  assert.match(eps0.message, /^step \d+: the parameters of the policy adapter 'policy' are not finite; actor\.optim\.eps = 0 divides by zero/);
});

test('through the CLI a diverging run is one line on stderr, exit code 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-diverge-cli-'));
  const config = join(dir, 'diverge.yaml');
  writeFileSync(config, [
    'seed: 3', 'task: { name: coordination-game, options: { symbols: 4, dependency: true } }', 'model: { engine: tabular }',
    'actor: { klCoef: 0, optim: { lr: 1e10 } }', 'critic: { optim: { lr: 1e10 } }', 'rollout: { batchSize: 32, maxNewTokens: 1 }', 'train: { steps: 12, checkpointEvery: 3 }', '',
  ].join('\n'));
  const r = spawnSync(process.execPath, [cli, 'train', config, '--run-dir', join(dir, 'run'), '--no-progress'], { encoding: 'utf8' });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /^marft train: step \d+: .* not finite.*may be too large/);
});
