// The trainer hands engine.backward exactly the per-token gradients of the spec's losses: a fixed
// episode, a fresh (uniform) policy and a zero critic, so every number is computed by hand here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import type { BackwardGrads, GraphHandle, Target } from '../../src/engine/types.ts';
import { TabularEngine } from '../../src/engine/tabular/engine.ts';
import type { Task } from '../../src/train/task.ts';
import { coordinationGame } from '../../src/tasks/toy/coordination-game.ts';
import { train } from '../../src/run/train.ts';
import type { Episode } from '../../src/workflow/trajectory.ts';

const V = 7; // vocabulary: a fresh adapter is uniform, log p = −ln 7 per token
const uniform = -Math.log(V);

/**
 * One episode, one step with team reward 1: the sender emits 2 tokens and has a role-local reward
 * of 0.5 (an independent learner's reward 1.5), the receiver emits 1 token (reward 1).
 */
function episode(senderBehaviour: number[]): Episode {
  return {
    problemId: 'fixed',
    actions: [
      { agent: 'sender', agentIndex: 0, step: 0, policy: 'policy', promptTokens: [0, 1, 3], actionTokens: [4, 5], behaviourLogprobs: senderBehaviour, stopReason: 'max_tokens', text: 'a b', localReward: 0.5 },
      { agent: 'receiver', agentIndex: 1, step: 0, policy: 'policy', promptTokens: [0, 2, 4, 5], actionTokens: [3], behaviourLogprobs: [uniform], stopReason: 'max_tokens', text: 'c', localReward: 0 },
    ],
    steps: [{ t: 0, teamReward: 1, done: true }],
    outcome: 1,
    info: {},
  };
}

class SpyEngine extends TabularEngine {
  readonly calls: { target: Target; grads: BackwardGrads }[] = [];
  private readonly targets = new Map<number, Target>();
  override async forward(target: Target, batch: Parameters<TabularEngine['forward']>[1], options?: Parameters<TabularEngine['forward']>[2]) {
    const out = await super.forward(target, batch, options);
    if (out.handle) this.targets.set(out.handle.id, target);
    return out;
  }
  override async backward(handle: GraphHandle, grads: BackwardGrads) {
    this.calls.push({ target: this.targets.get(handle.id)!, grads });
    return super.backward(handle, grads);
  }
}

async function oneStep(algorithm: string, senderBehaviour: number[], extra: Record<string, unknown> = {}) {
  const config = parseConfig({
    algorithm, model: { engine: 'tabular' },
    actor: { klCoef: 0, ...extra },
    advantage: { gamma: 0.9, lambda: 0.5, normaliseRewards: false, normaliseAdvantages: false },
    critic: { valueClip: 0 },
    rollout: { batchSize: 1 }, train: { steps: 1 },
  });
  const task: Task = { agents: ['sender', 'receiver'], rollout: async () => [episode(senderBehaviour)], evaluate: async () => [] };
  const engine = new SpyEngine(V);
  await train({ config, engine, task, runDir: mkdtempSync(join(tmpdir(), 'marft-plumb-')), progress: false });
  const actor = engine.calls.find((c) => c.target.kind === 'adapter')!.grads.dLogprobs!.map((g) => Array.from(g));
  const critic = engine.calls.find((c) => c.target.kind === 'critic')!.grads.dValues!.map((g) => Array.from(g));
  return { actor, critic };
}

function close(actual: number[][], expected: number[][], tol = 1e-6): void {
  assert.equal(actual.length, expected.length);
  actual.forEach((row, b) => row.forEach((x, k) => assert.ok(Math.abs(x - expected[b]![k]!) <= tol, `[${b}][${k}] ${x} vs ${expected[b]![k]}`)));
}

test('action level: dL/dlogp per token = −(1/N)·iw·A·scale, A from action-level GAE; critic dL/dV = (V − R)/N', async () => {
  // The joint chain: the team reward 1 once, at the receiver (the step's last action); the sender's local 0.5 at the sender.
  // V = 0: A_receiver = 1; A_sender = 0.5 + 1·0 − 0 + 1·0.5·1 = 1 (γ_agent = 1, λ = 0.5). Ratio 1 (one pass).
  // Sender behaviour log-prob of the action: 2·uniform − 0.2 → iw = e^{0.2}; receiver iw = 1.
  const { actor, critic } = await oneStep('marft-action', [uniform - 0.1, uniform - 0.1]);
  close(actor, [[-0.5 * Math.exp(0.2), -0.5 * Math.exp(0.2)], [-0.5]]);
  close(critic, [[-1 / 2], [-1 / 2]]);
  // Per-token normalisation divides the sender's action log-prob (and so its gradient) by 2.
  const perToken = await oneStep('marft-action', [uniform - 0.1, uniform - 0.1], { actionNormalisation: 'token' });
  close(perToken.actor, [[-0.25 * Math.exp(0.1), -0.25 * Math.exp(0.1)], [-0.5]]);
  // A behaviour log-prob far below the proximal one is capped at 5.
  const capped = await oneStep('marft-action', [uniform - 1, uniform - 1]);
  close(capped.actor, [[-2.5, -2.5], [-0.5]]);
});

test('token level: per-token GAE (γ_w = 1, none across the agent boundary) and a token-mean loss', async () => {
  // V = 0: receiver token A = 1; sender last token A = 0.5 + 0.5·1 = 1; sender first token A = 1·0.5·1 = 0.5.
  const { actor, critic } = await oneStep('marft-token', [uniform, uniform]);
  close(actor, [[-0.5 / 3, -1 / 3], [-1 / 3]]);
  close(critic, [[-0.5 / 3, -1 / 3], [-1 / 3]]);
});

test('IPPO: per-agent chains, each agent receives the team reward plus its own local reward; outcome variant: the episode outcome at the end', async () => {
  const ippo = await oneStep('ippo', [uniform, uniform]);
  // Each adapter's loss is the mean over its own single action: A_sender = 1 + 0.5, A_receiver = 1.
  const byAdapter = ippo.actor;
  assert.equal(byAdapter.length, 1, 'first backward call holds one adapter only');
  close(byAdapter, [[-1.5, -1.5]]);
  const outcome = await oneStep('marft-outcome', [uniform, uniform]);
  // Rewards (0, score 1), not the sum of the actions' rewards: A_receiver = 1; A_sender = 0 + 0.5·1 = 0.5.
  close(outcome.actor, [[-0.25, -0.25], [-0.5]]);
});

test('micro-batching (capped in tokens) does not change the update: cap 1 token vs 32,768 give the same run', async () => {
  const runWith = async (microBatchTokens: number, extra: Record<string, unknown> = {}) => {
    const config = parseConfig({
      model: { engine: 'tabular' }, seed: 4, actor: { klCoef: 0.1, optim: { lr: 0.1 }, ...extra }, critic: { optim: { lr: 0.1 } },
      rollout: { batchSize: 16, maxNewTokens: 2 }, train: { steps: 4, microBatchTokens },
    });
    const { task, vocabSize } = coordinationGame({ messageTokens: 2 });
    const r = await train({ config, engine: new TabularEngine(vocabSize), task, runDir: mkdtempSync(join(tmpdir(), 'marft-mb-')), progress: false });
    return r.metrics.map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.endsWith('_s'))));
  };
  for (const extra of [{}, { epochs: 2, minibatches: 2 }]) {
    const a = await runWith(1, extra);
    const b = await runWith(32768, extra);
    a.forEach((m, i) => {
      for (const [k, v] of Object.entries(m)) {
        const w = b[i]![k];
        if (typeof v === 'number' && typeof w === 'number') assert.ok(Math.abs(v - w) <= 1e-9 * Math.max(1, Math.abs(v)), `step ${i} ${k}: ${v} vs ${w}`);
        else assert.equal(v, w, `step ${i} ${k}`);
      }
    });
    assert.ok(a.some((m) => Number(m.kl) > 0), 'the KL term is exercised');
  }
});
