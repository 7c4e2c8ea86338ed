import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { latestCheckpoint } from '../../src/rl/checkpoint.ts';

function runWith(folders: { name: string; complete: boolean }[], latest?: string): string {
  const run = mkdtempSync(join(tmpdir(), 'marft-ckpt-'));
  for (const f of folders) {
    mkdirSync(join(run, 'checkpoints', f.name), { recursive: true });
    if (f.complete) writeFileSync(join(run, 'checkpoints', f.name, 'state.json'), '{}');
  }
  if (latest) writeFileSync(join(run, 'checkpoints', 'latest.json'), JSON.stringify({ dir: latest }));
  return run;
}

test('latestCheckpoint follows latest.json when its folder is complete', async () => {
  const run = runWith([{ name: 'step-000002', complete: true }, { name: 'step-000004', complete: true }], 'step-000002');
  assert.equal(await latestCheckpoint(run), join(run, 'checkpoints', 'step-000002'));
});

test('latestCheckpoint falls back to the newest complete step folder when latest.json names a missing one', async () => {
  const run = runWith([{ name: 'step-000002', complete: true }, { name: 'step-000003', complete: false }], 'step-000004');
  assert.equal(await latestCheckpoint(run), join(run, 'checkpoints', 'step-000002'));
});

test('latestCheckpoint is null for a run without complete checkpoints', async () => {
  assert.equal(await latestCheckpoint(runWith([{ name: 'step-000001', complete: false }])), null);
  assert.equal(await latestCheckpoint(mkdtempSync(join(tmpdir(), 'marft-ckpt-'))), null);
});
