// The training loop: every algorithm plan (src/train/types.ts) through one pipeline. One step:
//   1. rollout: the current policies on the step's problems (seed derived from (run seed, step)
//      only), by Task.rollout or the plan's own rollout hook (MAS-OPD's, which keeps what its teacher
//      contexts need)
//   2. records: episodes flattened into the batch's TrainActions (./batch.ts); rewards placed per the
//      plan (joint chains: the team reward once per step, at its last action), scaled by the run's
//      running return deviation when the plan says so
//   3. credit: with a critic, old values from the critic(s) (the centralised critic reads the joint
//      state); the plan's advantage estimator (GAE for MARFT and IPPO, group-relative for GRPO,
//      return-to-go minus the group mean for MAGRPO, the teacher's per-token gaps for MAS-OPD);
//      advantages whitened over the units being updated when the plan says so
//   4. losses and update: after the critic warm-up, frozen-reference log-probs (when the plan keeps
//      the KL term), then the plan's policy objective on the active agents' adapters (all agents, or
//      one per interval when updating agent by agent), minibatch by minibatch as the plan splits them
//   5. with a critic, the critic update (epochs × minibatches); metrics to RUN/metrics.jsonl
//      (explained variance overall and per agent position); a checkpoint every `checkpointEvery` steps.
// The loop knows no algorithm by name: src/algorithms/check.ts's planFor builds the plan it runs.
// A run directory with a checkpoint resumes from it, continuing exactly as if never interrupted; the
// run-folder guarantees (lock, resume, guards, checkpoints) are src/runs/'s.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine, SamplingEngine, ValueHeadSpec } from '../engine/types.ts';
import type { ActionRecord, Episode } from '../workflow/trajectory.ts';
import type { MarftConfig } from '../config/schema.ts';
import { deriveSeed } from '../core/rng.ts';
import { stderrNotice, type Notice } from '../core/notice.ts';
import { moments, explainedVariance } from '../core/statistics.ts';
import { saveCheckpoint } from '../runs/checkpoint.ts';
import { MetricsLog, type StepMetrics } from '../runs/metrics-log.ts';
import { openTrackers } from '../runs/trackers/index.ts';
import { writeStepSamples, type SampleRecord } from '../runs/samples.ts';
import { sampleRecords } from './samples.ts';
import { readEvaluations, writeEvaluations, type EvaluationRecord, type RecordedEvaluation } from '../runs/evaluation-record.ts';
import { cleanRunFolder, resumeRun } from '../runs/resume.ts';
import { acquireRunLock, LOCK_FILE, type RunLock } from '../runs/run-lock.ts';
import { finiteCheckpoint, guardedStep, stepDivergence } from '../runs/step-guard.ts';
import { RunStopped } from '../runs/stop-signal.ts';
import { INITIAL_TRAINER_STATE, type TrainerState } from '../runs/trainer-state.ts';
import { assignCredit, flattenEpisodes, normaliseAdvantages, scaleRewards } from './batch.ts';
import { flatGroups } from './credit/flat-groups.ts';
import { monteCarloReturns } from './credit/monte-carlo-returns.ts';
import { groupKeyOf } from './credit/group-relative.ts';
import { evaluatePolicies } from './evaluate.ts';
import { fillValues, forwardActions } from './forward-passes.ts';
import { turnScore } from './rewards.ts';
import { learningRate } from './schedules.ts';
import type { RolloutRequest, Task } from './task.ts';
import type { AlgorithmPlan, RunContext, TrainAction } from './types.ts';
import { actorUpdate, updatePasses, type ActorStats } from './update/actor-update.ts';
import { criticUpdate } from './update/critic-update.ts';

export interface TrainOptions {
  config: MarftConfig;
  engine: Engine;
  task: Task;
  /** metrics.jsonl and checkpoints/ go here; a checkpoint found here is resumed. */
  runDir: string;
  /**
   * The console tracker of log.to (src/runs/trackers/console.ts): false silences it, true draws the
   * bar; default: the bar on a terminal, plain lines (log.every, log.everySeconds) elsewhere.
   */
  progress?: boolean;
  /** Stop (after checkpointing) once this many steps are complete, as if the run were interrupted there; default: train.steps. */
  stopAtStep?: number;
  /** Called after every step with its metrics line. */
  onStep?: (metrics: StepMetrics) => void | Promise<void>;
  /**
   * Resume with a configuration that differs from the checkpoint's: the change is applied and
   * recorded in RUN/config-changes.jsonl (keys that define the checkpoint are refused even so;
   * src/runs/config-change.ts). Default false: any difference is refused, naming the keys.
   */
  acceptConfigChange?: boolean;
  /**
   * Score the held-out problems before the first step and after the last (default true; RUN/evaluations.json).
   * false: a caller that evaluates the policies itself (the MAS-OPD study) skips them.
   */
  evaluateBeforeAfter?: boolean;
  /** Where notices go (a stale lock taken over, a damaged checkpoint skipped); default: one line each on stderr. */
  notice?: Notice;
  /**
   * The run folder's lock when the caller already holds it (acquireRunLock, taken before it writes
   * into the folder, e.g. config.json); train() then neither takes nor releases it.
   */
  lock?: RunLock;
  /**
   * A request to stop (src/runs/stop-signal.ts), checked at each step boundary: the step in flight is
   * finished and checkpointed, then train() throws RunStopped.
   */
  stop?: AbortSignal;
  /** The frozen teacher of algorithm mas-opd (src/run/teacher.ts opens it from teacher.*); it only scores. */
  teacher?: SamplingEngine;
}

export interface TrainResult {
  plan: AlgorithmPlan;
  /** Every metrics line of the run, resumed steps included. */
  metrics: StepMetrics[];
  /** The step the run resumed from (null for a fresh run). */
  resumedFrom: number | null;
  /** Folder of the final checkpoint. */
  checkpoint: string;
  /** Held-out score of the policies before the first step (RUN/evaluations.json; null when the run's record lacks it). */
  evalBefore: RecordedEvaluation | null;
  /** Held-out score after the last step (null when the run stopped before train.steps). */
  evalAfter: RecordedEvaluation | null;
}

function criticSpec(config: MarftConfig): ValueHeadSpec {
  // Only a zero head says so: a critic folder written with the default reads as before.
  const init = config.critic.headInit === 'zero' ? { zeroLastLayer: true } : {};
  return config.critic.kind === 'mlp'
    ? { kind: 'mlp', hidden: config.critic.mlpHidden, ...init }
    : { kind: 'lora-critic', lora: { rank: config.critic.loraRank, alpha: config.critic.loraAlpha, targetModules: config.policy.targetModules }, ...init };
}

/** Creates the plan's adapters and critics with seeds derived from the run seed. */
export async function createTrainables(engine: Engine, config: MarftConfig, plan: Pick<AlgorithmPlan, 'policies' | 'critics'>): Promise<void> {
  const lora = { rank: config.policy.loraRank, alpha: config.policy.loraAlpha, targetModules: config.policy.targetModules };
  const adapters = [...new Set(Object.values(plan.policies))];
  const critics = [...new Set(Object.values(plan.critics ?? {}))];
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

/**
 * Old values, the estimator's returns (the critic's regression targets) and the Monte Carlo returns
 * (./credit/monte-carlo-returns.ts: what actually followed) per unit: one per action (action level) or
 * per token.
 */
function valueUnits(actions: TrainAction[], plan: AlgorithmPlan, actual?: Map<TrainAction, Float64Array>): { values: number[]; returns: number[]; actual: number[] } {
  return {
    values: actions.flatMap((a) => (plan.level === 'action' ? [a.values_K[0]!] : Array.from(a.values_K))),
    returns: actions.flatMap((a) => Array.from(a.returns_K)),
    actual: actual ? actions.flatMap((a) => Array.from(actual.get(a)!)) : [],
  };
}

const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** The critic ablation (advantage.baseline: batch-mean): every old value becomes the batch's mean value. */
function replaceValuesByMean(actions: TrainAction[]): void {
  let sum = 0;
  let count = 0;
  for (const a of actions) for (const v of a.values_K) (sum += v), count++;
  const m = count > 0 ? sum / count : 0;
  for (const a of actions) a.values_K = new Float32Array(a.values_K.length).fill(m);
}

/**
 * The task's exact value of each action's state (Task.exactValues), in the credit chain's units
 * (× α·reward scale: the chain's rewards are the team outcome scaled so); null when the task
 * cannot value them under this sampling.
 */
async function exactValuesOf(run: RunContext, episodes: Episode[], actions: TrainAction[], request: RolloutRequest, units: number): Promise<Map<TrainAction, number> | null> {
  const values = await run.task.exactValues!(run.engine, episodes, { policies: request.policies, sampling: request.sampling, view: run.plan.criticInput });
  if (!values) return null;
  const byRecord = new Map<ActionRecord, number>();
  episodes.forEach((ep, e) => ep.actions.forEach((r, i) => byRecord.set(r, values[e]![i]! * units)));
  const out = new Map<TrainAction, number>();
  for (const a of actions) {
    const v = byRecord.get(a.record);
    if (v === undefined) throw new Error(`task '${run.config.task.name}': exactValues gave no value for an action of episode ${a.episode}`);
    out.set(a, v);
  }
  return out;
}

/** The learned critic against the exact values, into the step's metrics: explained_variance_exact, overall and per agent position. */
function recordExactValueMetrics(m: StepMetrics, actions: TrainAction[], exact: Map<TrainAction, number>): void {
  const ev = (of: TrainAction[]) => finiteOrNull(explainedVariance(of.map((a) => a.values_K[0]!), of.map((a) => exact.get(a)!)));
  m.explained_variance_exact = ev(actions);
  for (const pos of [...new Set(actions.map((a) => a.agentIndex))].sort((a, b) => a - b)) m[`explained_variance_exact/pos${pos}`] = ev(actions.filter((a) => a.agentIndex === pos));
}

/** The rollout request of step `step`: the same for every plan, whichever rollout answers it. */
function rolloutRequest(config: MarftConfig, plan: AlgorithmPlan, step: number, seed: number): RolloutRequest {
  const { rollout } = config;
  return {
    step, seed, batchSize: rollout.batchSize, rolloutsPerPrompt: rollout.rolloutsPerPrompt,
    sampling: { temperature: rollout.temperature, topP: rollout.topP, topK: rollout.topK, maxNewTokens: rollout.maxNewTokens },
    policies: plan.policies,
    ...(plan.sampling === 'tree' ? { treeBranches: rollout.rolloutsPerPrompt } : {}),
    ...(plan.jointTree ? { jointTree: { branches: rollout.rolloutsPerPrompt, continuation: plan.jointTree } } : {}),
    // A tree ranks its copies by the run's reward settings; the task places no reward itself.
    ...(plan.sampling === 'tree' || plan.jointTree ? { turnScore: turnScore(config.reward) } : {}),
    ...(plan.rewards ? { rewardScheme: plan.rewards } : {}),
    // Without a critic nothing reads the centralised critic's input: the task need not render it.
    ...(plan.critics === null ? { criticView: false } : {}),
  };
}

/** Steps of critic warm-up: the actor waits while a critic learns; a plan without a critic has none to wait for. */
function warmupSteps(config: MarftConfig, plan: AlgorithmPlan): number {
  return plan.critics === null ? 0 : config.critic.warmupSteps;
}

/** Whether step `step` writes a samples file: every log.samplesEvery steps and the run's last step. */
function samplesDue(config: MarftConfig, step: number): boolean {
  const every = config.log.samplesEvery;
  return every > 0 && (step % every === 0 || step + 1 === config.train.steps);
}

async function trainStep(run: RunContext, step: number, state: TrainerState): Promise<{ metrics: StepMetrics; state: TrainerState; samples: SampleRecord[] | null }> {
  const { engine, task, config, plan } = run;
  const started = performance.now();
  const { rollout, train, critic } = config;
  const seed = deriveSeed(config.seed, step);
  const request = rolloutRequest(config, plan, step, seed);
  const episodes = plan.rollout ? await plan.rollout(engine, request) : await task.rollout(engine, request);
  const rolloutSeconds = (performance.now() - started) / 1000;

  const actions = flattenEpisodes(episodes, plan, config);
  const m: StepMetrics = { step };
  m.score_mean = mean(episodes.map((e) => e.outcome));
  m.turns_mean = mean(episodes.map((e) => e.steps.length));
  if (plan.reward !== 'none') for (const agent of task.agents) m[`reward/${agent}`] = mean(actions.filter((a) => a.agent === agent).map((a) => a.learnerReward));
  m.response_length_mean = mean(actions.map((a) => a.length));

  let next = state;
  let rewardScale = 1;
  if (plan.scaleRewards) {
    const scaled = scaleRewards(actions, plan, state.rewardMoments);
    next = { ...state, rewardMoments: scaled.moments };
    m.reward_scale = rewardScale = scaled.scale;
  }
  const hasCritic = plan.critics !== null;
  if (hasCritic) {
    await fillValues(engine, actions, plan.level, train.microBatchTokens);
    const exact = task.exactValues ? await exactValuesOf(run, episodes, actions, request, config.reward.teamWeight * rewardScale) : null;
    if (exact) recordExactValueMetrics(m, actions, exact);
    if (config.advantage.baseline === 'batch-mean') replaceValuesByMean(actions);
    if (config.advantage.baseline === 'exact') {
      if (!exact) throw new Error(`advantage.baseline: exact: task '${config.task.name}' gave no exact values for this sampling`);
      for (const a of actions) a.values_K = Float32Array.of(exact.get(a)!);
    }
  }
  const creditMetrics = await assignCredit(actions, episodes, plan, config, task, run.teacher);
  if (creditMetrics) Object.assign(m, creditMetrics);

  // The critic is measured against what actually followed (Monte Carlo returns), not against the
  // λ-returns it regresses on, which hold its own values at λ < 1.
  const actual = hasCritic ? monteCarloReturns(actions, episodes, plan, config) : undefined;
  const all = valueUnits(actions, plan, actual);
  const adv = moments(actions.flatMap((a) => Array.from(a.advantages_K)));
  const ret = moments(all.returns);
  Object.assign(m, { advantage_mean: adv.mean, advantage_std: adv.std, return_mean: ret.mean, return_std: ret.std });
  if (hasCritic) {
    Object.assign(m, {
      value_mean: mean(all.values),
      explained_variance: finiteOrNull(explainedVariance(all.values, all.actual)),
      explained_variance_targets: finiteOrNull(explainedVariance(all.values, all.returns)),
    });
    // Per agent position in the step (0 = acts first): whether the critic values each agent's state.
    const positions = [...new Set(actions.map((a) => a.agentIndex))].sort((a, b) => a - b);
    for (const pos of positions) {
      const units = valueUnits(actions.filter((a) => a.agentIndex === pos), plan, actual);
      m[`explained_variance/pos${pos}`] = finiteOrNull(explainedVariance(units.values, units.actual));
    }
  } else {
    Object.assign(m, { value_mean: null, explained_variance: null, explained_variance_targets: null });
  }

  const warmup = warmupSteps(config, plan);
  const actorLr = learningRate(config.actor.optim, Math.max(0, step - warmup), Math.max(1, train.steps - warmup));
  const criticLr = learningRate(critic.optim, step, train.steps);
  m.lr_actor = step >= warmup ? actorLr : 0;
  m.lr_critic = hasCritic ? criticLr : null;

  let actorStats: ActorStats | null = null;
  if (step >= warmup) {
    const active = activeAgent(config, task.agents, step);
    if (active) m.active_agent = active;
    let updated = actions.filter((a) => a.policy !== null && (!active || a.agent === active));
    if (plan.dropFlatGroups) {
      const flat = flatGroups(actions, groupKeyOf(plan));
      m.flat_group_fraction = flat.groups > 0 ? flat.flat / flat.groups : 0;
      updated = updated.filter((a) => !flat.actions.has(a));
    }
    if (plan.whitenAdvantages) normaliseAdvantages(updated, config.advantage.whitenBy);
    if (plan.kl && config.actor.klCoef > 0) {
      await forwardActions(engine, { kind: 'base' }, updated, (a) => ({ tokens: a.tokens, scoreFrom: a.scoreFrom }), train.microBatchTokens, rollout.temperature > 0 ? rollout.temperature : 1, (a, lp) => (a.ref_K = lp));
    }
    const passes = updatePasses(updated, plan, config, deriveSeed(seed, 3), deriveSeed(seed, 7), episodes.length);
    actorStats = await actorUpdate(engine, updated, plan, config, actorLr, passes);
  }
  const criticStats = hasCritic ? await criticUpdate(engine, actions, plan.level, config, criticLr, deriveSeed(seed, 4)) : null;

  Object.assign(m, {
    policy_loss: actorStats?.policyLoss ?? null, kl: actorStats?.kl ?? null, clip_fraction: actorStats?.clipFraction ?? null,
    importance_weight_mean: actorStats?.importanceWeight ?? null, importance_capped_fraction: actorStats?.cappedFraction ?? null,
    grad_norm_actor: actorStats?.gradNorm ?? null,
    value_loss: criticStats?.valueLoss ?? null, value_clip_fraction: criticStats?.valueClipFraction ?? null, grad_norm_critic: criticStats?.gradNorm ?? null,
  });
  const seconds = (performance.now() - started) / 1000;
  const generated = actions.reduce((s, a) => s + a.length, 0);
  Object.assign(m, { tokens_generated: generated, tokens_per_s: generated / Math.max(1e-9, rolloutSeconds), rollout_time_s: rolloutSeconds, step_time_s: seconds });
  const samples = samplesDue(config, step) ? sampleRecords(episodes, actions, plan, task, config.log.samplesEpisodes) : null;
  return { metrics: m, state: next, samples };
}

/** What the loop runs: a run's options and the plan (src/run/train.ts's train() builds it with planFor). */
export interface LoopOptions extends TrainOptions {
  plan: AlgorithmPlan;
}

export async function trainLoop(options: LoopOptions): Promise<TrainResult> {
  const { config, engine, task, runDir, plan } = options;
  const notice = options.notice ?? stderrNotice;
  const run: RunContext = { engine, task, config, plan, notice, ...(options.teacher ? { teacher: options.teacher } : {}) };
  await plan.prepare?.(run);
  await mkdir(runDir, { recursive: true });
  // One writer per run folder, for the whole run (docs/reliability.md).
  if (options.lock && options.lock.file !== join(runDir, LOCK_FILE)) throw new Error(`train: the lock given is ${options.lock.file}, not ${runDir}'s`);
  const lock = options.lock ?? (await acquireRunLock(runDir, notice));
  try {
    await cleanRunFolder(runDir, notice);
    const log = new MetricsLog(join(runDir, 'metrics.jsonl'));
    const adapters = [...new Set(Object.values(plan.policies))];
    const critics = [...new Set(Object.values(plan.critics ?? {}))];
    const trainables = { adapters, critics };

    let start = 0;
    let resumedFrom: number | null = null;
    let trainerState: TrainerState = INITIAL_TRAINER_STATE;
    const resumed = await resumeRun(engine, runDir, config, log, { acceptConfigChange: options.acceptConfigChange === true, notice });
    if (resumed) {
      start = resumedFrom = resumed.state.step;
      trainerState = resumed.state.trainer ?? INITIAL_TRAINER_STATE;
    } else {
      await createTrainables(engine, config, plan);
    }

    // Held-out scores before the first step and after the last (docs/config.md, train.evalEvery).
    const evaluations: EvaluationRecord = resumed ? await readEvaluations(runDir) : { before: null, after: null };
    const evaluate = async (step: number): Promise<RecordedEvaluation> => {
      const { score, perSeed, problems, passAtK } = await evaluatePolicies(engine, task, config, plan.policies);
      return { step, score, perSeed, problems, passAtK };
    };
    const tracker = await openTrackers(config, { runDir, totalSteps: config.train.steps, startStep: start, previous: await log.read() }, options.progress);
    try {
      const beforeAfter = options.evaluateBeforeAfter !== false;
      if (!resumed && beforeAfter) {
        evaluations.before = await evaluate(0);
        await writeEvaluations(runDir, evaluations);
        await tracker.evaluation({ when: 'before', ...evaluations.before });
      }
      let checkpoint = resumed?.dir ?? '';
      let saved = start;
      const save = async (steps: number): Promise<void> => {
        const covered = (await log.lines()).slice(0, steps).join('');
        checkpoint = await finiteCheckpoint(steps - 1, config, () =>
          saveCheckpoint(engine, runDir, { step: steps, metricsLines: steps, seed: config.seed, adapters, critics, trainer: trainerState, config }, config.train.keepCheckpoints, covered),
        );
        saved = steps;
      };
      let lastEval: RecordedEvaluation | null = null;
      const stop = Math.min(config.train.steps, options.stopAtStep ?? config.train.steps);
      let completed = start;
      for (let step = start; step < stop && !options.stop?.aborted; step++) {
        const state = trainerState;
        const done = await guardedStep(step, config, engine, trainables, () => trainStep(run, step, state));
        const m = done.metrics;
        trainerState = done.state;
        if (config.train.evalEvery > 0 && (step + 1) % config.train.evalEvery === 0) {
          lastEval = await evaluate(step + 1);
          m.eval_score = lastEval.score;
          // pass@n over the eval.seeds decodings (pass@1 is eval_score's per-problem mean of solved samples).
          if (lastEval.passAtK && lastEval.passAtK.length > 1) m[`eval_pass@${lastEval.passAtK.length}`] = lastEval.passAtK.at(-1)!;
        }
        // A diverged step stops the run before it is checkpointed; its line stays in metrics.jsonl for diagnosis.
        const diverged = await stepDivergence(step, m, config, engine, trainables);
        await log.append(m);
        await tracker.step(m);
        if (diverged) throw diverged;
        if (done.samples) await writeStepSamples(runDir, step, done.samples, config.log.samplesEpisodes);
        await options.onStep?.(m);
        completed = step + 1;
        if (completed % config.train.checkpointEvery === 0 || completed === stop) await save(completed);
      }
      if (completed < stop) {
        // Stopped on request: the completed steps are checkpointed, so a resume continues exactly.
        if (saved < completed) await save(completed);
        throw new RunStopped(options.stop?.reason, completed, checkpoint || null);
      }
      // A finished run resumed again keeps the score it recorded; the last step's train.evalEvery score is that score.
      if (beforeAfter && stop === config.train.steps && evaluations.after?.step !== stop) {
        evaluations.after = lastEval?.step === stop ? lastEval : await evaluate(stop);
        await writeEvaluations(runDir, evaluations);
        await tracker.evaluation({ when: 'after', ...evaluations.after });
      }
      return { plan, metrics: await log.read(), resumedFrom, checkpoint, evalBefore: evaluations.before, evalAfter: stop === config.train.steps ? evaluations.after : null };
    } finally {
      await tracker.close();
    }
  } finally {
    if (!options.lock) await lock.release();
  }
}
