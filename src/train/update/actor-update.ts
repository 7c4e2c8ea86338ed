// The policy update of one training step: the plan's policy objective (PPO-clip, decoupled as in
// App. B, for MARFT; REINFORCE for MAGRPO; src/train/losses/policy-objectives.ts) on action- or
// token-level units, plus the k3 KL penalty against the frozen base when the plan keeps it,
// accumulated micro-batch by micro-batch
// (gradients handed to engine.backward as dL/dlogprob per token), then one AdamW step per
// adapter per minibatch. Each adapter's loss is the mean over its own units, so a role's gradient
// updates only its policy.
import type { Engine } from '../../engine/types.ts';
import type { MarftConfig } from '../../config/schema.ts';
import { actionLogprob, spreadActionGrad } from '../losses/action-normalisation.ts';
import { KL_ESTIMATORS } from '../losses/k3-kl.ts';
import { objectiveOf } from '../losses/policy-objectives.ts';
import { deriveSeed } from '../../core/rng.ts';
import { forwardActions } from '../forward-passes.ts';
import { episodeMinibatches, groupBy, microBatches, minibatches } from '../../core/batching.ts';
import type { AlgorithmPlan, TrainAction } from '../types.ts';
import { unitWeights } from '../losses/aggregation.ts';

export interface ActorStats {
  policyLoss: number;
  kl: number;
  clipFraction: number;
  importanceWeight: number;
  cappedFraction: number;
  gradNorm: number;
  units: number;
}

const sequence = (a: TrainAction) => ({ tokens: a.tokens, scoreFrom: a.scoreFrom });

/**
 * The passes of one step's policy update: each a list of minibatches. units: actor.epochs passes of
 * actor.minibatches minibatches, each pass seeded from (seed, epoch); episodes: one pass of minibatches
 * of whole episodes, seeded from `episodeSeed` (MAS-OPD's split, src/train/types.ts UpdateSplit).
 */
export function updatePasses(actions: TrainAction[], plan: Pick<AlgorithmPlan, 'split'>, config: MarftConfig, seed: number, episodeSeed: number, episodes: number): TrainAction[][][] {
  const split = plan.split ?? { by: 'units', count: config.actor.minibatches, epochs: config.actor.epochs };
  if (split.by === 'episodes') return [episodeMinibatches(actions, (a) => a.episode, episodes, split.size, episodeSeed)];
  return Array.from({ length: split.epochs }, (_, epoch) => minibatches(actions, split.count, deriveSeed(seed, epoch)));
}

export async function actorUpdate(engine: Engine, actions: TrainAction[], plan: Pick<AlgorithmPlan, 'level' | 'policyLoss' | 'kl' | 'aggregation' | 'dualClip'>, config: MarftConfig, lr: number, passes_P: TrainAction[][][]): Promise<ActorStats> {
  const { actor, train, rollout } = config;
  const { level } = plan;
  const objective = objectiveOf(plan.policyLoss);
  const aggregation = plan.aggregation ?? 'unit-mean';
  const klCoef = plan.kl ? actor.klCoef : 0;
  const temperature = rollout.temperature > 0 ? rollout.temperature : 1;
  const passes = passes_P.reduce((s, p) => s + p.length, 0);
  // A separate sampler (sampler.engine: vllm) drew the behaviour log-probs; the objective corrects
  // for its mismatch with the trainer (src/train/losses/policy-objectives.ts).
  const samplerSeparate = config.sampler.engine !== 'trainer';
  // One pass over one minibatch: the update pass's own (detached) log-probs are the proximal ones,
  // so no separate recomputation pass is needed (the reference code's duplicate forward, spec section 4).
  // An objective that reads no proximal policy (REINFORCE on the trainer's own samples) needs no such pass at all.
  const separateProximal = objective.needsProximal(samplerSeparate) && actor.recomputeLogprobs && passes > 1;
  if (separateProximal) {
    for (const [policy, group] of groupBy(actions, (a) => a.policy!)) {
      await forwardActions(engine, { kind: 'adapter', name: policy }, group, sequence, train.microBatchTokens, temperature, (a, lp) => (a.proximal_K = lp));
    }
  }
  const totals = { policyLoss: 0, kl: 0, clip: 0, iw: 0, capped: 0, gradNorm: 0, units: 0, steps: 0 };
  let pass = 0;
  for (const minibatches_M of passes_P) {
    for (const mb of minibatches_M) {
      // The trainer's own samples, before the first optimiser step: the policy is the behaviour policy.
      const onPolicy = pass++ === 0 && !samplerSeparate;
      for (const [policy, group] of groupBy(mb, (a) => a.policy!)) {
        const tokenCount = group.reduce((s, a) => s + a.length, 0);
        const unitWeight = unitWeights(group, mb, level, aggregation);
        const tokenWeight = 1 / tokenCount;
        for (const micro of microBatches(group, (a) => a.tokens.length, train.microBatchTokens)) {
          const out = await engine.forward({ kind: 'adapter', name: policy }, micro.map(sequence), { temperature, retainGraph: true });
          const logprobs = out.logprobs!;
          const dLogprobs = micro.map((a) => new Float32Array(a.length));
          const proximalOf = (a: TrainAction, b: number): ArrayLike<number> =>
            actor.recomputeLogprobs ? (separateProximal ? a.proximal_K! : logprobs[b]!) : a.behaviourLogprobs_K;
          // PPO units: one per action (normalised action log-prob) or one per token.
          const lp: number[] = [], prox: number[] = [], behav: number[] = [], adv: number[] = [], w: number[] = [];
          micro.forEach((a, b) => {
            if (level === 'action') {
              lp.push(actionLogprob(logprobs[b]!, a.scale));
              prox.push(actionLogprob(proximalOf(a, b), a.scale));
              behav.push(actionLogprob(a.behaviourLogprobs_K, a.scale));
              adv.push(a.advantages_K[0]!);
              w.push(unitWeight(a));
            } else {
              const p = proximalOf(a, b);
              for (let k = 0; k < a.length; k++) {
                lp.push(logprobs[b]![k]!);
                prox.push(p[k]!);
                behav.push(a.behaviourLogprobs_K[k]!);
                adv.push(a.advantages_K[k]!);
                w.push(unitWeight(a));
              }
            }
          });
          const ppo = objective.loss({ logprobs_N: lp, proximalLogprobs_N: prox, behaviourLogprobs_N: behav, advantages_N: adv, weights_N: w, actor, samplerSeparate, onPolicy, ...(plan.dualClip !== undefined ? { dualClip: plan.dualClip } : {}) });
          let u = 0;
          micro.forEach((a, b) => {
            if (level === 'action') {
              dLogprobs[b]!.set(spreadActionGrad(ppo.dLogprobs_N[u++]!, a.scale, a.length));
            } else {
              for (let k = 0; k < a.length; k++) dLogprobs[b]![k] = ppo.dLogprobs_N[u++]!;
            }
          });
          const unitsHere = w.length;
          totals.policyLoss += ppo.loss;
          totals.clip += ppo.clipFraction * unitsHere;
          totals.iw += ppo.meanImportanceWeight * unitsHere;
          totals.capped += ppo.cappedFraction * unitsHere;
          totals.units += unitsHere;
          if (klCoef > 0) {
            micro.forEach((a, b) => {
              const kl = KL_ESTIMATORS[actor.klEstimator]({ logprobs_K: logprobs[b]!, refLogprobs_K: a.ref_K!, weights_K: new Float64Array(a.length).fill(tokenWeight), coef: klCoef });
              totals.kl += kl.kl;
              for (let k = 0; k < a.length; k++) dLogprobs[b]![k]! += kl.dLogprobs_K[k]!;
            });
          }
          await engine.backward(out.handle!, { dLogprobs });
        }
        const { gradNorm } = await engine.optimStep({ kind: 'adapter', name: policy }, {
          lr, beta1: actor.optim.beta1, beta2: actor.optim.beta2, eps: actor.optim.eps, weightDecay: actor.optim.weightDecay, maxGradNorm: actor.optim.maxGradNorm,
        });
        totals.gradNorm = Math.max(totals.gradNorm, gradNorm);
        totals.steps++;
      }
    }
  }
  const per = Math.max(1, totals.steps);
  const units = Math.max(1, totals.units);
  return {
    policyLoss: totals.policyLoss / per, kl: totals.kl / per, clipFraction: totals.clip / units, importanceWeight: totals.iw / units,
    cappedFraction: totals.capped / units, gradNorm: totals.gradNorm, units: totals.units / Math.max(1, passes_P.length),
  };
}
