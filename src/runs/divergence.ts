// Divergence: a step whose numbers are no longer finite. The trainer stops at that step with one
// line naming the step, what went non-finite and the likely cause from the configuration (a large
// learning rate, Adam ε = 0, β = 1), before anything of the step is checkpointed. Stopping rather
// than skipping: the step's update has already been applied to the live parameters, and a resume
// from the last checkpoint (with a corrected configuration) is the way back.
import type { MarftConfig } from '../config/schema.ts';
import type { StepMetrics } from './metrics-log.ts';
import { isTimingKey } from './metrics-log.ts';
import { DivergenceError } from './run-errors.ts';

export type Side = 'actor' | 'critic' | 'task' | 'both';

/**
 * Metric keys in the order a non-finite value propagates (rewards → values → gradients → losses):
 * the first bad one is the origin. [pattern, what it measures, plural, side of the update]
 */
const ORIGINS: [RegExp, string, boolean, Side][] = [
  [/^(score_mean|reward\/.*)$/, 'the rewards', true, 'task'],
  [/^value_mean$/, "the critic's values", true, 'critic'],
  [/^grad_norm_critic$/, "the critic's gradient norm", false, 'critic'],
  [/^grad_norm_actor$/, "the actor's gradient norm", false, 'actor'],
  [/^value_loss$/, 'the value loss', false, 'critic'],
  [/^(policy_loss|kl|importance_weight_mean)$/, 'the policy loss', false, 'actor'],
  [/^(advantage_|return_)/, 'the advantages', true, 'both'],
];

const show = (x: number): string => (Number.isNaN(x) ? 'NaN' : !Number.isFinite(x) ? (x > 0 ? 'Infinity' : '-Infinity') : (Math.abs(x) >= 1e5 || (x !== 0 && Math.abs(x) < 1e-3)) ? x.toExponential().replace('e+', 'e') : String(x));

export interface NonFiniteMetric {
  what: string;
  plural: boolean;
  value: number;
  side: Side;
}

/** The first non-finite, non-timing metric of a step (in propagation order), or null. */
export function nonFiniteMetric(m: StepMetrics): NonFiniteMetric | null {
  const bad = Object.entries(m).filter(([k, v]) => typeof v === 'number' && !Number.isFinite(v) && !isTimingKey(k)) as [string, number][];
  if (bad.length === 0) return null;
  for (const [pattern, what, plural, side] of ORIGINS) {
    const hit = bad.find(([k]) => pattern.test(k));
    if (hit) return { what, plural, value: hit[1], side };
  }
  return { what: `the metric ${bad[0]![0]}`, plural: false, value: bad[0]![1], side: 'both' };
}

/** The likeliest configuration cause of a divergence on one side of the update. */
export function likelyCause(config: MarftConfig, side: Side): string {
  if (side === 'task') return "the task's reward function returned a number that is not finite";
  const sides: ('actor' | 'critic')[] = side === 'both' ? ['actor', 'critic'] : [side];
  for (const s of sides) {
    const o = config[s].optim;
    if (o.eps === 0) return `${s}.optim.eps = 0 divides by zero wherever a gradient is zero; use a small positive ε (1e-8)`;
    if (o.beta1 >= 1 || o.beta2 >= 1) return `${s}.optim.beta${o.beta1 >= 1 ? 1 : 2} = 1 makes Adam's bias correction divide by zero; use a value below 1`;
  }
  const lrs = sides.map((s) => `${s}.optim.lr = ${show(config[s].optim.lr)}`).join(', ');
  return `the learning rate (${lrs}) may be too large`;
}

/** The one-line error of a step at which `what` (e.g. "the actor's gradient norm") stopped being finite. */
export function divergenceError(step: number, config: MarftConfig, what: string, side: Side, value?: number, plural = false): DivergenceError {
  const shown = value === undefined ? '' : ` (${show(value)})`;
  return new DivergenceError(step, `step ${step}: ${what} ${plural ? 'are' : 'is'} not finite${shown}; ${likelyCause(config, side)}; nothing of this step was checkpointed (fix the configuration, then resume with --accept-config-change from the last checkpoint)`);
}

/** The side of the update a non-finite parameter description belongs to ("the critic 'c'" → critic). */
export function sideOf(what: string): Side {
  return /critic/.test(what) ? 'critic' : /adapter|policy/.test(what) ? 'actor' : 'both';
}
