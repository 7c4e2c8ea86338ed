// `--set KEY=VALUE` through the real CLI (issue 13, item 7): it changes a fresh run's configuration
// like the file would, and on `--resume` it is an explicit configuration change that the trainer
// records (keys that define the checkpoint stay refused); `--accept-config-change` accepts an
// edited config.json; eval refuses a CONFIG that does not fit the checkpoint. A few seconds on the
// lookup-table engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertUserError, runCli } from './spawn-cli.ts';

const example = new URL('../../examples/coordination-tabular.yaml', import.meta.url).pathname;
const json = (file: string): any => JSON.parse(readFileSync(file, 'utf8'));
const metricLines = (dir: string): number => readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').length;

test('--set on a fresh run, on --resume (recorded), refused for fixed keys; --accept-config-change; --set on eval', async () => {
  const run = join(mkdtempSync(join(tmpdir(), 'marft-cli-set-')), 'run');
  const fresh = await runCli({ args: ['train', example, '--run-dir', run, '--no-progress', '--set', 'train.steps=4', '--set', 'train.checkpointEvery=2', '--set', 'seed=3', '--set', 'actor.optim.lr=0.05'] });
  assert.equal(fresh.status, 0, fresh.stderr);
  const written = json(join(run, 'config.json'));
  assert.deepEqual([written.train.steps, written.train.checkpointEvery, written.seed, written.actor.optim.lr], [4, 2, 3, 0.05]);
  assert.equal(written.task.name, 'coordination-game', 'the rest comes from the file');
  assert.equal(metricLines(run), 4);

  // --set on --resume changes the run's configuration explicitly.
  const more = await runCli({ args: ['train', '--resume', run, '--no-progress', '--set', 'train.steps=6'] });
  assert.equal(more.status, 0, more.stderr);
  assert.equal(metricLines(run), 6);
  assert.equal(json(join(run, 'config.json')).train.steps, 6);
  assert.deepEqual(readFileSync(join(run, 'config-changes.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)), [{ step: 4, key: 'train.steps', old: 4, new: 6 }]);

  // A key that defines the checkpoint cannot change, --set or not.
  assertUserError(await runCli({ args: ['train', '--resume', run, '--no-progress', '--set', 'seed=5'] }), /^marft train: the configuration differs from the run's checkpoint at step 6 in seed 3 → 5, which cannot change mid-run/, 'seed');
  // An edited config.json needs --accept-config-change.
  const edited = json(join(run, 'config.json'));
  edited.train.steps = 8;
  writeFileSync(join(run, 'config.json'), JSON.stringify(edited, null, 2));
  assertUserError(await runCli({ args: ['train', '--resume', run, '--no-progress'] }), /differs from the run's checkpoint at step 6: train\.steps 6 → 8; .*--accept-config-change/, 'edited config.json');
  const accepted = await runCli({ args: ['train', '--resume', run, '--no-progress', '--accept-config-change'] });
  assert.equal(accepted.status, 0, accepted.stderr);
  assert.equal(metricLines(run), 8);

  // eval takes --set too (one evaluation seed instead of the file's two).
  const e = await runCli({ args: ['eval', example, '--checkpoint', run, '--set', 'eval.seeds=1'] });
  assert.equal(e.status, 0, e.stderr);
  const result = JSON.parse(e.stdout.trim().split('\n').pop()!) as { perSeed: number[]; step: number };
  assert.deepEqual([result.perSeed.length, result.step], [1, 8]);
  // A CONFIG that does not fit the checkpoint's trainables is one line (it was a stack trace from deep inside decoding).
  assertUserError(await runCli({ args: ['eval', example, '--checkpoint', run, '--set', 'algorithm=ippo'] }),
    /^marft eval: .*coordination-tabular\.yaml does not fit the checkpoint .*step-000008: it differs from the configuration the checkpoint was trained with in algorithm "marft-action" → "ippo"/, 'eval with another algorithm');
});
