// The imperfect teacher whose transcripts the demo's model is pretrained on
// (docs/demo.md): the Planner's teacher reduces the wrong operator first with
// probability 0.5, and the intermediate and the final values are each off by 1–2 with probability
// 0.1. The Solver's teacher always follows the plan it is given, right or wrong. RL has room to
// improve because the right plan is among the model's samples but is not reliably its mode.
import { Rng } from '../../core/rng.ts';
import { type Problem, type Reduction, correctReduction, planText, rewrittenValue, solutionText, stepOf } from './task.ts';

export interface TeacherNoise {
  /** Probability that the Planner reduces the operator that should come second. */
  wrongOrder: number;
  /** Probability that the Planner's intermediate value is off by ±1 or ±2. */
  planSlip: number;
  /** Probability that the Solver's final value is off by ±1 or ±2. */
  finalSlip: number;
}

export const DEFAULT_TEACHER_NOISE: TeacherNoise = { wrongOrder: 0.5, planSlip: 0.1, finalSlip: 0.1 };

/** One teacher episode: what each agent says. */
export interface Transcript {
  problem: Problem;
  plan: string;
  solution: string;
}

function slip(rng: Rng, value: number, probability: number): number {
  if (rng.next() >= probability) return value;
  return value + rng.pick([-2, -1, 1, 2]);
}

export function teacherTranscript(problem: Problem, rng: Rng, noise: TeacherNoise = DEFAULT_TEACHER_NOISE): Transcript {
  const right = correctReduction(problem);
  const reduction: Reduction = rng.next() < noise.wrongOrder ? ((1 - right) as Reduction) : right;
  const planValue = slip(rng, stepOf(problem, reduction).value, noise.planSlip);
  const finalValue = slip(rng, rewrittenValue(problem, reduction, planValue), noise.finalSlip);
  const plan = planText(problem, reduction, planValue);
  return { problem, plan, solution: solutionText(plan, finalValue) };
}
