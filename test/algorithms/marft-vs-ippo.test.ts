// MARFT against IPPO on the relay game (src/tasks/toy/relay-game.ts; docs/training.md, "MARFT
// against IPPO"): four agents pass a secret along, the last one answers. Predicted before measuring:
// with λ < 1 MARFT's early agents are credited V(after) − V(before) by a critic that knows the
// secret, which averages over the later agents' sampling, while IPPO's advantage R − V_i(own prompt)
// carries all of it, so MARFT learns faster. Measured (5 seeds, mean training score over 150 steps):
// MARFT 0.462, IPPO 0.251, MARFT with its critic given only each agent's own prompt 0.243.
// Tabular engine, the same budget for every run, fixed seeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import { train } from '../../src/run/train.ts';
import { relayGame } from '../../src/tasks/toy/relay-game.ts';
import type { StepMetrics } from '../../src/runs/metrics-log.ts';

const long = process.env.MARFT_LONG_TESTS !== '0';
const skip = !long && 'MARFT_LONG_TESTS=0';

const SEEDS = [1, 2, 3, 4, 5];
const STEPS = 150;

/** Training scores of one run (score_mean per step): every agent its own adapter, as IPPO has. */
async function curve(algorithm: 'marft-action' | 'ippo', seed: number, lambda: number, taskOptions: Record<string, unknown> = {}): Promise<number[]> {
  const config = parseConfig({
    algorithm, seed, model: { engine: 'tabular' }, policy: { parameterSharing: false },
    actor: { klCoef: 0, optim: { lr: 0.1 } }, critic: { optim: { lr: 0.1 } }, advantage: { lambda },
    rollout: { batchSize: 64, maxNewTokens: 1 }, train: { steps: STEPS, checkpointEvery: 100000 },
  });
  const { task, vocabSize } = relayGame({ agents: 4, symbols: 4, noise: 0, ...taskOptions });
  const dir = mkdtempSync(join(tmpdir(), 'marft-vs-ippo-'));
  try {
    const result = await train({ config, engine: new TabularEngine(vocabSize), task, runDir: dir, progress: false });
    return result.metrics.map((m) => Number(m.score_mean));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

/** Area under the learning curve: the mean training score over the steps, per seed. */
async function areas(algorithm: 'marft-action' | 'ippo', lambda: number, taskOptions: Record<string, unknown> = {}): Promise<number[]> {
  const out: number[] = [];
  for (const seed of SEEDS) out.push(mean(await curve(algorithm, seed, lambda, taskOptions)));
  return out;
}

test('relay game, 4 agents, λ = 0.5: MARFT learns faster than IPPO, and only with the joint state in its critic', { skip }, async (t) => {
  const marft = await areas('marft-action', 0.5);
  const ippo = await areas('ippo', 0.5);
  const ownView = await areas('marft-action', 0.5, { criticView: 'own' });
  t.diagnostic(`learning-curve areas: MARFT ${marft.map((x) => x.toFixed(3)).join(' ')}; IPPO ${ippo.map((x) => x.toFixed(3)).join(' ')}; MARFT, own-prompt critic ${ownView.map((x) => x.toFixed(3)).join(' ')}`);
  // Measured gaps 0.211 and 0.219; 0.1 leaves room for either to halve.
  assert.ok(mean(marft) - mean(ippo) >= 0.1, `MARFT ${mean(marft).toFixed(3)} vs IPPO ${mean(ippo).toFixed(3)}`);
  assert.ok(mean(marft) - mean(ownView) >= 0.1, `MARFT ${mean(marft).toFixed(3)} vs own-prompt critic ${mean(ownView).toFixed(3)}`);
});

test('relay game: IPPO does not depend on λ (each of its chains holds one action)', { skip }, async () => {
  assert.deepEqual(await curve('ippo', 1, 0.95), await curve('ippo', 1, 0.5));
});

// On the embedded engine (docs/training.md, "On the embedded engine, with a critic that learns"):
// the recorded setting (3 agents, λ = 0.5, the task's tiny decoder from base seed 5, LoRA rank 8,
// 4 PPO epochs, lr 0.002, 64 episodes a step, a 40-step schedule) stopped after its first 10 steps,
// where the learning-curve area is decided. The paper's LoRA critic (rank 8, 4 minibatches) values
// the joint state there; the MLP critic on the frozen base does not yet. Measured mean explained
// variance of the Monte Carlo returns over those steps, seeds 1–3: pos0 0.011 (MLP) vs 0.129 (LoRA),
// pos1 −0.012 vs 0.112 (against the λ-returns, the metric before issue 19: 0.094 vs 0.382 and
// −0.010 vs 0.230).
// That the better critic did not make MARFT beat IPPO is the documented finding, not asserted here.
async function embeddedFirstSteps(criticKind: 'mlp' | 'lora', seed: number): Promise<StepMetrics[]> {
  const critic = criticKind === 'lora'
    ? { kind: 'lora-critic', loraRank: 8, minibatches: 4, optim: { lr: 0.002 } }
    : { kind: 'mlp', mlpHidden: [32], optim: { lr: 0.002 } };
  const config = parseConfig({
    algorithm: 'marft-action', seed, task: { name: 'relay-game', options: { agents: 3 } }, model: { engine: 'embedded' },
    policy: { parameterSharing: false, loraRank: 8 }, actor: { klCoef: 0, epochs: 4, optim: { lr: 0.002 } }, critic,
    advantage: { lambda: 0.5 }, rollout: { batchSize: 64, maxNewTokens: 1 }, train: { steps: 40, checkpointEvery: 100000 },
  });
  const bundle = relayGame({ agents: 3 });
  const engine = await bundle.buildEngine!(5);
  const dir = mkdtempSync(join(tmpdir(), 'marft-vs-ippo-embedded-'));
  try {
    return (await train({ config, engine, task: bundle.task, runDir: dir, progress: false, stopAtStep: 10 })).metrics;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('relay game on the embedded engine, 3 agents: over the first 10 steps the LoRA critic explains more of the return variance at positions 0 and 1 than the MLP critic', { skip }, async (t) => {
  const runs = { mlp: [] as StepMetrics[][], lora: [] as StepMetrics[][] };
  for (const kind of ['mlp', 'lora'] as const) for (const seed of [1, 2, 3]) runs[kind].push(await embeddedFirstSteps(kind, seed));
  const meanEv = (kind: 'mlp' | 'lora', pos: number) => mean(runs[kind].map((m) => mean(m.map((x) => Number(x[`explained_variance/pos${pos}`])))));
  for (const pos of [0, 1]) {
    t.diagnostic(`pos${pos}: MLP ${meanEv('mlp', pos).toFixed(3)}, LoRA ${meanEv('lora', pos).toFixed(3)}`);
    // Measured gaps 0.118 (pos0) and 0.124 (pos1); 0.05 leaves room for either to more than halve.
    assert.ok(meanEv('lora', pos) - meanEv('mlp', pos) >= 0.05, `pos${pos}: LoRA ${meanEv('lora', pos).toFixed(3)} vs MLP ${meanEv('mlp', pos).toFixed(3)}`);
  }
});
