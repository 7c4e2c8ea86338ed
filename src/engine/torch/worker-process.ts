// The torch worker as a child process (engines/torch/marft_torch): started directly for one process,
// through torchrun for several; rank 0 connects to a Unix socket this side listens on, and every
// command is a framed request answered by one framed reply, in order.
//
// A worker that dies (crash, kill, out of memory, a rank failing alone) rejects every pending and
// later call with one error naming its exit code or signal and the last lines it printed; a call
// never waits on a dead process.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeFrame, FrameReader } from './framing.ts';

export const repoRoot = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/** The Python package's folder, put on the worker's PYTHONPATH. */
export const torchPackageDir = join(repoRoot, 'engines/torch');
/** Where scripts/setup.sh makes the torch engine's virtual environment. */
export const defaultTorchPython = join(repoRoot, '.venv-torch/bin/python');

export interface WorkerLaunch {
  /** Python with torch, transformers, safetensors and msgpack (default: MARFT_TORCH_PYTHON, else .venv-torch). */
  python?: string;
  /** Processes (devices) on this machine; more than one starts torchrun with FSDP2 sharding. Default 1. */
  nprocPerNode?: number;
  /**
   * Several machines: torchrun's --nnodes / --node-rank / --rdzv-endpoint (host:port of this machine,
   * where the other nodes meet). The rendezvous is torchrun's static one: c10d's ranks nodes by the
   * order they join, so the controller's node would not always be rank 0 (measured: a node started
   * first took rank 0), and only rank 0 talks to the controller.
   */
  nnodes?: number;
  rdzvEndpoint?: string;
  /** float32 (default) or bfloat16 weights; log-softmax is float32 either way. */
  dtype?: 'float32' | 'bfloat16';
  /** auto (CUDA when available), cpu or cuda. */
  device?: 'auto' | 'cpu' | 'cuda';
  /** torch CPU threads per process (0: torch's default). */
  threads?: number;
  /**
   * Scored positions per log-softmax chunk (0 or absent: as many as keep one chunk's float32 logits
   * near 256 MB, e.g. 441 rows for a 151,936-token vocabulary). Each chunk's logits are recomputed in
   * the backward rather than kept, so the memory of scoring no longer grows with the vocabulary times
   * the micro-batch's tokens.
   */
  logitsChunkRows?: number;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

interface Reply {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

const TAIL_LINES = 15;

export class WorkerProcess {
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private dead: Error | null = null;
  private tail: string[] = [];
  private partialLine = '';
  private conn: Socket | null = null;
  private readonly exited: Promise<void>;
  private closing = false;

  private constructor(private readonly child: ChildProcess, private readonly server: Server, private readonly sockDir: string) {
    const onOutput = (chunk: Uint8Array): void => this.keepTail(new TextDecoder().decode(chunk));
    child.stdout!.on('data', onOutput);
    child.stderr!.on('data', onOutput);
    // A marft that exits without disposing the engine (stopped at once by a second Ctrl-C, an uncaught
    // error) takes the worker group with it; the worker, in its own group, would otherwise finish its
    // command in flight first (it ends when its socket closes).
    const killOnExit = (): void => this.kill();
    process.on('exit', killOnExit);
    this.exited = new Promise((resolveExit) => {
      child.on('exit', (code, signal) => {
        process.off('exit', killOnExit);
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const lines = this.lastLines();
        this.fail(new Error(`torch engine worker ${how}${this.closing && code === 0 ? ' (disposed)' : ''}${lines ? `; its last output: ${lines}` : ''}`));
        this.cleanup();
        resolveExit();
      });
    });
    this.idle();
  }

  /** Starts the worker on `modelDir` and waits for it to load the model; returns it with its start report. */
  static async start(modelDir: string, launch: WorkerLaunch = {}): Promise<{ worker: WorkerProcess; info: unknown }> {
    const python = launch.python ?? process.env.MARFT_TORCH_PYTHON ?? defaultTorchPython;
    if (!existsSync(python)) throw new Error(`no Python for the torch engine at ${python}: run 'bash scripts/setup.sh' (or set MARFT_TORCH_PYTHON)`);
    const nproc = launch.nprocPerNode ?? 1, nnodes = launch.nnodes ?? 1;
    if (!(Number.isInteger(nproc) && nproc >= 1)) throw new Error(`nprocPerNode must be a positive integer, got ${nproc}`);
    if (!(Number.isInteger(nnodes) && nnodes >= 1)) throw new Error(`nnodes must be a positive integer, got ${nnodes}`);
    if (nnodes > 1 && !launch.rdzvEndpoint) throw new Error('several machines need rdzvEndpoint (host:port of this machine, where the other nodes meet)');
    const sockDir = mkdtempSync(join(tmpdir(), 'marft-torch-'));
    const sockPath = join(sockDir, 'worker.sock');
    const server = createServer();
    await new Promise<void>((ok, fail) => { server.once('error', fail); server.listen(sockPath, ok); });
    const workerArgs = ['-m', 'marft_torch', '--socket', sockPath, '--model', resolve(modelDir),
      '--dtype', launch.dtype ?? 'float32', '--device', launch.device ?? 'auto', '--threads', String(launch.threads ?? 0),
      '--logits-chunk-rows', String(launch.logitsChunkRows ?? 0)];
    const args = nproc === 1 && nnodes === 1 ? workerArgs : [
      '-m', 'torch.distributed.run', '--nproc-per-node', String(nproc),
      ...(nnodes > 1 ? ['--nnodes', String(nnodes), '--node-rank', '0', '--rdzv-backend', 'static', '--rdzv-endpoint', launch.rdzvEndpoint!] : ['--standalone']),
      ...workerArgs,
    ];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PYTHONPATH: [torchPackageDir, process.env.PYTHONPATH].filter(Boolean).join(delimiter),
      PYTHONUNBUFFERED: '1',
      TRANSFORMERS_VERBOSITY: process.env.TRANSFORMERS_VERBOSITY ?? 'error',
      HF_HUB_OFFLINE: process.env.HF_HUB_OFFLINE ?? '1',
      TQDM_DISABLE: '1',
    };
    // Its own process group, so that dispose and failures end torchrun and all its workers at once.
    const child = spawn(python, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const worker = new WorkerProcess(child, server, sockDir);
    const hello = worker.expect(0);
    server.once('connection', (sock) => worker.attach(sock));
    child.once('error', (e) => worker.fail(new Error(`cannot start the torch engine worker (${python}): ${e.message}`)));
    try {
      return { worker, info: await hello };
    } catch (e) {
      worker.kill();
      worker.busy(); // the exit is awaited: keep the event loop alive until it comes
      await worker.exited;
      throw e;
    }
  }

  /** Sends one command; resolves with its result, rejects with the worker's one-line error. */
  call(cmd: string, args: Record<string, unknown> = {}): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    if (!this.conn) return Promise.reject(new Error('torch engine worker is not connected'));
    const id = this.nextId++;
    const reply = this.expect(id);
    this.conn.write(encodeFrame({ id, cmd, args }));
    return reply;
  }

  /** Asks the worker group to exit and waits for it (killing it if it does not exit in time). */
  async close(timeoutMs = 30_000): Promise<void> {
    if (this.dead) return;
    this.closing = true;
    try {
      await Promise.race([this.call('shutdown'), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    } catch {
      // Already dying: the exit handler has reported it.
    }
    // The answer made the worker idle (unref'd); hold the event loop until the exit comes, or a group
    // that lingers after answering (torchrun waiting on another node) would leave this await with
    // nothing to wake it once the kill below has fired, and Node would quit in the middle of dispose.
    this.busy();
    const timer = setTimeout(() => this.kill(), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Ends the worker group at once (SIGKILL to its process group). */
  kill(): void {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  private expect(id: number): Promise<unknown> {
    return new Promise((resolveCall, rejectCall) => {
      this.pending.set(id, { resolve: resolveCall, reject: rejectCall });
      this.busy();
    });
  }

  private attach(sock: Socket): void {
    this.conn = sock;
    const reader = new FrameReader();
    sock.on('data', (chunk: Uint8Array) => {
      for (const msg of reader.push(chunk)) this.deliver(msg as Reply);
    });
    sock.on('error', () => { /* the exit handler reports it */ });
    // The worker closing its end means it is exiting (torchrun then stops the other ranks and reports
    // the exit code); one that closes it and lives on is ended after a grace period.
    sock.on('close', () => {
      if (this.dead || this.closing) return;
      setTimeout(() => { if (!this.dead) this.kill(); }, 10_000).unref();
    });
    if (this.pending.size === 0) sock.unref();
  }

  private deliver(msg: Reply): void {
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result ?? null);
    else p.reject(new Error(`torch engine: ${msg.error}`));
    if (this.pending.size === 0) this.idle();
  }

  private fail(e: Error): void {
    if (!this.dead) this.dead = e;
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
    this.idle();
  }

  // While no call is pending the worker does not keep Node's event loop alive: a program that forgets
  // dispose() still exits, and the worker, seeing its socket close, exits too.
  private busy(): void {
    this.child.ref();
    this.conn?.ref();
  }

  private idle(): void {
    this.child.unref();
    this.conn?.unref();
    (this.child.stdout as Socket | null)?.unref?.();
    (this.child.stderr as Socket | null)?.unref?.();
    this.server.unref();
  }

  private cleanup(): void {
    this.conn?.destroy();
    this.server.close();
    rmSync(this.sockDir, { recursive: true, force: true });
  }

  private keepTail(text: string): void {
    const lines = (this.partialLine + text).split('\n');
    this.partialLine = lines.pop()!;
    for (const l of lines) if (l.trim()) this.tail.push(l.trimEnd());
    if (this.tail.length > TAIL_LINES) this.tail.splice(0, this.tail.length - TAIL_LINES);
  }

  private lastLines(): string {
    const all = [...this.tail, ...(this.partialLine.trim() ? [this.partialLine] : [])];
    return all.slice(-TAIL_LINES).join(' | ');
  }
}
