// `npm run bench:engine -- --model DIR`: a real model folder (SmolLM2-135M-Instruct from
// `bash scripts/setup.sh --smollm2`: models/smollm2-135m-instruct) measured at its real size, float32,
// every side in turn on the same cores in one run (issue 18, item 3):
//   sampling   32 chat prompts (written here, rendered by the folder's chat template) × 256 new tokens at
//              temperature 1, no top-k / top-p, exactly 256 tokens each (no stop): tokens/s of marft's
//              embedded engine, transformers' generate() (.venv-oracle), vLLM for the CPU (.venv-vllm:
//              an OpenAI server started here, 32 requests at once, ignore_eos) and llama.cpp's llama-server
//              (.venv-llamacpp, bench/llamacpp-side.ts: the folder written as a float32 GGUF file, the
//              same token ids, 32 requests at once on 32 slots, ignore_eos, top_k 0 / top_p 1 / min_p 0,
//              a float32 KV cache); llama.cpp is null, with the reason, where `bash scripts/setup.sh
//              --llamacpp` has not built it;
//   LoRA step  rank 8, α 16, every linear layer, 8 × 512 tokens: forward, backward of −mean log-prob and
//              one AdamW step, marft against PyTorch + PEFT;
//   group      the RL workload: 8 prompts (a Reasoner's system prompt and a word problem) × G = 8 samples
//              each, 128 new tokens at temperature 1, in one sample() call: marft with the shared prompt
//              prefilled once (its default) against marft prefilling every request (sharePrefill off);
//   stopping   the 32 chat prompts again, stopping at the end of the answer (at most --new-tokens): one
//              uncapped call; at most --batch-cap (8) in flight with slots refilled (maxSequences); chunks
//              of 8 requests one after another (the same memory). Tokens/s of generated tokens (a chunk's
//              seed is offset, so its samples, and lengths, differ from the other two's);
//   memory     the peak resident memory of each side's process (vLLM: the sum over its process group's
//              processes, an upper bound since they share pages; llama.cpp: llama-server's process).
// Each side runs once untimed first (a short sample, one step). Options: --new-tokens N (256),
// --prompts N (32), --lora-batch N (8), --lora-length N (512), --group N (8), --group-prompts N (8),
// --group-new-tokens N (128), --no-group, --batch-cap N (8), --no-continuous, --no-vllm, --no-llamacpp,
// --no-transformers.
// The last line is JSON:
// {"model", "sample_tokens_per_s": {"marft", "transformers", "vllm", "llama.cpp"}, "lora_step_ms": {"marft", "pytorch"},
//  "stopping_tokens_per_s": {"uncapped", "continuous", "chunks"},
//  "group_sampling_tokens_per_s": {"marft_shared_prefill", "marft_prefill_per_request"}, "peak_rss_mb": {...}}.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../src/engine/index.ts';
import { ALL_LINEAR_MODULES, type Engine, type ScoreRequest } from '../src/engine/types.ts';
import type { EmbeddedEngineOptions } from '../src/engine/embedded/engine.ts';
import { threadCount } from '../src/engine/embedded/thread-pool.ts';
import { loadTokenizer } from '../src/tokenizer/index.ts';
import { defaultVllmPython, VllmServer } from '../src/engine/vllm/server.ts';
import { llamacppSample, llamacppUnavailable } from './llamacpp-side.ts';

const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));
const argv = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) fail(`--${name} needs a positive integer, got '${argv[i + 1] ?? ''}'`);
  return v;
};

function fail(message: string): never {
  console.error(`bench:engine --model: ${message}`);
  process.exit(2);
}

const QUESTIONS = [
  'What is the capital of France?', 'Write a haiku about the sea.', 'How many legs does a spider have?', 'Give me one tip for learning to program.',
  'Explain what a prime number is.', 'Why is the sky blue?', 'Name three fruits that are red.', 'What does a compiler do?',
  'Describe a cat in two sentences.', 'How do plants make food?', 'What is 12 times 7?', 'Suggest a name for a small bakery.',
  'What is the boiling point of water?', 'Write a short greeting for a birthday card.', 'How does a bicycle stay upright?', 'What is the largest ocean?',
  'List two uses of a paperclip.', 'Why do we have seasons?', 'What is a verb?', 'Tell me a fact about the Moon.',
  'How many days are in a leap year?', 'What is the opposite of ancient?', 'Write one sentence about autumn.', 'What do bees make?',
  'How should I store fresh bread?', 'What is the speed of light?', 'Give an example of a mammal that swims.', 'What is a rainbow?',
  'Explain recursion in one sentence.', 'What is the chemical symbol for gold?', 'How do you make a cup of tea?', 'Why do ships float?',
];

// The group workload's prompts: a role as long as MAS-OPD's Reasoner prompt, then a word problem.
const REASONER_SYSTEM = 'You are the Reasoner in a team of two agents that solves grade-school mathematics word problems. ' +
  'Read the problem carefully, identify the quantities it gives and the quantity it asks for, and reason step by step. ' +
  'Write each step on its own line, state the arithmetic you perform and its result, and check every intermediate value ' +
  'against the problem before you go on. Your teammate, the Tool-User, will read your reasoning, run the calculations you ' +
  'describe in Python and report the results back to you, so name every number you use and say exactly which operation ' +
  'it takes part in. Do not skip steps, do not guess, and do not round unless the problem says so. When you are sure of ' +
  'the answer, write it on the last line as a single number inside \\boxed{}.';
const WORD_PROBLEMS = [
  'A baker makes 24 muffins in the morning and 18 in the afternoon. She sells 35 of them. How many muffins are left?',
  'Tom has 3 boxes with 12 pencils each. He gives 7 pencils to his sister. How many pencils does he have now?',
  'A train travels 60 kilometres per hour for 3 hours and then 40 kilometres per hour for 2 hours. How far does it travel?',
  'A shirt costs 25 dollars. It is on sale for 20 percent off. What is the sale price?',
  'There are 5 rows of chairs with 14 chairs in each row. 9 chairs are taken away. How many chairs remain?',
  'Maria reads 15 pages a day. How many days does she need to read a book of 210 pages?',
  'A garden is 12 metres long and 8 metres wide. What is its perimeter?',
  'Sam saves 6 dollars a week for 9 weeks and then spends 20 dollars. How much money does he have left?',
];

function peakRssOfGroup(pgid: number): number {
  // VmHWM of every process whose group is the server's: the server, its engine core, its workers.
  let kb = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (hwm) kb += Number(hwm[1]);
    } catch { /* the process ended */ }
  }
  return kb / 1024;
}

async function vllmSample(modelDir: string, prompts: number[][], newTokens: number): Promise<{ ms: number; peakMb: number }> {
  const cores = String(threadCount());
  const server = await VllmServer.start({
    python: defaultVllmPython(), modelDir, maxLoraRank: null, dtype: 'float32', maxModelLen: 1024, maxNumSeqs: prompts.length,
    env: { VLLM_CPU_KVCACHE_SPACE: '2', VLLM_CPU_OMP_THREADS_BIND: 'nobind', OMP_NUM_THREADS: cores },
  });
  try {
    const complete = async (prompt: number[], maxTokens: number): Promise<number> => {
      const res = await fetch(`${server.baseUrl}/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'base', prompt, max_tokens: maxTokens, temperature: 1, top_p: 1, top_k: -1, ignore_eos: true, seed: 1 }),
      });
      if (!res.ok) throw new Error(`vLLM answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens;
    };
    await complete(prompts[0]!, 8);
    const t0 = performance.now();
    const counts = await Promise.all(prompts.map((p) => complete(p, newTokens)));
    const ms = performance.now() - t0;
    if (counts.some((c) => c !== newTokens)) throw new Error(`vLLM returned ${counts.join(', ')} tokens, not ${newTokens} each`);
    return { ms, peakMb: peakRssOfGroup(server.pid!) };
  } finally {
    await server.stop();
  }
}

interface Rate { ms: number; tokens: number; perS: number }

/**
 * Tokens per second: whole from 100 up, 3 significant digits below, so that a slow rate (the test's
 * few tokens on a loaded machine: 8 tokens in 17 s) is written as 0.471, not as 0.
 */
function perSecond(tokens: number, ms: number): number {
  const r = tokens / (ms / 1000);
  return r >= 100 ? Math.round(r) : Number(r.toPrecision(3));
}

/** `work` on the model loaded afresh with these sampler options, disposed after. */
async function onFreshEngine<T>(modelDir: string, options: EmbeddedEngineOptions, work: (e: Engine) => Promise<T>): Promise<T> {
  const e = await loadEngine(modelDir, options);
  try {
    return await work(e);
  } finally {
    await e.dispose();
  }
}

async function main(): Promise<void> {
  const i = argv.indexOf('--model');
  const dir = argv[i + 1];
  if (!dir || dir.startsWith('--')) fail('--model needs a model folder (e.g. models/smollm2-135m-instruct, made by bash scripts/setup.sh --smollm2)');
  const modelDir = resolve(dir);
  if (!existsSync(join(modelDir, 'config.json'))) fail(`${modelDir} is not a model folder (no config.json); bash scripts/setup.sh --smollm2 makes models/smollm2-135m-instruct`);
  const newTokens = option('new-tokens', 256);
  const promptCount = option('prompts', 32);
  const LORA_B = option('lora-batch', 8), LORA_T = option('lora-length', 512);
  const G = option('group', 8), groupPrompts = option('group-prompts', 8), groupNew = option('group-new-tokens', 128);
  const cap = option('batch-cap', 8);

  const tokenizer = loadTokenizer(modelDir);
  const prompts = Array.from({ length: promptCount }, (_, k) => tokenizer.encodeChat([{ role: 'user', content: QUESTIONS[k % QUESTIONS.length]! }], { addGenerationPrompt: true }));
  const engine = await loadEngine(modelDir);
  const vocab = engine.info.vocabSize;
  const loraTokens = Array.from({ length: LORA_B }, (_, b) => Array.from({ length: LORA_T + 1 }, (_, t) => (b * 7919 + t * 104729 + 17) % vocab));
  const peakMb = (): number => process.resourceUsage().maxRSS / 1024;
  const rate = (ms: number | null | undefined): number | null => (ms == null ? null : perSecond(promptCount * newTokens, ms));
  console.log(`model ${modelDir}: vocabulary ${vocab}; ${promptCount} prompts of ${Math.min(...prompts.map((p) => p.length))}-${Math.max(...prompts.map((p) => p.length))} tokens × ${newTokens} new tokens; marft on ${threadCount()} threads`);

  // marft: sampling, then the LoRA step.
  const params = { temperature: 1, topP: 1, topK: 0, stopTokenIds: [] as number[], stopStrings: [] as string[], seed: 1 };
  await engine.sample({ kind: 'base' }, prompts, { ...params, maxNewTokens: 8 });
  let t0 = performance.now();
  const sampled = await engine.sample({ kind: 'base' }, prompts, { ...params, maxNewTokens: newTokens });
  const marftSampleMs = performance.now() - t0;
  if (sampled.some((s) => s.tokens.length !== newTokens)) fail(`marft sampled ${sampled.map((s) => s.tokens.length).join(', ')} tokens, not ${newTokens} each`);
  console.log(`marft sampling: ${(marftSampleMs / 1000).toFixed(1)} s, ${rate(marftSampleMs)} tokens/s`);
  await engine.createAdapter('bench', { rank: 8, alpha: 16, targetModules: [...ALL_LINEAR_MODULES] }, 1);
  const batch: ScoreRequest[] = loraTokens.map((t) => ({ tokens: t, scoreFrom: 1 }));
  const grads = loraTokens.map(() => new Float32Array(LORA_T).fill(-1 / (LORA_B * LORA_T)));
  const step = async (): Promise<number> => {
    const s0 = performance.now();
    const f = await engine.forward({ kind: 'adapter', name: 'bench' }, batch, { retainGraph: true });
    await engine.backward(f.handle!, { dLogprobs: grads });
    await engine.optimStep({ kind: 'adapter', name: 'bench' }, { lr: 1e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
    return performance.now() - s0;
  };
  await step();
  const marftLoraMs = await step();
  const marftPeak = peakMb();
  console.log(`marft LoRA step (${LORA_B} × ${LORA_T} tokens): ${(marftLoraMs / 1000).toFixed(2)} s; peak RSS ${marftPeak.toFixed(0)} MB`);
  await engine.dispose();

  // The group workload: marft with the shared prompt prefilled once, then prefilling every request.
  const group: { shared: number; perRequest: number; promptTokens: number } | null = argv.includes('--no-group') ? null : await (async () => {
    const distinct = Array.from({ length: groupPrompts }, (_, k) => tokenizer.encodeChat([{ role: 'system', content: REASONER_SYSTEM }, { role: 'user', content: WORD_PROBLEMS[k % WORD_PROBLEMS.length]! }], { addGenerationPrompt: true }));
    const requests = distinct.flatMap((p) => Array.from({ length: G }, () => p));
    const timed = (sharePrefill: boolean): Promise<number> => onFreshEngine(modelDir, { sharePrefill }, async (e) => {
      await e.sample({ kind: 'base' }, requests.slice(0, G), { ...params, maxNewTokens: 4 });
      const g0 = performance.now();
      const out = await e.sample({ kind: 'base' }, requests, { ...params, maxNewTokens: groupNew });
      if (out.some((r) => r.tokens.length !== groupNew)) fail(`marft sampled ${out.map((r) => r.tokens.length).join(', ')} tokens, not ${groupNew} each`);
      return performance.now() - g0;
    });
    const perRequest = await timed(false), shared = await timed(true);
    const promptTokens = Math.round(distinct.reduce((n, p) => n + p.length, 0) / distinct.length);
    console.log(`group sampling (${groupPrompts} prompts of ~${promptTokens} tokens × G = ${G}, ${groupNew} new tokens): shared prefill ${(shared / 1000).toFixed(1)} s, ` +
      `prefill per request ${(perRequest / 1000).toFixed(1)} s (×${(perRequest / shared).toFixed(2)})`);
    return { shared, perRequest, promptTokens };
  })();
  // Continuous batching: the 32 chat prompts, stopping at the end of the answer (lengths differ), at
  // most `cap` sequences in flight: the engine refilling slots, against chunks of `cap` requests one
  // after another (the same memory), and one uncapped call.
  const stopping: { uncapped: Rate; continuous: Rate; chunks: Rate } | null = argv.includes('--no-continuous') ? null : await (async () => {
    const stopParams = { ...params, stopTokenIds: tokenizer.eosTokenIds, maxNewTokens: newTokens };
    const timed = (maxSequences: number, chunk: number): Promise<Rate> => onFreshEngine(modelDir, { maxSequences }, async (e) => {
      await e.sample({ kind: 'base' }, prompts.slice(0, 2), { ...stopParams, maxNewTokens: 4 });
      const c0 = performance.now();
      let tokens = 0;
      for (let k = 0; k < prompts.length; k += chunk) tokens += (await e.sample({ kind: 'base' }, prompts.slice(k, k + chunk), { ...stopParams, seed: stopParams.seed + k })).reduce((n, r) => n + r.tokens.length, 0);
      const ms = performance.now() - c0;
      return { ms, tokens, perS: perSecond(tokens, ms) };
    });
    const uncapped = await timed(0, prompts.length), continuous = await timed(cap, prompts.length), chunks = await timed(0, cap);
    const show = (r: Rate): string => `${(r.ms / 1000).toFixed(1)} s, ${r.tokens} tokens, ${r.perS} tokens/s`;
    console.log(`stopping at the answer's end (${prompts.length} prompts, at most ${newTokens} tokens): uncapped ${show(uncapped)}; ` +
      `${cap} in flight, slots refilled ${show(continuous)}; chunks of ${cap} ${show(chunks)}`);
    return { uncapped, continuous, chunks };
  })();

  const groupRate = (ms: number | undefined): number | null => (ms === undefined ? null : perSecond(groupPrompts * G * groupNew, ms));

  // transformers + PEFT, in their own process.
  interface TransformersSide { sample_ms: number; lora_step_ms: number; peak_rss_mb: number; threads: number; torch: string; transformers: string }
  let tf: TransformersSide | null = null;
  const python = join(repoRoot, '.venv-oracle/bin/python');
  if (argv.includes('--no-transformers')) console.log('transformers: skipped (--no-transformers)');
  else if (!existsSync(python)) console.log('transformers: skipped, no .venv-oracle (bash scripts/setup.sh makes it)');
  else {
    const tmp = mkdtempSync(join(tmpdir(), 'marft-bench-real-'));
    try {
      const spec = join(tmp, 'spec.json');
      writeFileSync(spec, JSON.stringify({ model: modelDir, prompts, new_tokens: newTokens, pad_token_id: tokenizer.eosTokenIds[0] ?? 0, lora_tokens: loraTokens }));
      const r = spawnSync(python, [join(repoRoot, 'bench/real_model_torch.py'), spec], { encoding: 'utf8', env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error' }, maxBuffer: 1 << 24 });
      if (r.status !== 0) fail(`the transformers side failed: ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}`);
      tf = JSON.parse(r.stdout.trim().split('\n').pop()!) as TransformersSide;
      console.log(`transformers ${tf.transformers} (torch ${tf.torch}, ${tf.threads} threads) sampling: ${(tf.sample_ms / 1000).toFixed(1)} s, ${rate(tf.sample_ms)} tokens/s; ` +
        `PEFT LoRA step ${(tf.lora_step_ms / 1000).toFixed(2)} s; peak RSS ${tf.peak_rss_mb.toFixed(0)} MB`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  // vLLM for the CPU.
  let vllm: { ms: number; peakMb: number } | null = null;
  if (argv.includes('--no-vllm')) console.log('vLLM: skipped (--no-vllm)');
  else if (!existsSync(defaultVllmPython())) console.log('vLLM: skipped, no .venv-vllm (bash scripts/setup.sh --vllm makes it)');
  else {
    vllm = await vllmSample(modelDir, prompts, newTokens);
    console.log(`vLLM sampling: ${(vllm.ms / 1000).toFixed(1)} s, ${rate(vllm.ms)} tokens/s; peak RSS (its process group) ${vllm.peakMb.toFixed(0)} MB`);
  }

  // llama.cpp's llama-server.
  let llamacpp: { ms: number; peakMb: number } | null = null;
  const llamacppReason = argv.includes('--no-llamacpp') ? 'skipped (--no-llamacpp)' : llamacppUnavailable();
  const measured = llamacppReason ?? await llamacppSample(modelDir, prompts, newTokens, threadCount()).catch((err: Error) => fail(`the llama.cpp side failed: ${err.message}`));
  if (typeof measured === 'string') console.log(`llama.cpp: ${measured}`);
  else {
    llamacpp = measured;
    console.log(`llama.cpp sampling: ${(llamacpp.ms / 1000).toFixed(1)} s, ${rate(llamacpp.ms)} tokens/s; peak RSS (llama-server) ${llamacpp.peakMb.toFixed(0)} MB`);
  }

  const ms = (x: number | null | undefined): number | null => (x == null ? null : Math.round(x));
  console.log(JSON.stringify({
    model: basename(modelDir), prompts: promptCount, new_tokens: newTokens, lora_tokens: [LORA_B, LORA_T], threads: threadCount(),
    sample_tokens_per_s: { marft: rate(marftSampleMs), transformers: rate(tf?.sample_ms), vllm: rate(vllm?.ms), 'llama.cpp': rate(llamacpp?.ms) },
    lora_step_ms: { marft: ms(marftLoraMs), pytorch: ms(tf?.lora_step_ms) },
    stopping_tokens_per_s: stopping ? { uncapped: stopping.uncapped.perS, continuous: stopping.continuous.perS, chunks: stopping.chunks.perS, cap } : null,
    group_sampling_tokens_per_s: { marft_shared_prefill: groupRate(group?.shared), marft_prefill_per_request: groupRate(group?.perRequest), prompts: groupPrompts, group: G, new_tokens: groupNew, prompt_tokens: group?.promptTokens ?? null },
    peak_rss_mb: { marft: ms(marftPeak), transformers: ms(tf?.peak_rss_mb), vllm: ms(vllm?.peakMb), 'llama.cpp': ms(llamacpp?.peakMb) },
  }));
}

await main();
