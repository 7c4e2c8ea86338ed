// Evaluating a served model from a configuration (model.engine openai | vllm, `marft eval CONFIG --base`
// only; src/run/setup.ts buildSamplingModel):
//   - without any server (these run in CI): `marft train` and `marft eval --base` without model.url
//     refuse in one line naming the key, before a run folder is made;
//   - with vLLM (.venv-vllm): the prompt-only SA+ST row (examples/prompt-only/sa-st.yaml, budgets cut)
//     on a tiny Qwen3 folder at temperature 0 gives the embedded engine's score and per-seed numbers
//     through the CLI, both with model.engine openai at a server this test starts and with
//     model.engine vllm (marft starts its own); and the episodes behind them are the embedded engine's
//     token for token (the random model scores 0 either way, so the numbers alone would prove little).
// The folder is scripts/make-tiny-model.ts's with hidden size 256 (vLLM's CPU attention needs 64-wide heads).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import { VllmServer } from '../../src/engine/vllm/server.ts';
import { EVAL_SEED_BASE } from '../../src/train/evaluate.ts';
import { basePolicies } from '../../src/train/evaluate.ts';
import { deriveSeed } from '../../src/core/rng.ts';
import { buildSamplingModel, buildTask } from '../../src/run/setup.ts';
import type { Episode } from '../../src/workflow/trajectory.ts';
import { runCli } from '../cli/spawn-cli.ts';
import { repoRoot, tempDir } from './oracle-helpers.ts';
import { skipWithoutVllm, vllmPython } from './vllm-helpers.ts';

const example = join(repoRoot, 'examples/prompt-only/sa-st.yaml');
const python = vllmPython;
const skip = skipWithoutVllm;
// vLLM on the CPU: a small KV cache, no thread pinning, one OpenMP thread (as the other vLLM tests).
const VLLM_ENV = { VLLM_CPU_KVCACHE_SPACE: '1', VLLM_CPU_OMP_THREADS_BIND: 'nobind', OMP_NUM_THREADS: '1' };

let dir = '';
let model = '';
let server: VllmServer | undefined;

before(async () => {
  dir = tempDir('served-eval');
  model = join(dir, 'model');
  execFileSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts/make-tiny-model.ts'), '--out', model, '--hidden-size', '256', '--seed', '5'], { cwd: repoRoot });
  if (!skip) server = await VllmServer.start({ python, modelDir: model, maxLoraRank: null, env: VLLM_ENV });
});

after(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a served model.engine is refused by marft train (before the run folder is made) and eval --base needs model.url, one line each', { timeout: 60_000 }, async () => {
  const runDir = join(dir, 'run');
  const t = await runCli({ args: ['train', example, '--run-dir', runDir, '--set', `model.path=${model}`, '--set', 'model.engine=vllm'] });
  assert.equal(t.status, 2, t.stderr);
  assert.match(t.stderr, /^marft train: model\.engine: vllm serves a model for sampling only \(marft eval CONFIG --base, the prompt-only rows\); training and checkpoints need model\.engine embedded or torch\n$/);
  assert.ok(!existsSync(runDir), 'the run folder was made');
  const e = await runCli({ args: ['eval', example, '--base', '--set', `model.path=${model}`, '--set', 'model.engine=openai'] });
  assert.equal(e.status, 2, e.stderr);
  assert.match(e.stderr, /^marft eval: model\.url: model\.engine openai needs the server's OpenAI API root, e.g\. http:\/\/127\.0\.0\.1:8000\/v1\n$/);
});

// Two seeds at temperature 0 (equal by construction, and each must equal the embedded engine's; the
// example decodes by the MAS-OPD protocol, which refuses another temperature: protocol custom here), three
// held-out problems, generations cut short.
const budget = ['eval.protocol=custom', 'eval.temperature=0', 'eval.seeds=2', 'eval.problems=3', 'rollout.maxNewTokens=24'];

async function evalBase(sets: string[]): Promise<{ score: number; perSeed: number[]; problems: number; base: boolean }> {
  const r = await runCli({ args: ['eval', example, '--base', ...[`model.path=${model}`, ...budget, ...sets].flatMap((s) => ['--set', s])], cwd: repoRoot });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
}

test('marft eval --base of the prompt-only SA+ST row: model.engine openai and vllm give the embedded engine\'s score and per-seed numbers', { skip, timeout: 600_000 }, async () => {
  const embedded = await evalBase([]);
  assert.equal(embedded.problems, 3);
  assert.equal(embedded.perSeed.length, 2);
  const openai = await evalBase(['model.engine=openai', `model.url=${server!.baseUrl}`]);
  assert.deepEqual(openai, embedded);
  const saved = { ...process.env };
  Object.assign(process.env, VLLM_ENV);
  const running = evalBase(['model.engine=vllm']); // spawned with this environment
  process.env = saved;
  assert.deepEqual(await running, embedded);
});

test('the served model\'s evaluation episodes are the embedded engine\'s, token for token', { skip, timeout: 300_000 }, async () => {
  const episodes = async (sets: string[]): Promise<Episode[]> => {
    const config = await loadConfig(example, [`model.path=${model}`, ...budget, ...sets]);
    const bundle = await buildTask(config);
    const engine = await buildSamplingModel(config, bundle);
    try {
      // What evaluatePolicies asks for its first seed.
      return await bundle.task.evaluate(engine, {
        seed: deriveSeed(EVAL_SEED_BASE, 0),
        sampling: { temperature: 0, topP: config.eval.topP, topK: config.eval.topK, maxNewTokens: config.rollout.maxNewTokens },
        problems: config.eval.problems, policies: basePolicies(bundle.task),
      });
    } finally {
      await engine.dispose();
    }
  };
  const [a, b] = [await episodes([]), await episodes(['model.engine=openai', `model.url=${server!.baseUrl}`, 'model.servedModel=base'])];
  assert.equal(b.length, a.length);
  let tokens = 0;
  a.forEach((ep, i) => {
    assert.deepEqual(b[i]!.actions.map((x) => x.actionTokens), ep.actions.map((x) => x.actionTokens), `episode ${i}`);
    assert.equal(b[i]!.outcome, ep.outcome);
    tokens += ep.actions.reduce((s, x) => s + x.actionTokens.length, 0);
  });
  assert.ok(tokens > 0);
  console.log(`served evaluation: ${a.length} episodes, ${tokens} generated tokens equal`);
});
