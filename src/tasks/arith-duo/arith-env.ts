// The environment of one demo episode (single use, spec section 3): the problem is the first
// message; after the Planner and the Solver have acted, the team reward is 1 when the Solver's
// final answer is right, else 0, and the episode ends. The reference answer never reaches the agents.
import type { StepInput, StepOutcome, TaskEnv } from '../../workflow/index.ts';
import { type Problem, evaluatePlan, extractAnswer, isRightPlan } from './task.ts';

/** What an episode's info records (for the demo's table and diagnostics). */
export interface ArithInfo {
  [key: string]: unknown;
  plan: string;
  solution: string;
  answer: number | null;
  reference: number;
  /** The Planner reduced the right operator and wrote its exact value. */
  rightPlan: boolean;
  /** The Solver's answer is what the plan, as written, implies (right or wrong). */
  followedPlan: boolean;
}

export class ArithEnv implements TaskEnv {
  readonly problemId: string;
  readonly firstMessage: string;
  private info: ArithInfo | null = null;

  constructor(readonly problem: Problem) {
    this.problemId = problem.text;
    this.firstMessage = problem.text;
  }

  onStep(step: StepInput): StepOutcome {
    const plan = step.outputs.find((o) => o.agent === 'planner')?.text ?? '';
    const solution = step.outputs.find((o) => o.agent === 'solver')?.text ?? '';
    const answer = extractAnswer(solution);
    const implied = evaluatePlan(plan);
    this.info = {
      plan,
      solution,
      answer,
      reference: this.problem.answer,
      rightPlan: isRightPlan(this.problem, plan),
      followedPlan: implied !== null && answer === implied,
    };
    return { teamReward: answer === this.problem.answer ? 1 : 0, done: true };
  }

  finalScore(): { score: number; info: Record<string, unknown> } {
    if (!this.info) throw new Error(`ArithEnv ${this.problemId}: finalScore before the episode's step`);
    return { score: this.info.answer === this.problem.answer ? 1 : 0, info: this.info };
  }
}
