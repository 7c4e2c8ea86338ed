// The MARFT training loop (spec section 4). One step:
//   1. rollouts of the current policies (seed derived from (run seed, step) only)
//   2. flatten episodes into agent actions; credited rewards (outcome variant: at the end), whitened
//   3. old values from the critic(s); GAE (joint or per-agent, action or token level); whitened advantages
//   4. after the critic warm-up: frozen-reference log-probs, then the PPO update of the active
//      agents' adapters (all agents, or one per interval when updating agent by agent)
//   5. the critic update; metrics to RUN/metrics.jsonl; a checkpoint every `checkpointEvery` steps.
// A run directory with a checkpoint resumes from it, continuing exactly as if never interrupted.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine, ValueHeadSpec } from '../engine/types.ts';
import { ALGORITHM_REGISTRY, type AlgorithmPlan } from '../algorithms/index.ts';
import type { MarftConfig } from '../config/schema.ts';
import { actorUpdate, type ActorStats } from './actor-update.ts';
import { moments, explainedVariance } from './batch-normalisation.ts';
import { latestCheckpoint, loadCheckpoint, saveCheckpoint } from './checkpoint.ts';
import { criticUpdate } from './critic-update.ts';
import { evaluatePolicies } from './evaluate.ts';
import { MetricsLog, ProgressBar, type StepMetrics } from './metrics.ts';
import { deriveSeed } from './rng.ts';
import { learningRate } from './schedules.ts';
import { fillValues, scoreActions } from './scoring.ts';
import type { Task } from './task.ts';
import { assignCredit, flattenEpisodes, normaliseAdvantages, normaliseRewards } from './train-batch.ts';

export interface TrainOptions {
  config: MarftConfig;
  engine: Engine;
  task: Task;
  /** metrics.jsonl and checkpoints/ go here; a checkpoint found here is resumed. */
  runDir: string;
  /** Progress bar on stderr (default: when stderr is a terminal). */
  progress?: boolean;
  /** Stop (after checkpointing) once this many steps are complete, as if the run were interrupted there; default: train.steps. */
  stopAtStep?: number;
  /** Called after every step with its metrics line. */
  onStep?: (metrics: StepMetrics) => void | Promise<void>;
}

export interface TrainResult {
  plan: AlgorithmPlan;
  /** Every metrics line of the run, resumed steps included. */
  metrics: StepMetrics[];
  /** The step the run resumed from (null for a fresh run). */
  resumedFrom: number | null;
  /** Folder of the final checkpoint. */
  checkpoint: string;
}

export function planFor(config: MarftConfig, task: Task): AlgorithmPlan {
  return ALGORITHM_REGISTRY[config.algorithm].plan(task.agents, config);
}

function criticSpec(config: MarftConfig): ValueHeadSpec {
  return config.critic.kind === 'mlp'
    ? { kind: 'mlp', hidden: config.critic.mlpHidden }
    : { kind: 'lora-critic', lora: { rank: config.critic.loraRank, alpha: config.critic.loraAlpha, targetModules: config.policy.targetModules } };
}

/** Creates the plan's adapters and critics with seeds derived from the run seed. */
export async function createTrainables(engine: Engine, config: MarftConfig, plan: AlgorithmPlan): Promise<void> {
  const lora = { rank: config.policy.loraRank, alpha: config.policy.loraAlpha, targetModules: config.policy.targetModules };
  const adapters = [...new Set(Object.values(plan.policies))];
  const critics = [...new Set(Object.values(plan.critics))];
  for (const [i, name] of adapters.entries()) await engine.createAdapter(name, lora, deriveSeed(config.seed, 1, i));
  for (const [i, name] of critics.entries()) await engine.createCritic(name, criticSpec(config), deriveSeed(config.seed, 2, i));
}

/** The agent whose actions train at step s when updating agent by agent (null: all agents). */
export function activeAgent(config: MarftConfig, agents: readonly string[], step: number): string | null {
  if (!config.actor.agentByAgent) return null;
  const actorStep = step - config.critic.warmupSteps;
  return agents[Math.floor(actorStep / config.actor.agentInterval) % agents.length]!;
}

const mean = (xs: number[]): number => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);

async function trainStep(engine: Engine, task: Task, config: MarftConfig, plan: AlgorithmPlan, step: number): Promise<StepMetrics> {
  const started = performance.now();
  const { rollout, train, critic } = config;
  const seed = deriveSeed(config.seed, step);
  const episodes = await task.rollout(engine, {
    step, seed, batchSize: rollout.batchSize, rolloutsPerPrompt: rollout.rolloutsPerPrompt,
    sampling: { temperature: rollout.temperature, topP: rollout.topP, topK: rollout.topK, maxNewTokens: rollout.maxNewTokens },
    policies: plan.policies,
  });
  const rolloutSeconds = (performance.now() - started) / 1000;

  const actions = flattenEpisodes(episodes, plan, config);
  const m: StepMetrics = { step };
  m.score_mean = mean(episodes.map((e) => e.score));
  for (const agent of task.agents) m[`reward/${agent}`] = mean(actions.filter((a) => a.agent === agent).map((a) => a.rawReward));
  m.response_length_mean = mean(actions.map((a) => a.length));

  if (config.advantage.normaliseRewards) normaliseRewards(actions);
  await fillValues(engine, actions, plan.level, train.microBatchTokens);
  assignCredit(actions, episodes, plan, config);

  const values = actions.flatMap((a) => (plan.level === 'action' ? [a.values_K[0]!] : Array.from(a.values_K)));
  const returns = actions.flatMap((a) => Array.from(a.returns_K));
  const advantages = actions.flatMap((a) => Array.from(a.advantages_K));
  const adv = moments(advantages);
  const ret = moments(returns);
  Object.assign(m, {
    advantage_mean: adv.mean, advantage_std: adv.std, return_mean: ret.mean, return_std: ret.std, value_mean: mean(values),
    explained_variance: Number.isNaN(explainedVariance(values, returns)) ? null : explainedVariance(values, returns),
  });
  if (config.advantage.normaliseAdvantages) normaliseAdvantages(actions);

  const actorLr = learningRate(config.actor.optim, Math.max(0, step - critic.warmupSteps), Math.max(1, train.steps - critic.warmupSteps));
  const criticLr = learningRate(critic.optim, step, train.steps);
  m.lr_actor = step >= critic.warmupSteps ? actorLr : 0;
  m.lr_critic = criticLr;

  let actorStats: ActorStats | null = null;
  if (step >= critic.warmupSteps) {
    const active = activeAgent(config, task.agents, step);
    if (active) m.active_agent = active;
    const updated = actions.filter((a) => a.policy !== null && (!active || a.agent === active));
    if (config.actor.klCoef > 0) {
      await scoreActions(engine, { kind: 'base' }, updated, (a) => ({ tokens: a.tokens, scoreFrom: a.scoreFrom }), train.microBatchTokens, rollout.temperature > 0 ? rollout.temperature : 1, (a, lp) => (a.ref_K = lp));
    }
    actorStats = await actorUpdate(engine, updated, plan.level, config, actorLr, deriveSeed(seed, 3));
  }
  const criticStats = await criticUpdate(engine, actions, plan.level, config, criticLr);

  Object.assign(m, {
    policy_loss: actorStats?.policyLoss ?? null, kl: actorStats?.kl ?? null, clip_fraction: actorStats?.clipFraction ?? null,
    importance_weight_mean: actorStats?.importanceWeight ?? null, importance_capped_fraction: actorStats?.cappedFraction ?? null,
    grad_norm_actor: actorStats?.gradNorm ?? null,
    value_loss: criticStats.valueLoss, value_clip_fraction: criticStats.valueClipFraction, grad_norm_critic: criticStats.gradNorm,
  });
  const seconds = (performance.now() - started) / 1000;
  const generated = actions.reduce((s, a) => s + a.length, 0);
  Object.assign(m, { tokens_generated: generated, tokens_per_s: generated / Math.max(1e-9, rolloutSeconds), rollout_time_s: rolloutSeconds, step_time_s: seconds });
  return m;
}

export async function train(options: TrainOptions): Promise<TrainResult> {
  const { config, engine, task, runDir } = options;
  const plan = planFor(config, task);
  await mkdir(runDir, { recursive: true });
  const log = new MetricsLog(join(runDir, 'metrics.jsonl'));
  const adapters = [...new Set(Object.values(plan.policies))];
  const critics = [...new Set(Object.values(plan.critics))];

  let start = 0;
  let resumedFrom: number | null = null;
  const ckpt = await latestCheckpoint(runDir);
  if (ckpt) {
    const state = await loadCheckpoint(engine, ckpt, { optimiser: true });
    start = resumedFrom = state.step;
    await log.truncate(state.metricsLines);
  } else {
    await createTrainables(engine, config, plan);
    await log.truncate(0);
  }

  const bar = new ProgressBar(config.train.steps, options.progress);
  let checkpoint = ckpt ?? '';
  const stop = Math.min(config.train.steps, options.stopAtStep ?? config.train.steps);
  for (let step = start; step < stop; step++) {
    const m = await trainStep(engine, task, config, plan, step);
    if (config.train.evalEvery > 0 && (step + 1) % config.train.evalEvery === 0) m.eval_score = (await evaluatePolicies(engine, task, config, plan.policies)).score;
    await log.append(m);
    await options.onStep?.(m);
    bar.update(step + 1, `score ${Number(m.score_mean).toFixed(3)} vloss ${Number(m.value_loss).toFixed(4)}`);
    if ((step + 1) % config.train.checkpointEvery === 0 || step + 1 === stop) {
      checkpoint = await saveCheckpoint(engine, runDir, { step: step + 1, metricsLines: step + 1, seed: config.seed, adapters, critics }, config.train.keepCheckpoints);
    }
  }
  bar.end();
  return { plan, metrics: await log.read(), resumedFrom, checkpoint };
}
