// Plan checks and refusals: whether an algorithm's plan fits the task and the configuration, said
// in one line before anything is written into a run folder. planFor is how every command turns a
// configuration into the plan the loop (src/train/loop.ts) runs.
import { ConfigError } from '../config/schema-dsl.ts';
import type { MarftConfig } from '../config/schema.ts';
import { estimatorName, estimatorOf } from '../train/credit/index.ts';
import { objectiveOf } from '../train/losses/policy-objectives.ts';
import type { Task } from '../train/task.ts';
import type { AlgorithmPlan } from '../train/types.ts';
import { distillationOf } from '../opd/distillable-task.ts';
import { ALGORITHM_REGISTRY } from './index.ts';

export function planFor(config: MarftConfig, task: Task): AlgorithmPlan {
  const plan = ALGORITHM_REGISTRY[config.algorithm].plan(task.agents, config, task);
  checkPlan(plan, config.algorithm);
  if (plan.sampling === 'tree' && task.treeSampling !== true) {
    throw new ConfigError(`algorithm: ${config.algorithm} samples trees (K candidate actions per agent per turn from copies of the episode state), which this task does not offer (the workflow task does)`);
  }
  if (plan.rewards && !(task.rewardSchemes ?? []).includes(plan.rewards)) {
    throw new ConfigError(`algorithm: ${config.algorithm} needs the task to compute ${plan.rewards} rewards, which this task does not offer (the workflow task does with workflow: coder-tester on a code dataset)`);
  }
  // CURE's Coder and Tester act once, from the problem alone: refused here rather than after a whole rollout.
  const horizon = distillationOf(task)?.workflow.horizon;
  if (plan.rewards === 'cure' && horizon !== undefined && horizon !== 1) {
    throw new ConfigError(`task.options.horizon: algorithm ${config.algorithm} has the Coder and the Tester act once, from the problem alone; set task.options.horizon: 1 (got ${horizon})`);
  }
  if (plan.sampling === 'tree' && config.rollout.rolloutsPerPrompt < 2) {
    throw new ConfigError(`rollout.rolloutsPerPrompt: ${config.algorithm} draws that many candidate actions per agent per turn and compares them with each other; it needs at least 2, got ${config.rollout.rolloutsPerPrompt}`);
  }
  // Refused before any engine starts: a task-built teacher (arith-pair) takes minutes to pretrain.
  if (config.algorithm === 'mas-opd' && config.rollout.rolloutsPerPrompt !== 1) {
    throw new ConfigError(`rollout.rolloutsPerPrompt: mas-opd samples one episode per problem (rollout.batchSize problems per step), got ${config.rollout.rolloutsPerPrompt}`);
  }
  if (plan.sampling === 'group' && config.rollout.rolloutsPerPrompt < 2) {
    throw new ConfigError(`rollout.rolloutsPerPrompt: ${config.algorithm} compares the episodes of one problem with each other and needs at least 2 per problem (GRPO's G; the MAS-OPD runs use 4), got ${config.rollout.rolloutsPerPrompt}`);
  }
  if (config.advantage.jointActions === 'cross' && config.algorithm !== 'magrpo') {
    throw new ConfigError(`advantage.jointActions: cross applies to magrpo only (its joint samples); ${config.algorithm} takes aligned`);
  }
  if (config.advantage.jointActions === 'cross' && !task.jointRewards) {
    throw new ConfigError('advantage.jointActions: cross needs a task that scores any combination of its agents\' actions (Task.jointRewards: e.g. coordination-game with dependency: false); this task offers none, use aligned');
  }
  if (config.reward.share === 'split' && plan.reward !== 'broadcast') {
    throw new ConfigError(`reward.share: split divides a turn's team reward among its actions where every action receives one (ippo, grpo, at-grpo); ${config.algorithm} ${plan.reward === 'step-end' ? 'takes it once, at the turn\'s last action' : plan.reward === 'outcome' ? 'places the episode\'s outcome once, at its last action' : 'places no team reward'}: use broadcast`);
  }
  const mismatch = samplerMismatchRefusal(config, plan);
  if (mismatch) throw new ConfigError(mismatch);
  if (config.advantage.baseline === 'exact') {
    if (!task.exactValues) throw new ConfigError(`advantage.baseline: exact needs a task that can value its states exactly (Task.exactValues: relay-game); task '${config.task.name}' cannot, use critic or batch-mean`);
    if (plan.critics === null || plan.level !== 'action') throw new ConfigError(`advantage.baseline: exact replaces the critic's values at the action level; ${config.algorithm} ${plan.critics === null ? 'has no critic' : 'credits tokens'}`);
    const { temperature, topP, topK } = config.rollout;
    if (!(temperature > 0) || topP < 1 || topK > 0) throw new ConfigError(`advantage.baseline: exact enumerates the policies' full sampling distribution: it needs rollout.temperature > 0, rollout.topP 1 and rollout.topK 0 (got ${temperature}, ${topP}, ${topK})`);
  }
  if (config.actor.agentByAgent && new Set(Object.values(plan.policies)).size < task.agents.length) {
    throw new ConfigError('actor.agentByAgent: cannot be combined with policy.parameterSharing (one shared adapter has no agents to take turns; set parameterSharing: false)');
  }
  return plan;
}

/**
 * A separate sampler (sampler.engine: vllm) is corrected by min(π_old/μ, actor.behaviourCap), with
 * π_old the trainer's recomputed log-probs: PPO-clip's decoupled weight, policy-gradient's factor.
 * Without recomputed log-probs there is no π_old (the old log-probs would be the sampler's own), and
 * PPO-clip without decoupling would have to apply exactly the decoupled weight, making the key a
 * no-op; both are refused rather than run uncorrected (docs/algorithms.md, "Sampler mismatch").
 */
export function samplerMismatchRefusal(config: MarftConfig, plan: AlgorithmPlan): string | null {
  if (config.sampler.engine === 'trainer') return null;
  const reads = plan.policyLoss === 'ppo-clip' || plan.policyLoss === 'policy-gradient';
  if (reads && !config.actor.recomputeLogprobs) {
    return `actor.recomputeLogprobs: false with sampler.engine: vllm leaves the sampler/trainer mismatch of ${config.algorithm} uncorrected (the old log-probs would be vLLM's own); set actor.recomputeLogprobs: true or sampler.engine: trainer`;
  }
  if (plan.policyLoss === 'ppo-clip' && !config.actor.decoupled) {
    return `actor.decoupled: false with sampler.engine: vllm leaves the sampler/trainer mismatch of ${config.algorithm} uncorrected (the decoupled weight min(π_prox/μ, actor.behaviourCap) is its correction); set actor.decoupled: true or sampler.engine: trainer`;
  }
  return null;
}

/** An algorithm file's plan must fit its estimator: a critic exactly when it reads values, groups when it compares within them, a level it fills. */
export function checkPlan(plan: AlgorithmPlan, name: string): void {
  const estimator = estimatorOf(plan.advantage);
  if (estimator.needsCritic !== (plan.critics !== null)) throw new Error(`algorithm '${name}': estimator '${estimatorName(plan.advantage)}' ${estimator.needsCritic ? 'needs' : 'reads no'} critic, but the plan ${plan.critics ? 'creates one' : 'has none'}`);
  if (estimator.needsGroups && plan.sampling === 'independent') throw new Error(`algorithm '${name}': estimator '${estimatorName(plan.advantage)}' compares episode groups, but the plan samples independent episodes`);
  if (!estimator.levels.includes(plan.level)) throw new Error(`algorithm '${name}': estimator '${estimatorName(plan.advantage)}' does not fill ${plan.level}-level units`);
  objectiveOf(plan.policyLoss);
  if ((plan.aggregation ?? 'unit-mean') !== 'unit-mean' && plan.level !== 'token') throw new Error(`algorithm '${name}': aggregation ${plan.aggregation} averages over tokens, but the plan's units are ${plan.level}s`);
  // The loop finds flat groups by the role-turn key (src/train/loop.ts); a plan grouping otherwise would drop the wrong ones.
}
