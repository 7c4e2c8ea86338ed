// The sampler/trainer mismatch correction of the objectives without a behaviour term of their own:
// MAGRPO's REINFORCE weights each unit by min(π_old/μ, actor.behaviourCap) when a separate engine
// sampled (sampler.engine: vllm), and is the authors' plain REINFORCE, bit for bit, when the trainer
// sampled; PPO-clip without decoupling (or without recomputed log-probs) under a separate sampler is
// refused. No vLLM server: the episodes carry behaviour log-probs that differ from the trainer's, as
// a separate sampler's would, on a fresh tabular policy (uniform: log π = −ln V per token).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { ConfigError } from '../../src/config/schema-dsl.ts';
import type { BackwardGrads, GraphHandle, Target } from '../../src/engine/types.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import type { Task } from '../../src/train/task.ts';
import { train } from '../../src/run/train.ts';
import { planFor } from '../../src/algorithms/check.ts';
import type { Episode } from '../../src/workflow/trajectory.ts';

const V = 7;
const uniform = -Math.log(V);

/** One single-turn episode of group g0: agent a emits two tokens with the given behaviour log-probs and earns `reward`. */
function episode(behaviour: number[], reward: number): Episode {
  return {
    problemId: 'fixed', group: 'g0',
    actions: [{ agent: 'a', agentIndex: 0, step: 0, policy: 'policy-a', promptTokens: [0, 1], actionTokens: [4, 5], behaviourLogprobs: behaviour, stopReason: 'max_tokens', text: 'x y', localReward: 0 }],
    steps: [{ t: 0, teamReward: reward, done: true }],
    outcome: reward,
    info: {},
  };
}

class SpyEngine extends TabularEngine {
  readonly grads: BackwardGrads[] = [];
  override async backward(handle: GraphHandle, grads: BackwardGrads) {
    this.grads.push(grads);
    return super.backward(handle, grads);
  }
}

const task = (episodes: Episode[]): Task => ({ agents: ['a'], rollout: async () => episodes, evaluate: async () => [] });

function config(sampler: 'trainer' | 'vllm', extra: Record<string, unknown> = {}, algorithm = 'magrpo') {
  return parseConfig({
    algorithm, model: { engine: 'tabular' }, sampler: { engine: sampler },
    actor: { klCoef: 0, behaviourCap: 5, ...extra },
    rollout: { batchSize: 1, rolloutsPerPrompt: 3 }, train: { steps: 1 },
  });
}

// Three joint samples of one node, rewards 3, 0, 0: advantages 2, −1, −1 (return − node mean, no std).
// Behaviour log-probs per token relative to the trainer's (uniform): −0.1 and −0.1 (action weight e^{0.2}),
// +0.15 and +0.15 (e^{−0.3}), −1 and −1 (e^{2} ≈ 7.39, capped at 5).
const shifts = [-0.1, 0.15, -1];
const episodes = () => [episode([uniform - 0.1, uniform - 0.1], 3), episode([uniform + 0.15, uniform + 0.15], 0), episode([uniform - 1, uniform - 1], 0)];
const advantages = [2, -1, -1];

async function run(sampler: 'trainer' | 'vllm', extra: Record<string, unknown> = {}) {
  const engine = new SpyEngine(V);
  const result = await train({ config: config(sampler, extra), engine, task: task(episodes()), runDir: mkdtempSync(join(tmpdir(), 'marft-mismatch-')), progress: false });
  return { grads: engine.grads.map((g) => g.dLogprobs!.map((x) => Array.from(x))), metrics: result.metrics[0]! };
}

test('policy-gradient with the trainer sampling: −A/N on every token whatever the behaviour log-probs say (the authors’ REINFORCE), weight 1', async () => {
  const { grads, metrics } = await run('trainer');
  assert.equal(grads.length, 1);
  // Action-level units, sum normalisation: dL/dlogp of each token = −(1/3)·A, exactly as −w·A computes it in float64, stored in float32.
  assert.deepEqual(grads[0], advantages.map((a) => [Math.fround(-(1 / 3) * a), Math.fround(-(1 / 3) * a)]));
  assert.equal(metrics.importance_weight_mean, 1);
  assert.equal(metrics.importance_capped_fraction, 0);
  // −Σ (1/3)·A·log π with log π = 2·uniform for every action: the advantages sum to 0, so does the loss.
  assert.ok(Math.abs(metrics.policy_loss as number) < 1e-6);
});

test('policy-gradient with a separate sampler: each action weighted by min(exp(log π_old − log μ), cap), reported per step', async () => {
  const { grads, metrics } = await run('vllm');
  const weights = shifts.map((d) => Math.min(Math.exp(-2 * d), 5));
  assert.ok(Math.abs(weights[0]! - Math.exp(0.2)) < 1e-12 && Math.abs(weights[1]! - Math.exp(-0.3)) < 1e-12 && weights[2] === 5);
  const expected = advantages.map((a, i) => -(1 / 3) * weights[i]! * a);
  assert.equal(grads.length, 1);
  // The trainer's old log-probs are float32 (the engine's), the behaviour ones too: agreement to float32 precision.
  grads[0]!.forEach((row, i) => row.forEach((g) => assert.ok(Math.abs(g - expected[i]!) < 1e-5, `action ${i}: ${g} vs ${expected[i]}`)));
  assert.ok(Math.abs((metrics.importance_weight_mean as number) - (Math.exp(0.2) + Math.exp(-0.3) + 5) / 3) < 1e-5);
  assert.ok(Math.abs((metrics.importance_capped_fraction as number) - 1 / 3) < 1e-12);
  // The weight differs from the trainer-sampled run's 1, so the gradient does: the correction is applied.
  assert.ok(Math.abs(grads[0]![0]![0]! - -(2 / 3)) > 0.1);
});

test('policy-gradient with a separate sampler over several passes: the weight is π_old/μ from before the first update, not the moving policy', async () => {
  const { grads } = await run('vllm', { epochs: 2, optim: { lr: 0.5, schedule: 'constant', warmupRatio: 0 } });
  assert.equal(grads.length, 2);
  // REINFORCE's gradient does not depend on the current log-probs; with π_old fixed it is the same in both passes
  // although the first optimiser step moved the policy (a weight from the current π would change).
  assert.deepEqual(grads[1], grads[0]);
  const expected = advantages.map((a, i) => -(1 / 3) * Math.min(Math.exp(-2 * shifts[i]!), 5) * a);
  grads[1]!.forEach((row, i) => row.forEach((g) => assert.ok(Math.abs(g - expected[i]!) < 1e-5)));
});

test('a separate sampler with PPO-clip not decoupled, or without recomputed log-probs, is refused in one line naming the keys', () => {
  const t = task([]);
  for (const algorithm of ['grpo', 'marft-action']) {
    assert.throws(() => planFor(config('vllm', { decoupled: false }, algorithm), t), (e: unknown) => e instanceof ConfigError && /actor\.decoupled: false with sampler\.engine: vllm/.test(e.message) && !e.message.includes('\n'));
    assert.doesNotThrow(() => planFor(config('trainer', { decoupled: false }, algorithm), t));
  }
  for (const algorithm of ['grpo', 'magrpo']) {
    assert.throws(() => planFor(config('vllm', { recomputeLogprobs: false }, algorithm), t), (e: unknown) => e instanceof ConfigError && /actor\.recomputeLogprobs: false with sampler\.engine: vllm/.test(e.message));
  }
  assert.doesNotThrow(() => planFor(config('vllm', {}, 'grpo'), t));
  assert.doesNotThrow(() => planFor(config('vllm', {}, 'magrpo'), t));
});
