// MARFT against IPPO on the relay game with the embedded engine (docs/training.md, "MARFT against
// IPPO", the embedded-engine subsections): one condition over a list of run seeds, the recorded
// setting unless a flag changes it — 3 agents, 4 symbols, noise 0; the task's tiny decoder (hidden
// 256) built from base seed 5 whatever the run seed, so every run starts from the same base; LoRA
// rank 8, one adapter per agent; 4 PPO epochs, lr 0.002 for actor and critic, no KL; 40 steps of 64
// episodes; final score on 2 evaluation seeds at temperature 0.6.
//
// Prints one JSON line per run: area (mean training score_mean over the steps), final, the mean of
// explained_variance/pos<i> (the values credited against the Monte Carlo returns) and of
// explained_variance_exact/pos<i> (the learned critic against the exact values) over the first and
// over the last 10 steps, and the greedy code learnt
// (per secret 0..3: the messages delivered, then the answer, as token ids: 0 BOS, 1–3 the agents'
// tags, 4–7 the symbols, so secret s is answered right by token 4 + s); then one summary line.
//   node --import tsx scripts/relay-embedded.ts --algorithm marft-action --critic mlp --seeds 1-5
//   flags: --algorithm marft-action|ippo  --critic mlp|lora  --seeds A-B or A,B,C  --lambda 0.5
//          --baseline critic|batch-mean|exact  --whiten batch|position  --steps 40
//          the critic (docs/training.md, "The critic's defaults"): --critic-lr 0.002  --critic-epochs 1
//          --critic-warmup 0 (steps training only the critic)  --head-init torch|zero (torch: the recorded
//          setting, though critic.headInit's default is now zero)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config/load.ts';
import { evaluatePolicies } from '../src/train/evaluate.ts';
import { train } from '../src/run/train.ts';
import { relayGame, relayTokens } from '../src/tasks/toy/relay-game.ts';

const AGENTS = 3;
const SYMBOLS = 4;
const BASE_SEED = 5;

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

function fail(message: string): never {
  console.error(`relay-embedded: ${message}`);
  process.exit(2);
}

function parseSeeds(text: string): number[] {
  const range = /^(\d+)-(\d+)$/.exec(text);
  const seeds = range ? Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_, i) => Number(range[1]) + i) : text.split(',').map(Number);
  if (!seeds.length || seeds.some((s) => !Number.isInteger(s) || s < 0)) fail(`--seeds: expected A-B or a comma list of integers, got '${text}'`);
  return seeds;
}

const algorithm = flag('algorithm', 'marft-action');
if (algorithm !== 'marft-action' && algorithm !== 'ippo') fail(`--algorithm: marft-action or ippo, got '${algorithm}'`);
const criticKind = flag('critic', 'mlp');
if (criticKind !== 'mlp' && criticKind !== 'lora') fail(`--critic: mlp or lora, got '${criticKind}'`);
const seeds = parseSeeds(flag('seeds', '1-5'));
const lambda = Number(flag('lambda', '0.5'));
const baseline = flag('baseline', 'critic');
const steps = Number(flag('steps', '40'));
const whitenBy = flag('whiten', 'batch');
const criticLr = Number(flag('critic-lr', '0.002'));
const criticEpochs = Number(flag('critic-epochs', '1'));
const criticWarmup = Number(flag('critic-warmup', '0'));
const headInit = flag('head-init', 'torch');

// The MLP critic reads the frozen base's last hidden state; the LoRA critic (the paper's) trains its
// own adapter, with 4 minibatches per step (4 AdamW steps) as the demo's critic that learnt.
const criticTraining = { epochs: criticEpochs, warmupSteps: criticWarmup, headInit, optim: { lr: criticLr } };
const critic = criticKind === 'lora'
  ? { kind: 'lora-critic', loraRank: 8, minibatches: 4, ...criticTraining }
  : { kind: 'mlp', mlpHidden: [32], ...criticTraining };

const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

async function runOne(seed: number) {
  let config;
  try {
    config = parseConfig({
      algorithm, seed, task: { name: 'relay-game', options: { agents: AGENTS, symbols: SYMBOLS, noise: 0 } },
      model: { engine: 'embedded' }, policy: { parameterSharing: false, loraRank: 8 },
      actor: { klCoef: 0, epochs: 4, optim: { lr: 0.002 } }, critic, advantage: { lambda, baseline, whitenBy },
      rollout: { batchSize: 64, maxNewTokens: 1 }, train: { steps, checkpointEvery: 100000 }, eval: { seeds: 2 },
    });
  } catch (e) {
    fail((e as Error).message);
  }
  const bundle = relayGame({ agents: AGENTS, symbols: SYMBOLS, noise: 0 });
  const engine = await bundle.buildEngine!(BASE_SEED);
  const dir = mkdtempSync(join(tmpdir(), 'marft-relay-embedded-'));
  try {
    const result = await train({ config, engine, task: bundle.task, runDir: dir, progress: false });
    const scores = result.metrics.map((m) => Number(m.score_mean));
    const ev = (lines: typeof result.metrics, key = 'explained_variance') => Array.from({ length: AGENTS }, (_, p) => mean(lines.map((m) => Number(m[`${key}/pos${p}`] ?? NaN))));
    const final = await evaluatePolicies(engine, bundle.task, config, result.plan.policies);
    // The code learnt, read greedily: one episode per secret (the evaluation's first K are secrets 0..K−1).
    const greedy = await bundle.task.evaluate(engine, { seed: 99, sampling: { temperature: 0, topP: 1, topK: 0, maxNewTokens: 1 }, problems: SYMBOLS, policies: result.plan.policies });
    const symbol0 = relayTokens({ agents: AGENTS, symbols: SYMBOLS }).symbol(0);
    const code = greedy.map((e) => {
      const info = e.info as { delivered: number[]; answer: number };
      return [...info.delivered, info.answer + symbol0];
    });
    return { algorithm, critic: criticKind, criticLr, criticEpochs, criticWarmup, headInit, lambda, baseline, seed, area: mean(scores), final: final.score, evFirst10: ev(result.metrics.slice(0, 10)), evLast10: ev(result.metrics.slice(-10)),
      evExactFirst10: ev(result.metrics.slice(0, 10), 'explained_variance_exact'), evExactLast10: ev(result.metrics.slice(-10), 'explained_variance_exact'), whitenBy, code, scores };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const runs: Awaited<ReturnType<typeof runOne>>[] = [];
for (const seed of seeds) {
  const r = await runOne(seed);
  console.log(JSON.stringify(r));
  runs.push(r);
}
const list = (xs: number[]) => `${mean(xs).toFixed(3)} [${xs.map((x) => x.toFixed(3)).join(' ')}]`;
const evs = (key: 'evFirst10' | 'evLast10' | 'evExactFirst10' | 'evExactLast10') => Array.from({ length: AGENTS }, (_, p) => mean(runs.map((r) => r[key][p]!)).toFixed(2)).join(' / ');
console.log(`${algorithm}, critic ${criticKind} (lr ${criticLr}, ${criticEpochs} epochs, warm-up ${criticWarmup}, head ${headInit}), λ ${lambda}, baseline ${baseline}, whiten ${whitenBy}, seeds ${seeds.join(',')}: area ${list(runs.map((r) => r.area))}; final ${list(runs.map((r) => r.final))}; ` +
  `explained variance of the returns pos0/1/2 first 10 steps ${evs('evFirst10')}, last 10 ${evs('evLast10')}; of the exact values (learned critic) first 10 ${evs('evExactFirst10')}, last 10 ${evs('evExactLast10')}`);
