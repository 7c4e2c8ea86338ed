// Run folders left in a bad state by a kill or an edit are repaired or resumed, never stuck: a
// half-written base model is rebuilt from the seed, leftovers of interrupted writes are removed,
// and a damaged latest pointer, checkpoint or metrics.jsonl falls back to what is intact, with the
// metrics of an uninterrupted run at the end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manifestProblem } from '../../src/runs/manifest.ts';
import { embeddedConfig, noticeLog, runIn, tabularConfig, untimed } from './reliability-fixtures.ts';

/** The pid of a process that has exited. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

test('a half-written RUN/base (config.json without weights, truncated weights, an interrupted temp folder) is rebuilt with a notice; the run trains as from an intact one', async () => {
  const root = mkdtempSync(join(tmpdir(), 'marft-base-'));
  const whole = join(root, 'whole');
  const reference = untimed((await runIn(whole, embeddedConfig())).metrics);
  assert.equal(await manifestProblem(join(whole, 'base')), null);
  assert.deepEqual(readdirSync(join(whole, 'base')).sort(), ['built-by.json', 'config.json', 'generation_config.json', 'manifest.json', 'model.safetensors']);

  const dead = deadPid();
  const cases: Record<string, (base: string) => void> = {
    'config.json only': (base) => {
      mkdirSync(base);
      cpSync(join(whole, 'base', 'config.json'), join(base, 'config.json'));
      writeFileSync(join(base, `.model.safetensors.tmp-${dead}-1-0`), 'partial');
    },
    'truncated weights, no manifest (an older write)': (base) => {
      cpSync(join(whole, 'base'), base, { recursive: true });
      rmSync(join(base, 'manifest.json'));
      truncateSync(join(base, 'model.safetensors'), 100);
    },
    'truncated weights under a manifest': (base) => {
      cpSync(join(whole, 'base'), base, { recursive: true });
      truncateSync(join(base, 'model.safetensors'), 100);
    },
  };
  for (const [name, damage] of Object.entries(cases)) {
    const run = join(root, name.replace(/\W+/g, '-'));
    mkdirSync(run);
    damage(join(run, 'base'));
    // An interrupted write of the whole folder, by a process that is gone.
    mkdirSync(join(run, `.base.tmp-${dead}`));
    writeFileSync(join(run, `.base.tmp-${dead}`, 'config.json'), '{}');
    const { notices, notice } = noticeLog();
    const result = await runIn(run, embeddedConfig(), { notice });
    assert.deepEqual(untimed(result.metrics), reference, name);
    assert.ok(notices.some((n) => /base is incomplete \(.*\); a write was interrupted or the folder was damaged, so it is rebuilt from the seed/.test(n)), `${name}: ${notices.join('\n')}`);
    assert.ok(notices.some((n) => n.includes(`.base.tmp-${dead}`)), name);
    assert.equal(await manifestProblem(join(run, 'base')), null, name);
    assert.deepEqual(readdirSync(run).filter((f) => f.includes('.tmp-')), [], name);
  }

  // Resuming a run whose base was damaged after its first step: rebuilt, and the run ends as the uninterrupted one.
  const resumed = join(root, 'resumed');
  await runIn(resumed, embeddedConfig(), { stopAtStep: 1 });
  truncateSync(join(resumed, 'base', 'model.safetensors'), 64);
  const { notices, notice } = noticeLog();
  const result = await runIn(resumed, embeddedConfig(), { notice });
  assert.equal(result.resumedFrom, 1);
  assert.deepEqual(untimed(result.metrics), reference);
  assert.ok(notices.some((n) => /model\.safetensors: 64 bytes, the manifest says \d+/.test(n)), notices.join('\n'));
});

test('damaged latest.json, a truncated adapter in the newest checkpoint and an edited metrics.jsonl: resume falls back to the newest intact checkpoint and ends with the uninterrupted metrics', async () => {
  const root = mkdtempSync(join(tmpdir(), 'marft-damage-'));
  const reference = untimed((await runIn(join(root, 'whole'), tabularConfig())).metrics);
  assert.equal(reference.length, 12);

  const run = join(root, 'damaged');
  await runIn(run, tabularConfig(), { stopAtStep: 9 });
  const ckpts = join(run, 'checkpoints');
  assert.deepEqual(readdirSync(ckpts).filter((d) => d.startsWith('step-')).sort(), ['step-000006', 'step-000009']);
  writeFileSync(join(ckpts, 'latest.json'), '{"dir":');
  truncateSync(join(ckpts, 'step-000009', 'adapters', 'policy', 'tabular_adapter.json'), 10);
  const metricsFile = join(run, 'metrics.jsonl');
  const lines = readFileSync(metricsFile, 'utf8').split('\n');
  lines.splice(2, 1); // a line of a checkpointed step lost
  writeFileSync(metricsFile, `${lines.join('\n')}{"step": 9, "cut`);

  const { notices, notice } = noticeLog();
  const result = await runIn(run, tabularConfig(), { notice });
  assert.equal(result.resumedFrom, 6);
  assert.deepEqual(untimed(result.metrics), reference);
  assert.match(notices.join('\n'), /latest\.json is damaged \(not valid JSON\); resuming from step-000006, the newest intact checkpoint/);
  assert.match(notices.join('\n'), /metrics\.jsonl does not hold the 6 lines step-000006 covers .*; restored them from the checkpoint/);
});

test('leftovers of interrupted writes are removed at the start of a run when their writer is dead; a live writer\'s are kept', async () => {
  const run = mkdtempSync(join(tmpdir(), 'marft-leftovers-'));
  await runIn(run, tabularConfig(), { stopAtStep: 3 });
  const dead = deadPid();
  const ckpts = join(run, 'checkpoints');
  const stale = [join(ckpts, `.tmp-step-000006-${dead}`), join(ckpts, `.tmp-step-000003-${process.pid}-old`)];
  for (const d of stale) {
    mkdirSync(d);
    writeFileSync(join(d, 'state.json'), '{}');
  }
  writeFileSync(join(ckpts, `.latest.json.tmp-${dead}`), '{"dir":"step-0');
  writeFileSync(join(run, `config.json.tmp-${dead}`), '{');
  // pid 1 always runs: its temporaries may be in the middle of a write and stay.
  const live = join(ckpts, '.tmp-step-000009-1');
  mkdirSync(live);
  const { notices, notice } = noticeLog();
  const result = await runIn(run, tabularConfig(), { notice, stopAtStep: 6 });
  assert.equal(result.resumedFrom, 3);
  for (const d of [...stale, join(ckpts, `.latest.json.tmp-${dead}`), join(run, `config.json.tmp-${dead}`)]) assert.ok(!existsSync(d), d);
  assert.ok(existsSync(live));
  assert.match(notices.join('\n'), /removed 3 leftover\(s\) of interrupted writes in .*checkpoints/);
  assert.deepEqual(readdirSync(ckpts).sort(), ['.tmp-step-000009-1', 'latest.json', 'step-000003', 'step-000006']);
});
