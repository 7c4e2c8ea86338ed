// The llama.cpp side of `npm run bench:engine -- --model DIR` (bench/real-model.ts): llama.cpp's own
// llama-server, as `bash scripts/setup.sh --llamacpp` builds it into .venv-llamacpp, sampling the bench's
// chat prompts on the folder's float32 weights, the way the bench drives vLLM:
//   - the folder is written as a float32 GGUF file into a temporary folder (deleted after) by
//     scripts/hf-to-gguf.py (Llama, as SmolLM2, or Qwen3); no quantisation, so llama.cpp multiplies the
//     same float32 numbers as the others;
//   - llama-server runs on the cores the other sides use (-t / -tb), one slot per prompt (-np) with
//     room for each prompt and its new tokens (-c: llama.cpp splits it among the slots), a float32 KV
//     cache like the other sides' (llama.cpp's default is f16) and the rest at llama.cpp's defaults
//     (flash attention "auto", continuous batching);
//   - every prompt goes to /v1/completions as its token ids (the other sides' tokens exactly: the GGUF
//     file says add no BOS, and each reply's prompt_tokens is checked), all at once, asking exactly
//     `newTokens` tokens at temperature 1 with every filter off: top_k 0, top_p 1, min_p 0 (llama.cpp's
//     defaults are 40, 0.95 and 0.05) and repeat_penalty 1, with ignore_eos (llama.cpp's bans the
//     end-of-generation tokens, which the other sides sample and go on from: the same work per token);
//   - the time is from sending the requests to the last answer; the memory is the server process's
//     peak resident set (VmHWM), the model file's mapped pages included.
// Errors are thrown as one-line messages; a folder the converters refuse is a reason not to measure.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/engine/vllm/server.ts';
import { spawnProgramGroup, stopServerGroup, waitUntilServing } from '../src/engine/vllm/server-process.ts';

const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
const llamaServer = join(repoRoot, '.venv-llamacpp/bin/llama-server');
const llamaPython = join(repoRoot, '.venv-llamacpp/bin/python');

/** Why llama.cpp cannot be measured here, or null when it can. */
export function llamacppUnavailable(): string | null {
  if (!existsSync(llamaServer) || !existsSync(llamaPython)) return 'skipped, no .venv-llamacpp/bin/llama-server (bash scripts/setup.sh --llamacpp builds it, about 13 minutes)';
  return null; // a folder scripts/hf-to-gguf.py cannot convert is refused by it (exit 2), and llamacppSample says why
}

/**
 * `prompts` (token ids) × `newTokens` sampled by llama-server on `threads` cores; a string when the
 * folder's converter refuses it (the reason), else the time and the server's peak memory.
 */
export async function llamacppSample(modelDir: string, prompts: number[][], newTokens: number, threads: number): Promise<{ ms: number; peakMb: number } | string> {
  const tmp = mkdtempSync(join(tmpdir(), 'marft-bench-llamacpp-'));
  try {
    const gguf = join(tmp, 'model.gguf');
    const convert = spawnSync(llamaPython, [join(repoRoot, 'scripts/hf-to-gguf.py'), modelDir, gguf], { encoding: 'utf8', maxBuffer: 1 << 24 });
    const said = (convert.stderr || '').trim().split('\n').at(-1) ?? '';
    if (convert.status === 2) return `not measured: ${modelDir} cannot be written as GGUF (${said})`;
    if (convert.status !== 0) throw new Error(`writing ${modelDir} as GGUF failed: ${said}`);

    const port = await freePort();
    // -c is the whole KV cache, split evenly among the -np slots (each slot's share rounded up to 256).
    const context = prompts.length * (Math.max(...prompts.map((p) => p.length)) + newTokens);
    const args = ['-m', gguf, '--alias', 'base', '-t', String(threads), '-tb', String(threads),
      '-np', String(prompts.length), '-c', String(context), '--cache-type-k', 'f32', '--cache-type-v', 'f32'];
    const server = await LlamaServer.start(port, args);
    try {
      const complete = async (prompt: number[], maxTokens: number): Promise<void> => {
        const res = await fetch(`${server.baseUrl}/completions`, {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'base', prompt, max_tokens: maxTokens, temperature: 1, top_k: 0, top_p: 1, min_p: 0, repeat_penalty: 1, ignore_eos: true, seed: 1 }),
        });
        if (!res.ok) throw new Error(`llama-server answered ${res.status}: ${(await res.text()).split('\n')[0]}`);
        const usage = ((await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
        if (usage.prompt_tokens !== prompt.length) throw new Error(`llama-server read a prompt of ${prompt.length} tokens as ${usage.prompt_tokens}`);
        if (usage.completion_tokens !== maxTokens) throw new Error(`llama-server returned ${usage.completion_tokens} tokens, not ${maxTokens}`);
      };
      await complete(prompts[0]!, Math.min(8, newTokens));
      const t0 = performance.now();
      await Promise.all(prompts.map((p) => complete(p, newTokens)));
      const ms = performance.now() - t0;
      return { ms, peakMb: server.peakRssMb() };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** llama-server started with `args`, answering on /health, and stopped with its process group. */
class LlamaServer {
  private output = '';
  private constructor(private readonly child: ChildProcess, readonly baseUrl: string) {
    const keep = (d: Buffer): void => { this.output = (this.output + d.toString()).slice(-4000); };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
  }

  static async start(port: number, args: string[]): Promise<LlamaServer> {
    // The server leads its own process group, with the watcher that ends it when the bench ends,
    // however the bench ends (src/engine/vllm/server-process.ts).
    const child = spawnProgramGroup(llamaPython, llamaServer, ['--host', '127.0.0.1', '--port', String(port), ...args], process.env);
    const server = new LlamaServer(child, `http://127.0.0.1:${port}/v1`);
    // /health: 503 while it loads the model, 200 once it serves.
    await waitUntilServing(child, { what: 'llama-server', readyUrl: `http://127.0.0.1:${port}/health`, timeoutMs: 120_000, pollMs: 500, lastOutput: () => server.lastOutput() });
    return server;
  }

  lastOutput(): string {
    return this.output.trim().split('\n').slice(-3).join(' | ');
  }

  /** The server process's peak resident memory so far (the watcher beside it in the group is not llama.cpp). */
  peakRssMb(): number {
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'));
    if (!hwm) throw new Error(`no VmHWM in /proc/${this.child.pid}/status`);
    return Number(hwm[1]) / 1024;
  }

  stop(): Promise<void> {
    return stopServerGroup(this.child);
  }
}
