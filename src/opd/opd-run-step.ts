// MAS-OPD as a step function of the shared training loop (src/train/loop.ts, algorithm: mas-opd), so
// `marft train` gives it the run lock, config.json, metrics.jsonl, checkpoints (adapters, optimiser
// state, trainer state), exact resume and the divergence guards of every other algorithm. The step
// is trainOpd's (./opd-train.ts), unchanged: rollout with the current students (sampling seed from
// (run seed, step) only), then opdUpdate (./opd-step.ts). The students' adapters are the plan's
// (one per role, created by the trainer from policy.* with the same seeds trainOpd uses); the only
// addition is that each step's learning rate follows actor.optim's schedule (constant with no warmup
// is the paper's, and trainOpd's).
import { ConfigError } from '../config/schema-dsl.ts';
import { deriveSeed } from '../core/rng.ts';
import type { StepMetrics } from '../runs/metrics-log.ts';
import { learningRate } from '../train/schedules.ts';
import type { StepKind } from '../train/step-function.ts';
import { withPolicies } from '../workflow/index.ts';
import { opdSettingsOf } from './config-settings.ts';
import { distillationOf } from './distillable-task.ts';
import { opdUpdate, type OpdStepContext } from './opd-step.ts';
import { opdRollout } from './opd-train.ts';
import { conditionText, contrastRole, DEFAULT_ROLE_CONDITIONS, loadRoleConditions, mergeRoleConditions, type RoleConditionTable } from './role-conditions.ts';

/** The role-condition table of a configuration: the built-in one or opd.roleConditions' file, then opd.contrast. */
export function configuredConditions(opd: { roleConditions: string; contrast: Record<string, unknown> }): RoleConditionTable {
  const table = opd.roleConditions ? loadRoleConditions(opd.roleConditions) : DEFAULT_ROLE_CONDITIONS;
  return Object.keys(opd.contrast).length > 0 ? mergeRoleConditions({ contrast: opd.contrast }, table, 'opd') : table;
}

export const opdStepKind: StepKind = async ({ engine, task, config, plan, teacher, notice }) => {
  const source = distillationOf(task);
  if (!source) throw new ConfigError(`algorithm: mas-opd trains the roles of a Flex-MG workflow; task '${config.task.name}' has none (use task 'workflow')`);
  if (!teacher) throw new ConfigError('teacher.path: algorithm mas-opd needs a teacher model (a Hugging Face model folder)');
  if (config.rollout.rolloutsPerPrompt !== 1) throw new ConfigError(`rollout.rolloutsPerPrompt: mas-opd samples one episode per problem (rollout.batchSize problems per step), got ${config.rollout.rolloutsPerPrompt}`);
  if (engine.info.vocabSize < source.tokenizer.vocabSize) throw new ConfigError(`model: the students' model has ${engine.info.vocabSize} embeddings, fewer than their tokenizer's ${source.tokenizer.vocabSize} ids`);
  const settings = opdSettingsOf(config);
  const conditions = configuredConditions(config.opd);
  // Every role's condition (and κ, when RAS is on) is looked up now, so a missing one fails before step 0.
  const roles = [...new Set(source.workflow.agents.map((a) => a.role))];
  for (const role of roles) {
    conditionText(conditions, role);
    if (settings.lambda !== 0) conditionText(conditions, contrastRole(conditions, role));
  }
  if (settings.pac && !source.attribute) notice(`opd.pac: task '${config.task.name}' has no PAC rules for this workflow (only the Reasoner–Tool-User and Coder–Tester pairs have them); training without verdicts`);
  const workflow = withPolicies(source.workflow, plan.policies);
  const ctx: OpdStepContext = {
    student: engine,
    teacher,
    tokenizer: source.tokenizer,
    roleOf: new Map(workflow.agents.map((a) => [a.name, a.role])),
    conditions,
    attribute: source.attribute,
    settings,
  };
  return async (step, state) => {
    const started = performance.now();
    const seed = deriveSeed(config.seed, step);
    const lr = learningRate(config.actor.optim, step, config.train.steps);
    const episodes = await opdRollout(engine, source.tokenizer, workflow, source.trainEnvs(settings.batchSize, seed), settings, seed);
    const rolloutSeconds = (performance.now() - started) / 1000;
    const m: StepMetrics = { step, ...(await opdUpdate(episodes, { ...ctx, settings: { ...settings, optim: { ...settings.optim, lr } } }, seed)) };
    m.score_mean = episodes.reduce((s, e) => s + e.score, 0) / Math.max(1, episodes.length);
    m.turns_mean = episodes.reduce((s, e) => s + e.steps.length, 0) / Math.max(1, episodes.length);
    m.lr_actor = lr;
    m.rollout_time_s = rolloutSeconds;
    m.step_time_s = (performance.now() - started) / 1000;
    return { metrics: m, state };
  };
};
