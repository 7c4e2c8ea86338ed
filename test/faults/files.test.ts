// Faults: what is found in a run folder. A folder that holds something else (a model folder) is
// refused as a run directory and left as it was, an empty one becomes a run; a file of a newer marft
// (manifest, checkpoint state, run pointer, run mark) stops a resume or an evaluation in one line and
// changes nothing, and files of an older marft (no versions) are read; a stale lock whose process id
// now belongs to another process, or that was taken before a reboot, is taken over, while a live
// holder is refused with how to recover. After each, the run ends with the uninterrupted metrics.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { writeManifest } from '../../src/runs/manifest.ts';
import { bootId, processStartTime } from '../../src/runs/process-alive.ts';
import { assertOneLine, assertResumesToReference, latestStep, leftBehind, marft, metrics, start, tempRoot, waitUntil, writeConfig } from './fault-helpers.ts';

const root = tempRoot('files');
after(() => rmSync(root, { recursive: true, force: true }));

const config = writeConfig(root, 'run', { steps: 40, batch: 512, every: 7 });
let reference: Record<string, unknown>[] = [];

before(async () => {
  const r = await marft(['train', config, '--run-dir', join(root, 'whole'), '--no-progress']);
  assert.equal(r.status, 0, r.stderr);
  reference = metrics(join(root, 'whole'));
});

/** Every file under `dir` with its content. */
function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), `${rel}${e.name}/`);
      else out[`${rel}${e.name}`] = readFileSync(join(d, e.name), 'utf8');
    }
  };
  walk(dir, '');
  return out;
}

/** A run stopped (SIGTERM) once it has a checkpoint at step 7 or later. */
async function partRun(name: string): Promise<string> {
  const run = join(root, name);
  const trainer = start(['train', config, '--run-dir', run, '--no-progress']);
  await waitUntil(() => latestStep(run) >= 7, trainer, 'the first checkpoint');
  trainer.child.kill('SIGTERM');
  assert.equal((await trainer.exited).status, 143);
  return run;
}

const readJson = (file: string): Record<string, unknown> => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
const writeJson = (file: string, value: unknown): void => writeFileSync(file, JSON.stringify(value));

test('a folder that holds something else (a model folder) is refused as --run-dir and --resume, and left as it was; an empty folder becomes a run', async () => {
  const model = join(root, 'model');
  mkdirSync(model);
  writeJson(join(model, 'config.json'), { architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 8 });
  writeFileSync(join(model, 'model.safetensors'), 'weights');
  const before = contents(model);
  const fresh = await marft(['train', config, '--run-dir', model, '--no-progress']);
  assert.equal(fresh.status, 2, fresh.stderr);
  assertOneLine(fresh, new RegExp(`^marft train: --run-dir ${model} is not a marft run folder: it already holds config\\.json, model\\.safetensors; choose a new or empty folder \\(a run writes config\\.json, metrics\\.jsonl and checkpoints/ into it\\)$`), 'model folder');
  const resumed = await marft(['train', '--resume', model, '--no-progress']);
  assert.equal(resumed.status, 2, resumed.stderr);
  assertOneLine(resumed, new RegExp(`^marft train: --resume ${model}: not a marft run folder \\(it holds other files and no run\\)$`), 'resume of a model folder');
  assert.deepEqual(contents(model), before, 'the model folder was written into');

  const empty = join(root, 'empty');
  mkdirSync(empty);
  const r = await marft(['train', config, '--run-dir', empty, '--no-progress']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readJson(join(empty, 'marft-run.json')).format, 'marft-run');
  assert.deepEqual(metrics(empty), reference);
});

test('a file of a newer marft (manifest, checkpoint state, run pointer, run mark) is refused in one line by train --resume and eval, changing nothing; put back, the resume equals an uninterrupted run', async () => {
  const run = await partRun('newer');
  const ckpt = join(run, 'checkpoints', `step-${String(latestStep(run)).padStart(6, '0')}`);
  const newer = (file: string, format: string): RegExp =>
    new RegExp(`^marft (?:train|eval): ${file.replace(/[.()]/g, '\\$&')}.* was written by a newer marft \\(${format} version 7; this marft reads up to version 1\\); upgrade marft to use it\\. Nothing was changed$`);
  const cases: { file: string; format: string; edit: () => void }[] = [
    { file: join(ckpt, 'manifest.json'), format: 'marft-manifest', edit: () => writeJson(join(ckpt, 'manifest.json'), { ...readJson(join(ckpt, 'manifest.json')), version: 7 }) },
    // A newer marft writes the manifest over its newer state.json: the checkpoint is intact.
    { file: join(ckpt, 'state.json'), format: 'marft-checkpoint-state', edit: () => { writeJson(join(ckpt, 'state.json'), { ...readJson(join(ckpt, 'state.json')), version: 7 }); } },
    { file: join(run, 'checkpoints', 'latest.json'), format: 'marft-run-pointer', edit: () => writeJson(join(run, 'checkpoints', 'latest.json'), { ...readJson(join(run, 'checkpoints', 'latest.json')), version: 7 }) },
    { file: join(run, 'marft-run.json'), format: 'marft-run', edit: () => writeJson(join(run, 'marft-run.json'), { ...readJson(join(run, 'marft-run.json')), version: 7 }) },
  ];
  for (const c of cases) {
    const original = contents(run);
    c.edit();
    if (c.file.endsWith('state.json')) await writeManifest(ckpt);
    const edited = contents(run);
    const resumed = await marft(['train', '--resume', run, '--no-progress']);
    assert.equal(resumed.status, 2, `${c.format}: ${resumed.stderr}`);
    assertOneLine(resumed, newer(c.file, c.format), `${c.format}: train --resume`);
    if (c.format !== 'marft-run') {
      const evaluated = await marft(['eval', config, '--checkpoint', run]);
      assert.equal(evaluated.status, 2, `${c.format}: ${evaluated.stderr}`);
      assertOneLine(evaluated, newer(c.file, c.format), `${c.format}: eval`);
    }
    assert.deepEqual(contents(run), edited, `${c.format}: the run folder was changed`);
    // Put back as this marft wrote it.
    for (const [rel, text] of Object.entries(original)) writeFileSync(join(run, rel), text);
  }
  await assertResumesToReference(run, reference, 'newer files put back');
});

test('files of an older marft (no format versions, no run mark) are read: the resume equals an uninterrupted run', async () => {
  const run = await partRun('older');
  rmSync(join(run, 'marft-run.json'));
  const pointer = join(run, 'checkpoints', 'latest.json');
  writeJson(pointer, { dir: readJson(pointer).dir });
  for (const d of readdirSync(join(run, 'checkpoints')).filter((n) => n.startsWith('step-'))) {
    const dir = join(run, 'checkpoints', d);
    const { format: _f, version: _v, ...state } = readJson(join(dir, 'state.json'));
    writeJson(join(dir, 'state.json'), state);
    await writeManifest(dir);
    const { version: _mv, ...manifest } = readJson(join(dir, 'manifest.json'));
    writeJson(join(dir, 'manifest.json'), manifest);
  }
  await assertResumesToReference(run, reference, 'older files');
  assert.equal(readJson(join(run, 'marft-run.json')).version, 1, 'the run was not marked on its next start');
});

/** A live process that is not marft (its pid stands for a reused process id). */
function otherProcess(): { pid: number; stop: () => void } {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  return { pid: child.pid!, stop: () => child.kill('SIGKILL') };
}

test('locks: a live holder is refused with how to recover; a stale lock whose pid now belongs to another process is taken over; the resume equals an uninterrupted run', async () => {
  const run = await partRun('reused');
  const lock = join(run, '.lock');
  const other = otherProcess();
  try {
    const start = processStartTime(other.pid)!;
    assert.ok(start, 'no /proc start time for a live process');
    // The holder's identity matches the live process: it is the holder, refused without a guess.
    writeJson(lock, { pid: other.pid, host: hostname(), startedAt: 'earlier', pidStart: start, boot: bootId() });
    const held = await marft(['train', '--resume', run, '--no-progress']);
    assert.equal(held.status, 2, held.stderr);
    assertOneLine(held, new RegExp(`^marft train: ${run} is being trained by process ${other.pid} \\(since earlier\\); wait for it to finish, or stop it with kill -INT ${other.pid} \\(it saves a checkpoint and releases the lock\\) and resume\\. Two writers would interleave its metrics and checkpoints$`), 'a live holder');
    // An older lock without the start time: the refusal says what to do if the id was reused.
    writeJson(lock, { pid: other.pid, host: hostname(), startedAt: 'earlier' });
    const unsure = await marft(['train', '--resume', run, '--no-progress']);
    assert.equal(unsure.status, 2, unsure.stderr);
    assertOneLine(unsure, new RegExp(`; if process ${other.pid} is not a marft run \\(its id may have been reused\\), delete ${lock} and start again\\. Two writers`), 'an older lock');
    // The holder started at another time: the process with that id is another one, the lock is stale.
    writeJson(lock, { pid: other.pid, host: hostname(), startedAt: 'earlier', pidStart: String(Number(start) - 1), boot: bootId() });
    const r = await marft(['train', '--resume', run, '--no-progress']);
    assert.equal(r.status, 0, r.stderr);
    assertOneLine(r, new RegExp(`^marft: notice: ${run} was locked by process ${other.pid} \\(since earlier\\), which is no longer running \\(its process id now belongs to another process\\); taking the lock over$`), 'a reused pid');
    assert.deepEqual(metrics(run), reference);
    assert.equal(existsSync(lock), false);
  } finally {
    other.stop();
  }
});

test('a lock taken before the machine restarted is stale even if its pid is running now: taken over, the resume equals an uninterrupted run', async () => {
  const run = await partRun('rebooted');
  const other = otherProcess();
  try {
    writeJson(join(run, '.lock'), { pid: other.pid, host: hostname(), startedAt: 'before the reboot', pidStart: processStartTime(other.pid), boot: 'another-boot-id' });
    const r = await marft(['train', '--resume', run, '--no-progress']);
    assert.equal(r.status, 0, r.stderr);
    assertOneLine(r, /was locked by process \d+ \(since before the reboot\), which ran before this machine restarted; taking the lock over$/, 'rebooted');
    assert.deepEqual(metrics(run), reference);
    assert.deepEqual(leftBehind(run), []);
  } finally {
    other.stop();
  }
});
