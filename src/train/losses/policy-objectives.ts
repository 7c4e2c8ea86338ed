// Policy objectives by name: an algorithm plan names one (src/algorithms/types.ts, `policyLoss`).
// Each takes the units of one micro-batch (action or token log-probs under the policy being
// trained, the proximal and behaviour log-probs, advantages, aggregation weights) and returns the
// loss, its gradient with respect to the log-probs, and the statistics the metrics report.
import type { PolicyObjective } from '../types.ts';
import { importanceWeightedPgLoss } from './importance-weighted-pg.ts';
import { policyGradientLoss } from './policy-gradient.ts';
import { ppoClipLoss } from './ppo-clip.ts';

export type { PolicyObjective, PolicyObjectiveInput, PolicyObjectiveOutput } from '../types.ts';

export const POLICY_LOSSES = {
  'ppo-clip': {
    summary: 'PPO-clip against the proximal policy, decoupled behaviour weights when actor.decoupled (App. B), the dual clip when the plan sets one (AT-GRPO)',
    // The decoupled weight min(π_prox/μ, cap) is the sampler-mismatch correction; src/train/loop.ts
    // refuses a separate sampler with actor.decoupled or actor.recomputeLogprobs off.
    needsProximal: (_samplerSeparate: boolean) => true,
    loss: ({ logprobs_N, proximalLogprobs_N, behaviourLogprobs_N, advantages_N, weights_N, actor, dualClip }) =>
      ppoClipLoss({
        logprobs_N, proximalLogprobs_N, advantages_N, weights_N, clipLow: actor.clipLow, clipHigh: actor.clipHigh,
        behaviourLogprobs_N: actor.decoupled && actor.recomputeLogprobs ? behaviourLogprobs_N : undefined, behaviourCap: actor.behaviourCap,
        ...(dualClip !== undefined ? { dualClip } : {}),
      }),
  },
  'policy-gradient': {
    summary: 'REINFORCE: −A·log π (no ratio, no clipping); with a separate sampler each unit weighted by min(π_old/μ, actor.behaviourCap)',
    // The trainer's old log-probs are the numerator of the sampler-mismatch weight.
    needsProximal: (samplerSeparate: boolean) => samplerSeparate,
    loss: ({ logprobs_N, proximalLogprobs_N, behaviourLogprobs_N, advantages_N, weights_N, actor, samplerSeparate }) => ({
      ...policyGradientLoss({
        logprobs_N, advantages_N, weights_N,
        ...(samplerSeparate ? { mismatch: { oldLogprobs_N: proximalLogprobs_N, behaviourLogprobs_N, cap: actor.behaviourCap } } : {}),
      }),
      clipFraction: 0,
    }),
  },
  'importance-weighted-pg': {
    summary: 'REINFORCE weighted by the truncated ratio min(π/μ, actor.behaviourCap) to the sampler (1 on the on-policy first pass)',
    // Its ratio is taken to the sampler already, whichever engine sampled.
    needsProximal: (_samplerSeparate: boolean) => false,
    loss: ({ logprobs_N, behaviourLogprobs_N, advantages_N, weights_N, actor, onPolicy }) => ({
      ...importanceWeightedPgLoss({ logprobs_N, behaviourLogprobs_N, advantages_N, weights_N, cap: actor.behaviourCap, onPolicy }),
      clipFraction: 0,
    }),
  },
} satisfies Record<string, PolicyObjective>;

export type PolicyLossName = keyof typeof POLICY_LOSSES;

/** The objective a plan names. */
export function objectiveOf(name: string): PolicyObjective {
  const objective = (POLICY_LOSSES as Record<string, PolicyObjective>)[name];
  if (!objective) throw new Error(`unknown policy objective '${name}' (known: ${Object.keys(POLICY_LOSSES).join(', ')})`);
  return objective;
}
