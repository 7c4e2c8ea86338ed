// The training batch: every agent action of a step's episodes, flattened, with what the updates
// need (scored sequence, behaviour log-probs, the reward placed on it, old values, advantages,
// returns). The one place rewards are weighted and placed (flattenEpisodes, with ./rewards.ts) and
// scaled (scaleRewards): the rollout records raw rewards only.
// Credit assignment per algorithm plan: joint MARFT chains or per-agent IPPO chains, at the action
// or the token level (src/train/credit/gae-action.ts, src/train/credit/gae-token.ts).
import type { MarftConfig } from '../config/schema.ts';
import type { ActionRecord, Episode } from '../workflow/trajectory.ts';
import type { Task } from './task.ts';
import type { AdvantageEstimator, AlgorithmPlan, TrainAction } from './types.ts';
import type { SamplingEngine } from '../engine/types.ts';
import { actionScale } from './losses/action-normalisation.ts';
import { normaliseBatch } from '../core/statistics.ts';
import { creditChains } from './credit/chains.ts';
import { estimatorOf } from './credit/index.ts';
import { rewardScale, updateMoments, type RunningMoments } from '../core/running-moments.ts';
import { learnerReward, rawLocal } from './rewards.ts';

/**
 * Flattens episodes in execution order; actions without tokens carry no gradient and are dropped.
 * Actions of agents outside the plan (frozen agents) stay in a joint credit chain, valued by the
 * centralised critic, but are never trained on; per-agent chains (IPPO) leave them out. A plan
 * without a critic keeps every action (critic null).
 *
 * Rewards are placed here, once, from the rollout's raw records and the run's reward settings
 * (./rewards.ts: T = the turn's team reward, the episode's outcome or the turn's own; α =
 * reward.teamWeight, w = reward.localWeight), as the plan's `reward` says:
 *   broadcast  every action: α·share(T) + w·local (share: T, or T split over the turn's actions)
 *   step-end   every action: w·local; the turn's last kept action also α·T, once (so a turn whose
 *              last agent produced nothing still delivers its team reward)
 *   outcome    the episode's last kept action: α·outcome; every other action 0
 *   local      every action: its own local reward alone, unweighted (a scheme's rewards: CURE's)
 *   none       0
 * A tree's action (with `joint`) takes its copy's own turn as T and as its turn.
 */
export function flattenEpisodes(episodes: Episode[], plan: AlgorithmPlan, config: MarftConfig): TrainAction[] {
  const out: TrainAction[] = [];
  const critics = plan.critics;
  const settings = config.reward;
  const sharedCritic = critics && plan.chain === 'joint' ? Object.values(critics)[0] : undefined;
  episodes.forEach((ep, e) => {
    const kept: TrainAction[] = [];
    // Tree sampling trains on every candidate (each with its own reward), not only the executed path.
    // MAGRPO's tree of joint samples trains on every joint sample of the tree; a task may answer a
    // one-turn request with independent episodes (no candidates).
    if (plan.sampling === 'tree' && !ep.candidates) throw new Error(`episode ${e} (problem '${ep.problemId}') has no candidates: the task did not sample a tree`);
    const jointTree = plan.jointTree !== undefined && ep.candidates !== undefined;
    const records = plan.sampling === 'tree' || jointTree ? ep.candidates! : ep.actions;
    // The turn an action belongs to: its joint sample in a tree (one turn of one copy), else its step.
    const turnOf = (a: ActionRecord): string => (a.joint ? `${a.joint.node}/${a.joint.sample}/${a.step}` : `${a.step}`);
    const turnSize = new Map<string, number>();
    for (const a of records) turnSize.set(turnOf(a), (turnSize.get(turnOf(a)) ?? 0) + 1);
    const teamOf = (a: ActionRecord): number => {
      if (a.joint) return a.joint.teamReward;
      if (settings.team === 'outcome') return ep.outcome;
      return ep.steps.find((s) => s.t === a.step)?.teamReward ?? 0;
    };
    for (const a of records) {
      if (a.actionTokens.length === 0) continue;
      const critic = critics ? (critics[a.agent] ?? sharedCritic) : null;
      if (critics && !critic) continue;
      const learner = plan.reward === 'local' ? rawLocal(a) : learnerReward(settings, teamOf(a), turnSize.get(turnOf(a))!, a);
      const placed = plan.reward === 'broadcast' || plan.reward === 'local' ? learner : plan.reward === 'step-end' ? settings.localWeight * rawLocal(a) : 0;
      kept.push({
        record: a, episode: e, t: a.step, role: plan.roles?.[a.agent] ?? a.agent, agentIndex: a.agentIndex, agent: a.agent, policy: plan.policies[a.agent] ?? null, critic: critic ?? null, group: ep.group ?? null, joint: a.joint ?? null,
        tokens: [...a.promptTokens, ...a.actionTokens], scoreFrom: a.promptTokens.length, length: a.actionTokens.length, text: a.text,
        criticTokens: plan.criticInput === 'joint' ? (a.criticTokens ?? a.promptTokens) : a.promptTokens,
        behaviourLogprobs_K: Float32Array.from(a.behaviourLogprobs), learnerReward: learner, reward: placed,
        scale: actionScale(config.actor.actionNormalisation, a.actionTokens.length, a.text),
        values_K: new Float32Array(0), advantages_K: new Float64Array(0), returns_K: new Float64Array(0),
      });
    }
    if (plan.reward === 'outcome' && kept.length > 0) kept[kept.length - 1]!.reward = settings.teamWeight * ep.outcome;
    if (plan.reward === 'step-end') {
      for (const [i, a] of kept.entries()) {
        if (i + 1 < kept.length && turnOf(kept[i + 1]!.record) === turnOf(a.record)) continue;
        a.reward += settings.teamWeight * teamOf(a.record);
      }
    }
    out.push(...kept);
  });
  return out;
}

/**
 * Scales the credited rewards by the running deviation of the chains' returns (src/core/running-moments.ts)
 * after adding this batch's returns to the moments; returns the updated moments and the factor.
 */
export function scaleRewards(actions: TrainAction[], plan: AlgorithmPlan, moments: RunningMoments): { moments: RunningMoments; scale: number } {
  const returns = creditChains(actions, plan).map((chain) => chain.reduce((s, a) => s + a.reward, 0));
  const updated = updateMoments(moments, returns);
  const scale = rewardScale(updated);
  for (const a of actions) a.reward *= scale;
  return { moments: updated, scale };
}

/**
 * Fills advantages_K and returns_K with the plan's estimator (src/train/credit/index.ts); an
 * asynchronous estimator (one that scores with the teacher) returns a promise of its metrics.
 */
export function assignCredit(actions: TrainAction[], episodes: Episode[], plan: AlgorithmPlan, config: MarftConfig, task?: Pick<Task, 'jointRewards'>, teacher?: SamplingEngine): ReturnType<AdvantageEstimator['assign']> {
  return estimatorOf(plan.advantage).assign(actions, { episodes, plan, config, ...(task ? { task } : {}), ...(teacher ? { teacher } : {}) });
}

/**
 * Whitens the advantages over every unit of the given actions (App. B): the trainer passes the units
 * being updated. by 'position': each agent position's units apart (advantage.whitenBy).
 */
export function normaliseAdvantages(actions: TrainAction[], by: 'batch' | 'position' = 'batch'): void {
  if (by === 'position') {
    for (const pos of new Set(actions.map((a) => a.agentIndex))) normaliseAdvantages(actions.filter((a) => a.agentIndex === pos));
    return;
  }
  const flat: number[] = [];
  for (const a of actions) for (const x of a.advantages_K) flat.push(x);
  const z = normaliseBatch(flat);
  let i = 0;
  for (const a of actions) for (let k = 0; k < a.advantages_K.length; k++) a.advantages_K[k] = z[i++]!;
}
export type { TrainAction } from './types.ts';
