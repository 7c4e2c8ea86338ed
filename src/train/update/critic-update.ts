// The critic update of one training step: clipped value loss (MSE or Huber) against the GAE
// returns, gradients handed to engine.backward as dL/dvalue per scored position, one AdamW step
// per critic per minibatch, `critic.epochs` passes of `critic.minibatches` seeded minibatches
// each (App. B's preset is one of each; a critic that must learn from few steps needs more).
// Units: one value per action (action level, V of the critic's input) or per token.
import type { Engine } from '../../engine/types.ts';
import type { CreditLevel, TrainAction } from '../types.ts';
import type { MarftConfig } from '../../config/schema.ts';
import { valueLoss } from '../losses/value-loss.ts';
import { deriveSeed } from '../../core/rng.ts';
import { criticRequest } from '../forward-passes.ts';
import { groupBy, microBatches, minibatches } from '../../core/batching.ts';

export interface CriticStats {
  valueLoss: number;
  valueClipFraction: number;
  gradNorm: number;
  /** Optimiser steps taken (critics × epochs × minibatches). */
  optimSteps: number;
}

export async function criticUpdate(engine: Engine, actions: TrainAction[], level: CreditLevel, config: MarftConfig, lr: number, seed: number): Promise<CriticStats> {
  const { critic, train } = config;
  const totals = { loss: 0, clip: 0, units: 0, gradNorm: 0, steps: 0 };
  // Built once for every epoch and minibatch (each copies the critic's input and the action's tokens).
  const requests = new Map(actions.map((a) => [a, criticRequest(a, level)] as const));
  for (let epoch = 0; epoch < critic.epochs; epoch++) {
    for (const mb of minibatches(actions, critic.minibatches, deriveSeed(seed, epoch))) {
      for (const [name, group] of groupBy(mb, (a) => a.critic!)) {
        const unitCount = group.reduce((s, a) => s + a.returns_K.length, 0);
        for (const micro of microBatches(group, (a) => requests.get(a)!.tokens.length, train.microBatchTokens)) {
          const out = await engine.forward({ kind: 'critic', name }, micro.map((a) => requests.get(a)!), { retainGraph: true });
          const dValues = micro.map((a, b) => {
            const values = out.values![b]!;
            const loss = valueLoss({
              values_N: values, oldValues_N: a.values_K, returns_N: a.returns_K, weights_N: new Float64Array(values.length).fill(1 / unitCount),
              kind: critic.valueLoss, clip: critic.valueClip, huberDelta: critic.huberDelta,
            });
            totals.loss += loss.loss;
            totals.clip += loss.clipFraction * values.length;
            totals.units += values.length;
            return Float32Array.from(loss.dValues_N);
          });
          await engine.backward(out.handle!, { dValues });
        }
        const { gradNorm } = await engine.optimStep({ kind: 'critic', name }, {
          lr, beta1: critic.optim.beta1, beta2: critic.optim.beta2, eps: critic.optim.eps, weightDecay: critic.optim.weightDecay, maxGradNorm: critic.optim.maxGradNorm,
        });
        totals.gradNorm = Math.max(totals.gradNorm, gradNorm);
        totals.steps++;
      }
    }
  }
  const groups = Math.max(1, totals.steps);
  return { valueLoss: totals.loss / groups, valueClipFraction: totals.clip / Math.max(1, totals.units), gradNorm: totals.gradNorm, optimSteps: totals.steps };
}
