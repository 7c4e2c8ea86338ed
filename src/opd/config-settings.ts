// MAS-OPD's settings (./settings.ts) read from a run configuration (algorithm: mas-opd). The method's
// own keys are the `opd` section; the rest are the keys every algorithm shares, so one file sets the
// budget and the optimiser whatever the algorithm:
//   steps / batchSize            train.steps / rollout.batchSize
//   optim                        actor.optim (Adam; its schedule gives each step's lr, as for every algorithm: src/train/loop.ts)
//   temperature / topP / topK    rollout.* (the paper trains at 1.0 / 1 / off)
//   maxNewTokens                 rollout.maxNewTokens
//   microBatchTokens             train.microBatchTokens
//   lora                         policy.loraRank / policy.loraAlpha (targetModules: policy.targetModules)
import type { MarftConfig } from '../config/schema.ts';
import { DEFAULT_ROLE_CONDITIONS, loadRoleConditions, mergeRoleConditions, type RoleConditionTable } from './role-conditions.ts';
import type { OpdSettings } from './settings.ts';

export function opdSettingsOf(config: MarftConfig): OpdSettings {
  const o = config.actor.optim;
  return {
    lambda: config.opd.lambda,
    pac: config.opd.pac,
    roleLine: config.opd.roleLine,
    turnWeighting: config.opd.turnWeighting,
    steps: config.train.steps,
    batchSize: config.rollout.batchSize,
    minibatchSize: config.opd.minibatchSize,
    optim: { lr: o.lr, beta1: o.beta1, beta2: o.beta2, eps: o.eps, weightDecay: o.weightDecay, maxGradNorm: o.maxGradNorm },
    temperature: config.rollout.temperature,
    topP: config.rollout.topP,
    topK: config.rollout.topK,
    maxNewTokens: config.rollout.maxNewTokens,
    microBatchTokens: config.train.microBatchTokens,
    lora: { rank: config.policy.loraRank, alpha: config.policy.loraAlpha },
  };
}

/** The role-condition table of a configuration: the built-in one or opd.roleConditions' file, then opd.contrast. */
export function configuredConditions(opd: { roleConditions: string; contrast: Record<string, unknown> }): RoleConditionTable {
  const table = opd.roleConditions ? loadRoleConditions(opd.roleConditions) : DEFAULT_ROLE_CONDITIONS;
  return Object.keys(opd.contrast).length > 0 ? mergeRoleConditions({ contrast: opd.contrast }, table, 'opd') : table;
}
