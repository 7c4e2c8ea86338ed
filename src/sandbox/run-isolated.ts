// One sandboxed run: stage the files, start the isolated command in its own process group, feed
// stdin and the fd-3 channel, capture and cap the output, enforce the wall-clock timeout, classify
// the ending, clean up. Never throws because of what the program does.
import { spawn } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { constants as osConstants, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { acquireSandboxUid, detectIsolation, fallbackDropsPrivileges, isolatedCommand, processesOwnedBy, releaseSandboxUid, sandboxFstab, warnOnceIfDegraded } from './isolation.ts';
import { resolveLimits } from './limits.ts';
import { createRunCgroup, oomKills, removeRunCgroup } from './memory-cgroup.ts';
import type { RunResult, RunSpec, RunStatus, SandboxLimits } from './types.ts';

/** A view of a Buffer as the plain Uint8Array that Buffer.concat's typing expects. */
const bytes = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.length);

const SIGNAL_NAMES = new Map<number, string>(Object.entries(osConstants.signals).map(([name, num]) => [num, name]));

/** Keeps the first `cap` bytes of a stream (stdout, the channel) and counts the rest. */
class CappedBuffer {
  private readonly chunks: Uint8Array[] = [];
  kept = 0;
  seen = 0;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    this.seen += chunk.length;
    if (this.kept >= this.cap) return;
    const part = chunk.length > this.cap - this.kept ? chunk.subarray(0, this.cap - this.kept) : chunk;
    this.chunks.push(bytes(part));
    this.kept += part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** Keeps the last bytes of a stream (stderr: tracebacks end there). */
class TailBuffer {
  private buf: Uint8Array = new Uint8Array(0);
  seen = 0;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    this.seen += chunk.length;
    this.buf = bytes(Buffer.concat([this.buf, bytes(chunk)]));
    if (this.buf.length > 2 * this.cap) this.buf = this.buf.subarray(this.buf.length - this.cap);
  }
  text(maxChars: number): string {
    const s = Buffer.from(this.buf.buffer, this.buf.byteOffset, this.buf.length).toString('utf8');
    return s.length > maxChars ? s.slice(s.length - maxChars) : s;
  }
}

function checkFileName(name: string): void {
  const n = normalize(name);
  if (isAbsolute(name) || n.startsWith('..') || n === '.' || name.includes('\0')) throw new RangeError(`sandbox file name must be relative and inside the directory: '${name}'`);
}

/** Decides the status from how the process ended and what it printed. */
export function classify(ending: { exitCode: number | null; signal: string | null; timedOut: boolean; outputExceeded: boolean; stderr: string }): RunStatus {
  if (ending.outputExceeded) return 'output_limit';
  if (ending.timedOut || ending.signal === 'SIGXCPU') return 'timeout';
  if (ending.exitCode === 0 && !ending.signal) return 'ok';
  // A failed run whose error output ends with an allocation failure ran out of memory.
  if (/\bMemoryError\b|Cannot allocate memory|std::bad_alloc|out of memory/i.test(ending.stderr.slice(-600))) return 'memory';
  return ending.signal ? 'killed' : 'runtime_error';
}

export async function runIsolated(spec: RunSpec): Promise<RunResult> {
  if (!(spec.timeoutMs > 0)) throw new RangeError(`timeoutMs must be positive, got ${spec.timeoutMs}`);
  for (const name of Object.keys(spec.files)) checkFileName(name);
  const limits: SandboxLimits = resolveLimits(spec.timeoutMs, spec.limits);
  const iso = detectIsolation();
  warnOnceIfDegraded(iso);

  const staging = await mkdtemp(join(tmpdir(), 'marft-sandbox-'));
  const srcDir = join(staging, 'src');
  const uid = acquireSandboxUid();
  let cgroup: string | null = null;
  try {
    await mkdir(srcDir);
    for (const [name, content] of Object.entries(spec.files)) {
      const path = join(srcDir, name);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
    }
    const namespaced = iso.mode === 'namespaces';
    if (namespaced) {
      await writeFile(join(staging, 'fstab'), sandboxFstab(uid, limits));
      cgroup = await createRunCgroup(uid, limits.memoryBytes);
    }
    // Without namespaces the program works in srcDir itself, as its own uid when we are root.
    if (fallbackDropsPrivileges(iso)) {
      await chmod(staging, 0o711); // traversable (not listable), since Python opens its script by absolute path
      await chownTree(srcDir, uid);
    }
    const result = await execute(spec, limits, namespaced ? staging : srcDir, isolatedCommand(iso, staging, uid, limits, spec.timeoutMs, spec.argv, cgroup), namespaced);
    // After a kill from outside, the kernel may still be tearing the namespace down: wait until
    // the run's uid owns no process, so that nothing outlives the run and the slot's process
    // count starts from zero for the next run. (A normal exit already waited for all of them.)
    if (namespaced && (result.status === 'timeout' || result.status === 'output_limit')) await waitUntilNoProcesses(uid);
    // Without a PID namespace, children that left the process group survive it; as they run as
    // the run's own uid, killing that uid's processes catches them.
    if (fallbackDropsPrivileges(iso)) await killEveryProcessOf(uid);
    // The kernel killed a process of the run for the cgroup's memory bound.
    if (cgroup && (result.status === 'killed' || result.status === 'runtime_error') && (await oomKills(cgroup)) > 0) result.status = 'memory';
    return result;
  } finally {
    if (cgroup) await removeRunCgroup(cgroup);
    releaseSandboxUid(uid);
    await rm(staging, { recursive: true, force: true, maxRetries: 3 });
  }
}

async function chownTree(dir: string, uid: number): Promise<void> {
  await chown(dir, uid, uid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(path, uid);
    else await chown(path, uid, uid);
  }
}

async function killEveryProcessOf(uid: number): Promise<void> {
  for (let i = 0; i < 250; i++) {
    const pids = await processesOwnedBy(uid, uid + 1);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function waitUntilNoProcesses(uid: number): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if ((await processesOwnedBy(uid, uid + 1)).length === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function execute(spec: RunSpec, limits: SandboxLimits, cwd: string, command: string[], namespaced: boolean): Promise<RunResult> {
  const useChannel = spec.channelInput !== undefined;
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), {
    cwd,
    detached: true, // its own process group (and session), killed as a whole
    stdio: ['pipe', 'pipe', 'pipe', useChannel ? 'pipe' : 'ignore'],
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', HOME: namespaced ? '/tmp' : cwd },
  });
  const stdout = new CappedBuffer(limits.outputBytes);
  const stderr = new TailBuffer(Math.max(4 * limits.stderrExcerptChars, 4096));
  const channel = new CappedBuffer(limits.outputBytes);
  let timedOut = false;
  let outputExceeded = false;

  const killGroup = (): void => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const onOutput = (): void => {
    if (!outputExceeded && stdout.seen + stderr.seen > limits.outputBytes) {
      outputExceeded = true;
      killGroup();
    }
  };

  return new Promise<RunResult>((resolve) => {
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, spec.timeoutMs);
    child.stdout!.on('data', (c: Buffer) => {
      stdout.push(c);
      onOutput();
    });
    child.stderr!.on('data', (c: Buffer) => {
      stderr.push(c);
      onOutput();
    });
    const ignore = (): void => {};
    // The program may close stdin or fd 3 without reading them: EPIPE is not our error.
    (child.stdin as Writable).on('error', ignore);
    (child.stdin as Writable).end(spec.stdin ?? '');
    if (useChannel) {
      const ch = child.stdio[3] as Readable & Writable;
      ch.on('error', ignore);
      ch.on('data', (c: Buffer) => channel.push(c));
      ch.write(spec.channelInput!);
    }
    let settled = false;
    const finish = (result: RunResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    let spawnError: Error | null = null;
    child.on('error', (err) => {
      spawnError = err;
      if (child.pid === undefined) {
        const message = `sandbox: could not start ${command[0]}: ${err.message}`;
        finish({ status: 'killed', exitCode: null, signal: null, stdout: '', stderr: message, wallMs: performance.now() - started, channel: '' });
      }
    });
    // A process that left the group (rlimits mode only) may hold our pipes open: stop reading
    // shortly after the program itself exited so that 'close' fires.
    child.on('exit', () => {
      setTimeout(() => {
        for (const stream of child.stdio) stream?.destroy();
      }, 1000).unref();
    });
    child.on('close', (code, sig) => {
      killGroup(); // anything left in the group (rlimits mode) goes with the run
      let exitCode = code;
      let signal = sig;
      // In 'namespaces' mode the init shell reports a signal death of the program as 128 + n.
      if (namespaced && code !== null && code > 128 && SIGNAL_NAMES.has(code - 128)) {
        signal = SIGNAL_NAMES.get(code - 128) as NodeJS.Signals;
        exitCode = null;
      }
      const stderrText = spawnError ? `sandbox: could not start ${command[0]}: ${(spawnError as Error).message}` : stderr.text(limits.stderrExcerptChars);
      finish({
        status: spawnError ? 'killed' : classify({ exitCode, signal, timedOut, outputExceeded, stderr: stderrText }),
        exitCode,
        signal,
        stdout: stdout.text(),
        stderr: stderrText,
        wallMs: performance.now() - started,
        channel: channel.text(),
      });
    });
  });
}
