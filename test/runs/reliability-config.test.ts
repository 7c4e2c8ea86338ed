// A resume checks the configuration against the snapshot in its checkpoint: a difference is refused
// in one line naming the keys, unless accepted explicitly (then applied, recorded in
// config-changes.jsonl and in config.json); keys that define the checkpoint are refused even then.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDifferences, fixedReason } from '../../src/runs/config-change.ts';
import { ConfigChangeError } from '../../src/runs/run-errors.ts';
import { noticeLog, runIn, tabularConfig } from './reliability-fixtures.ts';

const cli = new URL('../../bin/marft.mjs', import.meta.url).pathname;

async function refused(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (err) {
    assert.ok(err instanceof ConfigChangeError, String(err));
    return err.message;
  }
  assert.fail('the changed configuration was accepted');
}

test('an edited configuration is refused naming the keys; accepted explicitly, it is recorded and training continues with it', async () => {
  const run = mkdtempSync(join(tmpdir(), 'marft-config-'));
  await runIn(run, tabularConfig(), { stopAtStep: 6 });
  const edited = tabularConfig({ actor: { optim: { lr: 0.05 } }, rollout: { batchSize: 16 } });
  const message = await refused(runIn(run, edited));
  assert.equal(message, "the configuration differs from the run's checkpoint at step 6: actor.optim.lr 0.1 → 0.05, rollout.batchSize 32 → 16; to apply this change mid-run, resume with --accept-config-change (it is recorded in config-changes.jsonl)");
  assert.ok(!existsSync(join(run, 'config-changes.jsonl')));

  const { notices, notice } = noticeLog();
  const result = await runIn(run, edited, { acceptConfigChange: true, notice, stopAtStep: 9 });
  assert.equal(result.resumedFrom, 6);
  assert.equal(result.metrics.length, 9);
  assert.deepEqual(readFileSync(join(run, 'config-changes.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)), [
    { step: 6, key: 'actor.optim.lr', old: 0.1, new: 0.05 },
    { step: 6, key: 'rollout.batchSize', old: 32, new: 16 },
  ]);
  assert.equal(JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')).rollout.batchSize, 16);
  assert.match(notices.join('\n'), /configuration changed at step 6: actor\.optim\.lr 0\.1 → 0\.05, rollout\.batchSize 32 → 16/);
  // The new checkpoints carry the accepted configuration: resuming with it needs no flag, the old one is now the change.
  assert.equal((await runIn(run, edited, { stopAtStep: 12 })).resumedFrom, 9);
  assert.match(await refused(runIn(run, tabularConfig())), /at step 12: actor\.optim\.lr 0\.05 → 0\.1, rollout\.batchSize 16 → 32/);
});

test('keys that define the checkpoint (algorithm, seed, task options, policy shape) are refused even when changes are accepted', async () => {
  const run = mkdtempSync(join(tmpdir(), 'marft-config-fixed-'));
  await runIn(run, tabularConfig(), { stopAtStep: 3 });
  assert.match(await refused(runIn(run, tabularConfig({ seed: 4 }), { acceptConfigChange: true })), /^the configuration differs from the run's checkpoint at step 3 in seed 3 → 4, which cannot change mid-run \(seed: every step's sampling seed derives from it; another seed is another run\); start a new run for it$/);
  assert.match(await refused(runIn(run, tabularConfig({ algorithm: 'ippo' }), { acceptConfigChange: true })), /in algorithm "marft-action" → "ippo", which cannot change mid-run/);
  assert.match(await refused(runIn(run, tabularConfig({ task: { options: { symbols: 5 } }, actor: { optim: { lr: 0.2 } } }), { acceptConfigChange: true })), /in task\.options\.symbols 4 → 5, which cannot change mid-run \(task\.options\.symbols: the task defines/);
  assert.ok(!existsSync(join(run, 'config-changes.jsonl')), 'nothing recorded for a refused change');
  for (const key of ['algorithm', 'seed', 'model.engine', 'model.path', 'task.name', 'task.options.x', 'policy.loraRank', 'critic.kind', 'critic.mlpHidden']) assert.ok(fixedReason(key), key);
  for (const key of ['actor.optim.lr', 'critic.optim.lr', 'rollout.batchSize', 'train.steps', 'critic.warmupSteps']) assert.equal(fixedReason(key), null, key);
  assert.deepEqual(configDifferences({ a: { b: [1, 2], c: 1 } }, { a: { b: [1, 3], c: 1, d: true } }), [
    { key: 'a.b', old: [1, 2], new: [1, 3] },
    { key: 'a.d', old: undefined, new: true },
  ]);
});

test('through the CLI: an edited config.json is refused on --resume in one line, exit code 2, naming the key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'marft-config-cli-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, [
    'seed: 3', 'task: { name: coordination-game, options: { symbols: 4, dependency: true } }', 'model: { engine: tabular }',
    'actor: { klCoef: 0, optim: { lr: 0.1 } }', 'critic: { optim: { lr: 0.1 } }', 'rollout: { batchSize: 32, maxNewTokens: 1 }', 'train: { steps: 6, checkpointEvery: 3 }', '',
  ].join('\n'));
  const run = join(dir, 'run');
  const first = spawnSync(process.execPath, [cli, 'train', config, '--run-dir', run, '--no-progress'], { encoding: 'utf8' });
  assert.equal(first.status, 0, first.stderr);
  const saved = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8'));
  saved.seed = 7;
  writeFileSync(join(run, 'config.json'), JSON.stringify(saved));
  const r = spawnSync(process.execPath, [cli, 'train', '--resume', run, '--no-progress'], { encoding: 'utf8' });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /^marft train: the configuration differs from the run's checkpoint at step 6 in seed 3 → 7, which cannot change mid-run/);
});
