// The ground truth a critic's values are measured against: each unit's Monte Carlo return, the
// discounted sum of the rewards that actually followed it along its credit chain, with the same
// discounts as the plan's GAE (γ across steps, γ_agent across an agent boundary, γ_w inside an action
// at the token level). It is GAE with λ = 1 on zero values: with λ = 1 the advantage telescopes to
//   G_u − V_u,  G_u = r_u + γ_next·G_{u+1}  (0 after the chain's last unit)
// so its return V + A is G_u, whatever the values. The λ-returns GAE trains the critic on contain
// the critic's own values (at λ < 1), so explained variance against them measures agreement with
// itself; against G it measures how much of the actual returns' variance the critic explains.
import type { MarftConfig } from '../../config/schema.ts';
import type { Episode } from '../../workflow/trajectory.ts';
import type { AlgorithmPlan, TrainAction } from '../types.ts';
import { chainSteps, creditChains } from './chains.ts';
import { actionLevelGae } from './gae-action.ts';
import { tokenLevelGae } from './gae-token.ts';

/** G per unit of every action (1 at the action level, L at the token level), in the actions' order. */
export function monteCarloReturns(actions: TrainAction[], episodes: Episode[], plan: Pick<AlgorithmPlan, 'chain' | 'level'>, config: MarftConfig): Map<TrainAction, Float64Array> {
  const { gamma, gammaAgent, gammaToken } = config.advantage;
  const out = new Map<TrainAction, Float64Array>();
  for (const chain of creditChains(actions, plan)) {
    const { steps, dones_T } = chainSteps(chain, episodes);
    if (plan.level === 'action') {
      const { returns_TN } = actionLevelGae({ rewards_TN: steps.map((s) => s.map((a) => a.reward)), values_TN: steps.map((s) => s.map(() => 0)), dones_T, gamma, lambda: 1, gammaAgent });
      steps.forEach((s, t) => s.forEach((a, i) => out.set(a, Float64Array.of(returns_TN[t]![i]!))));
    } else {
      const { returns_TN } = tokenLevelGae({ actions_TN: steps.map((s) => s.map((a) => ({ values_K: new Float32Array(a.length), reward: a.reward }))), dones_T, gammaStep: gamma, gammaToken, gammaAgent, lambda: 1 });
      steps.forEach((s, t) => s.forEach((a, i) => out.set(a, returns_TN[t]![i]!)));
    }
  }
  return out;
}
