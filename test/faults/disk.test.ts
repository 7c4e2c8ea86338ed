// Faults: the disk. A full disk (a small tmpfs) while a checkpoint or a metrics line is written, a
// checkpoints folder that turns read-only while the run trains (a bind mount remounted read-only),
// a read-only run folder or checkpoints folder at a resume, and a read-only place for a new run or
// an experiment's output: each ends the command with one line naming the path, the reason and what
// to do, exit status 2, nothing half-written, the lock released; after making room (or remounting
// read-write) a resume ends with the uninterrupted run's metrics.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  assertOneLine, assertResumesToReference, latestStep, leftBehind, marft, metrics, readOnly, readWrite, resizeTmpfs, skipWithoutMounts,
  start, tempRoot, waitUntil, withBindMount, withTmpfs, writeConfig,
} from './fault-helpers.ts';

const skip = skipWithoutMounts;
const root = tempRoot('disk');
after(() => rmSync(root, { recursive: true, force: true }));

const config = writeConfig(root, 'run', { steps: 60, batch: 512, every: 7 });
let reference: Record<string, unknown>[] = [];

before(async () => {
  if (skip) return;
  const r = await marft(['train', config, '--run-dir', join(root, 'whole'), '--no-progress']);
  assert.equal(r.status, 0, r.stderr);
  reference = metrics(join(root, 'whole'));
});

const full = (path: string, run: string): RegExp =>
  new RegExp(`^marft train: cannot write ${path}: no space is left on its file system \\(ENOSPC\\); free space there, or move the folder to a larger disk; the run's checkpoints are intact: once that is fixed, continue with marft train --resume ${run}$`);
const readOnlyLine = (path: string, tail: string): RegExp =>
  new RegExp(`^marft (?:train|experiment): cannot write ${path}: its file system is read-only \\(EROFS\\); remount it read-write, or move the folder to a writable disk${tail}$`);
const resumeTail = (run: string): string => `; the run's checkpoints are intact: once that is fixed, continue with marft train --resume ${run}`;

/** The files of the run folder and their contents (what a refused command must leave as it was). */
function snapshot(run: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name), `${rel}${e.name}/`);
      else out[`${rel}${e.name}`] = readFileSync(join(dir, e.name), 'utf8');
    }
  };
  walk(run, '');
  return out;
}

/** Trains until a checkpoint at step `at` or later exists, then stops the run with SIGTERM. */
async function trainPart(run: string, at: number): Promise<void> {
  const trainer = start(['train', config, '--run-dir', run, '--no-progress']);
  await waitUntil(() => latestStep(run) >= at, trainer, `a checkpoint at step ${at}`);
  trainer.child.kill('SIGTERM');
  assert.equal((await trainer.exited).status, 143);
}

test('a full disk while a checkpoint is written: one line naming it, exit 2, the earlier checkpoints intact, no temporaries; after making room the resume equals an uninterrupted run', { skip }, async () => {
  const run = join(root, 'full-checkpoints');
  const ckpts = join(run, 'checkpoints');
  // Room for three or four checkpoints of this run (each holds the metrics lines up to its step).
  await withTmpfs(ckpts, '128k', async () => {
    const r = await marft(['train', config, '--run-dir', run, '--no-progress']);
    assert.equal(r.status, 2, r.stderr);
    assertOneLine(r, full(`${ckpts}/(?:step-\\d+|latest\\.json)`, run), 'full checkpoints folder');
    assert.ok(latestStep(run) >= 7, 'no checkpoint was written before the disk was full');
    assert.deepEqual(leftBehind(run), []);
    resizeTmpfs(ckpts, '16m');
    await assertResumesToReference(run, reference, 'full checkpoints folder');
  });
});

test('a full disk while a metrics line is written: one line naming metrics.jsonl, exit 2; after making room the resume equals an uninterrupted run', { skip }, async () => {
  const run = join(root, 'full-metrics');
  // The run folder is small (its metrics fill it after about a dozen steps); checkpoints have room of their own.
  await withTmpfs(run, '24k', async () => {
    const ckpts = join(run, 'checkpoints');
    mkdirSync(ckpts);
    await withTmpfs(ckpts, '16m', async () => {
      const r = await marft(['train', config, '--run-dir', run, '--no-progress']);
      assert.equal(r.status, 2, r.stderr);
      assertOneLine(r, full(`${run}/metrics\\.jsonl`, run), 'full run folder');
      assert.ok(metrics(run).length < 60);
      assert.deepEqual(leftBehind(run), []);
      resizeTmpfs(run, '16m');
      await assertResumesToReference(run, reference, 'full run folder');
    });
  });
});

test('a checkpoints folder that turns read-only while the run trains: one line naming it, exit 2; remounted read-write, the resume equals an uninterrupted run', { skip }, async () => {
  const run = join(root, 'ro-mid-run');
  const ckpts = join(run, 'checkpoints');
  mkdirSync(ckpts, { recursive: true });
  await withBindMount(ckpts, async () => {
    const trainer = start(['train', config, '--run-dir', run, '--no-progress']);
    await waitUntil(() => latestStep(run) >= 7, trainer, 'the first checkpoint');
    readOnly(ckpts);
    const r = await trainer.exited;
    assert.equal(r.status, 2, r.stderr);
    assertOneLine(r, readOnlyLine(`${ckpts}/(?:step-\\d+|latest\\.json)`, resumeTail(run)), 'checkpoints turned read-only');
    assert.deepEqual(leftBehind(run).filter((p) => !p.startsWith(`${ckpts}/`)), [], 'the lock was left');
    readWrite(ckpts);
    await assertResumesToReference(run, reference, 'checkpoints turned read-only');
  });
});

test('a read-only run folder, then a read-only checkpoints folder, at a resume: one line each, exit 2, nothing changed; writable again, the resume equals an uninterrupted run', { skip }, async () => {
  const run = join(root, 'ro-resume');
  await trainPart(run, 7);
  const before = snapshot(run);
  await withBindMount(run, async () => {
    readOnly(run);
    const r = await marft(['train', '--resume', run, '--no-progress']);
    assert.equal(r.status, 2, r.stderr);
    assertOneLine(r, readOnlyLine(`${run}/\\.lock`, resumeTail(run)), 'read-only run folder');
  });
  const ckpts = join(run, 'checkpoints');
  await withBindMount(ckpts, async () => {
    readOnly(ckpts);
    const r = await marft(['train', '--resume', run, '--no-progress']);
    assert.equal(r.status, 2, r.stderr);
    // Refused before any step is spent (the checkpoints folder is checked at the start).
    assertOneLine(r, readOnlyLine(ckpts, resumeTail(run)), 'read-only checkpoints folder');
  });
  assert.deepEqual(snapshot(run), before, 'a refused resume changed the run folder');
  await assertResumesToReference(run, reference, 'read-only at resume');
});

test('a new run or an experiment output in a read-only place: one line naming it, exit 2, nothing written', { skip }, async () => {
  const place = join(root, 'ro-place');
  mkdirSync(place);
  await withBindMount(place, async () => {
    readOnly(place);
    const r = await marft(['train', config, '--run-dir', join(place, 'run'), '--no-progress']);
    assert.equal(r.status, 2, r.stderr);
    assertOneLine(r, readOnlyLine(`${place}/run`, '; nothing was written: once that is fixed, run the same command again'), 'new run');
    const experiment = new URL('../experiments/coordination-two-rows.yaml', import.meta.url).pathname;
    const e = await marft(['experiment', experiment, '--out', join(place, 'out')]);
    assert.equal(e.status, 2, e.stderr);
    assertOneLine(e, readOnlyLine(`${place}/out`, ''), 'experiment output');
  });
  assert.deepEqual(readdirSync(place), []);
});
