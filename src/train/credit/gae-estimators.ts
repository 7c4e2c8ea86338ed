// MARFT's estimators: generalised advantage estimation over credit chains (joint: across agents,
// then environment steps; per-agent: IPPO), from the critic's old values, at the action level
// (../gae-action.ts) or the token level (../gae-token.ts).
import { chainSteps, creditChains } from './chains.ts';
import { actionLevelGae } from './gae-action.ts';
import { tokenLevelGae } from './gae-token.ts';
import type { AdvantageEstimator } from './estimator.ts';

export const gaeAction: AdvantageEstimator = {
  summary: 'action-level GAE over the credit chains (every agent action is one timestep)',
  needsCritic: true,
  needsGroups: false,
  levels: ['action'],
  assign(actions, { episodes, plan, config }) {
    const { gamma, lambda, gammaAgent } = config.advantage;
    for (const chain of creditChains(actions, plan)) {
      const { steps, dones_T } = chainSteps(chain, episodes);
      // Per-agent chains have one action per step: the agent-boundary discount never applies.
      const { advantages_TN, returns_TN } = actionLevelGae({
        rewards_TN: steps.map((s) => s.map((a) => a.reward)),
        values_TN: steps.map((s) => s.map((a) => a.values_K[0]!)),
        dones_T, gamma, lambda, gammaAgent,
      });
      steps.forEach((s, t) => s.forEach((a, i) => {
        a.advantages_K = Float64Array.of(advantages_TN[t]![i]!);
        a.returns_K = Float64Array.of(returns_TN[t]![i]!);
      }));
    }
  },
};

export const gaeToken: AdvantageEstimator = {
  summary: 'token-level GAE over the credit chains (γ_w inside an action, γ_a between steps)',
  needsCritic: true,
  needsGroups: false,
  levels: ['token'],
  assign(actions, { episodes, plan, config }) {
    const { gamma, lambda, gammaAgent, gammaToken } = config.advantage;
    for (const chain of creditChains(actions, plan)) {
      const { steps, dones_T } = chainSteps(chain, episodes);
      const { advantages_TN, returns_TN } = tokenLevelGae({
        actions_TN: steps.map((s) => s.map((a) => ({ values_K: a.values_K, reward: a.reward }))),
        dones_T, gammaStep: gamma, gammaToken, gammaAgent, lambda,
      });
      steps.forEach((s, t) => s.forEach((a, i) => {
        a.advantages_K = advantages_TN[t]![i]!;
        a.returns_K = returns_TN[t]![i]!;
      }));
    }
  },
};
