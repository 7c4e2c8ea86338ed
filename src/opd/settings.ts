// MAS-OPD's settings, with the paper's as the defaults (spec section 5; MAS-OPD paper App. D.6):
// Adam lr 1e-6, weight decay 0.01, clip-norm 1.0, batch 128 episodes split into minibatches of 64,
// 150 steps, training sampling at temperature 1.0 with top-p 1 and top-k off.
import type { OptimParams } from '../engine/types.ts';
import type { TurnWeighting } from '../config/choices.ts';
import type { RoleLineRule } from './teacher-context.ts';

export interface OpdSettings {
  /** λ of A = A_OPD + λ·A_role (RAS); 0 turns RAS off and skips the contrasting teacher pass. */
  lambda: number;
  /** PAC verdicts in the teacher's context (false: the teacher sees u ⊕ r_i only). */
  pac: boolean;
  roleLine: RoleLineRule;
  /** Eq. 13's weights of a role's turns: per trajectory, then over trajectories (the paper), or pooled over the minibatch. */
  turnWeighting: TurnWeighting;
  steps: number;
  /** Episodes (problems) per step. */
  batchSize: number;
  /** Episodes per minibatch: the batch is split into ceil(batchSize / minibatchSize) updates. */
  minibatchSize: number;
  optim: OptimParams;
  temperature: number;
  topP: number;
  topK: number;
  maxNewTokens: number;
  /** Cap on the tokens of one forward/backward micro-batch (memory only; results do not depend on it). */
  microBatchTokens: number;
  lora: { rank: number; alpha: number };
}

export const PAPER_OPD_SETTINGS: OpdSettings = {
  lambda: 0.1,
  pac: true,
  roleLine: 'role-sentences',
  turnWeighting: 'trajectory',
  steps: 150,
  batchSize: 128,
  minibatchSize: 64,
  optim: { lr: 1e-6, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1.0 },
  temperature: 1.0,
  topP: 1.0,
  topK: 0,
  maxNewTokens: 4096,
  microBatchTokens: 32768,
  lora: { rank: 32, alpha: 16 },
};
