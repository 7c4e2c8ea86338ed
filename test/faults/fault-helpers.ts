// Shared by the fault-injection suite (test/faults/*.test.ts): real `marft` processes (through
// bin/marft.mjs, or npx), real signals, and real file systems — a small tmpfs for a full disk, a
// read-only bind mount for a folder that turned read-only. Mounting needs root: CI runs as root, so
// there a missing capability is a failing test, not a skip (as test/engine/vllm-helpers.ts does for
// vLLM); elsewhere the mounting tests skip with the reason. Every mount is undone in `finally`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isTimingKey } from '../../src/runs/metrics-log.ts';

export const cli = new URL('../../bin/marft.mjs', import.meta.url).pathname;
export const repoRoot = new URL('../..', import.meta.url).pathname;

/** Why mounting cannot be tested here, or null: root, and a tmpfs mount that works. */
function mountProblem(): string | null {
  if (process.platform !== 'linux') return `mounts are tested on Linux only (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting a tmpfs or a read-only bind mount needs root (CI runs as root)';
  const dir = mkdtempSync(join(tmpdir(), 'marft-mount-probe-'));
  try {
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'marft-probe', dir], { encoding: 'utf8' });
    if (r.status !== 0) return `mount -t tmpfs failed here (${(r.stderr || r.error?.message || '').trim()})`;
    spawnSync('umount', [dir]);
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const problem = mountProblem();
/** The skip reason of a test that mounts file systems (false: it runs). */
export const skipWithoutMounts: string | false = problem ?? false;

if (problem && process.env.CI === 'true') {
  test('the fault-injection suite can mount file systems (CI runs as root)', () => assert.fail(`${problem}: CI must run the disk and read-only cases`));
}

function sh(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr.trim()}`);
}

/** Unmounts `dir` (lazily if it is busy, so that a failing test never leaves a mount behind). */
export function unmount(dir: string): void {
  if (spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
}

/** Mounts a tmpfs of `size` (e.g. "128k") on `dir` (created), runs `body`, unmounts. */
export async function withTmpfs<T>(dir: string, size: string, body: () => Promise<T>): Promise<T> {
  mkdirSync(dir, { recursive: true });
  sh('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'marft-fault', dir]);
  try {
    return await body();
  } finally {
    unmount(dir);
  }
}

/** Gives the tmpfs on `dir` a new size: room made on a full disk. */
export const resizeTmpfs = (dir: string, size: string): void => sh('mount', ['-o', `remount,size=${size}`, dir]);

/** Binds `dir` onto itself (read-write), runs `body`, unmounts; readOnly/readWrite flip it meanwhile. */
export async function withBindMount<T>(dir: string, body: () => Promise<T>): Promise<T> {
  sh('mount', ['--bind', dir, dir]);
  try {
    return await body();
  } finally {
    unmount(dir);
  }
}

export const readOnly = (dir: string): void => sh('mount', ['-o', 'remount,ro,bind', dir]);
export const readWrite = (dir: string): void => sh('mount', ['-o', 'remount,rw,bind', dir]);

/** A fresh folder for one test file (its after hook removes it). */
export function tempRoot(name: string): string {
  return mkdtempSync(join(tmpdir(), `marft-fault-${name}-`));
}

/**
 * The suite's run: action-level MARFT on the coordination game, tabular engine, `steps` steps of
 * `batch` episodes, a checkpoint every `every` steps, all checkpoints kept (a full disk fills up).
 */
export function writeConfig(dir: string, name: string, o: { steps: number; batch: number; every: number; keep?: number }): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, [
    'algorithm: marft-action', 'seed: 3',
    'task: { name: coordination-game, options: { symbols: 4, dependency: true } }',
    'model: { engine: tabular }', 'actor: { klCoef: 0, optim: { lr: 0.1 } }', 'critic: { optim: { lr: 0.1 } }',
    `rollout: { batchSize: ${o.batch}, maxNewTokens: 1 }`,
    `train: { steps: ${o.steps}, checkpointEvery: ${o.every}, keepCheckpoints: ${o.keep ?? 1000} }`, '',
  ].join('\n'));
  return file;
}

export interface Exit {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcess;
  exited: Promise<Exit>;
  done(): boolean;
}

/** Starts `command args` (default: node bin/marft.mjs ARGS) and collects its output. */
export function start(args: string[], options: { command?: string; cwd?: string } = {}): Running {
  const child = options.command
    ? spawn(options.command, args, { cwd: options.cwd ?? repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [cli, ...args], { cwd: options.cwd ?? repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let finished = false;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<Exit>((resolve) => child.on('close', (status, signal) => {
    finished = true;
    resolve({ status, signal, stdout, stderr });
  }));
  return { child, exited, done: () => finished };
}

/** Runs `marft ARGS` to the end. */
export const marft = (args: string[]): Promise<Exit> => start(args).exited;

/** The step of the run's latest checkpoint (0 when it has none, or while latest.json is replaced). */
export function latestStep(runDir: string): number {
  try {
    return Number((JSON.parse(readFileSync(join(runDir, 'checkpoints', 'latest.json'), 'utf8')) as { dir: string }).dir.slice(5));
  } catch {
    return 0;
  }
}

/** Waits until `ready()` holds; fails if `running` ends first or `timeoutMs` passes. */
export async function waitUntil(ready: () => boolean, running: Running, what: string, timeoutMs = 120_000): Promise<void> {
  const t0 = Date.now();
  while (!ready()) {
    if (running.done()) {
      const r = await running.exited;
      assert.fail(`the run ended (exit ${r.status}) before ${what}: ${r.stderr}`);
    }
    if (Date.now() - t0 > timeoutMs) assert.fail(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 5));
  }
}

/** metrics.jsonl without timings. */
export function metrics(runDir: string): Record<string, unknown>[] {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => {
    const m = JSON.parse(l) as Record<string, unknown>;
    for (const k of Object.keys(m)) if (isTimingKey(k)) delete m[k];
    return m;
  });
}

/** Exactly one line on stderr, matching `pattern`; no stack trace. */
export function assertOneLine(r: Exit, pattern: RegExp, what: string): RegExpMatchArray {
  assert.doesNotMatch(r.stderr, /\n\s+at /, `${what}: a stack trace: ${r.stderr}`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `${what}: ${lines.length} lines on stderr: ${r.stderr}`);
  const m = lines[0]!.match(pattern);
  assert.ok(m, `${what}: ${JSON.stringify(lines[0])} does not match ${pattern}`);
  return m;
}

/** The names of temporaries (".tmp-") and the lock left in the run folder and its checkpoints folder. */
export function leftBehind(runDir: string): string[] {
  const names: string[] = [];
  for (const dir of [runDir, join(runDir, 'checkpoints')]) {
    if (!existsSync(dir)) continue;
    for (const n of readdirSync(dir)) if (n === '.lock' || n.includes('.tmp-')) names.push(join(dir, n));
  }
  return names;
}

/** Whether any process on this machine has `text` in its command line (a trainer still holding a run). */
export function processWith(text: string): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').some((a) => a.includes(text))) pids.push(Number(pid));
    } catch {
      // exited meanwhile
    }
  }
  return pids.filter((p) => p !== process.pid);
}

/** Resumes `runDir` to the end and checks its metrics equal `reference` (the uninterrupted run's). */
export async function assertResumesToReference(runDir: string, reference: Record<string, unknown>[], what: string): Promise<void> {
  const r = await marft(['train', '--resume', runDir, '--no-progress']);
  assert.equal(r.status, 0, `${what}: the resume failed: ${r.stderr}`);
  assert.deepEqual(metrics(runDir), reference, `${what}: the resumed run's metrics differ from the uninterrupted run's`);
}
