// The demo's synthetic task: two-step arithmetic `a o1 b o2 c` over digits 1..9 with o ∈ {+, -, *},
// kept to small integers: every partial result of either order (a o1 b, b o2 c and both final
// values) lies in −20..20, which leaves 3,899 problems. A 0.4M-parameter model learns that
// arithmetic within about 1,000 pretraining steps; with products up to 9·9·9 it does not.
//
// The Planner → Solver split (spec section 2, Duo): the Planner reduces one operator and writes the
// problem with the intermediate result in its place ("3+8" for "3+4*2"); the Solver evaluates
// that plan and writes the final answer ("3+8=11"), so its answer depends on the Planner's value. Only the operator the Planner picks is a real choice: `*` binds before
// `+`/`-`, and equal precedence reduces left first. Reducing the other operator first is the
// teacher's deliberate mistake, which RL can learn to avoid.
import { Rng } from '../../core/rng.ts';

export type Op = '+' | '-' | '*';
export const OPS: readonly Op[] = ['+', '-', '*'];
export const MIN_OPERAND = 1;
export const MAX_OPERAND = 9;
/** Bound on |every partial result| of both orders. */
export const MAX_ABS_VALUE = 20;

export interface Problem {
  /** The expression itself, e.g. "3+4*2" (unique, so it is also the id). */
  text: string;
  a: number;
  op1: Op;
  b: number;
  op2: Op;
  c: number;
  /** The value under the usual precedence rules. */
  answer: number;
}

/** Which operator is reduced first: 0 = `a o1 b`, 1 = `b o2 c`. */
export type Reduction = 0 | 1;

export function apply(x: number, op: Op, y: number): number {
  return op === '+' ? x + y : op === '-' ? x - y : x * y;
}

export function correctReduction(p: Pick<Problem, 'op1' | 'op2'>): Reduction {
  return p.op2 === '*' && p.op1 !== '*' ? 1 : 0;
}

export function makeProblem(a: number, op1: Op, b: number, op2: Op, c: number): Problem {
  const first = correctReduction({ op1, op2 });
  const answer = first === 1 ? apply(a, op1, apply(b, op2, c)) : apply(apply(a, op1, b), op2, c);
  return { text: `${a}${op1}${b}${op2}${c}`, a, op1, b, op2, c, answer };
}

/** Both reduction orders' intermediate and final values. */
export function partialResults(p: Problem): number[] {
  const left = apply(p.a, p.op1, p.b);
  const right = apply(p.b, p.op2, p.c);
  return [left, apply(left, p.op2, p.c), right, apply(p.a, p.op1, right)];
}

/** Every problem of the task (3,899 of the 9·3·9·3·9 = 6,561 expressions), in a fixed order. */
export function allProblems(): Problem[] {
  const out: Problem[] = [];
  for (let a = MIN_OPERAND; a <= MAX_OPERAND; a++)
    for (const op1 of OPS)
      for (let b = MIN_OPERAND; b <= MAX_OPERAND; b++)
        for (const op2 of OPS)
          for (let c = MIN_OPERAND; c <= MAX_OPERAND; c++) {
            const p = makeProblem(a, op1, b, op2, c);
            if (partialResults(p).every((v) => Math.abs(v) <= MAX_ABS_VALUE)) out.push(p);
          }
  return out;
}

/** The split never depends on the run's --seed, so every run is scored on the same held-out problems. */
export const SPLIT_SEED = 4_2026;
export const DEFAULT_HELD_OUT = 1000;

export interface Split {
  /** Problems used for pretraining transcripts and RL rollouts. */
  train: Problem[];
  /** Problems never seen in pretraining or RL; the demo's before/after scores are on these. */
  heldOut: Problem[];
}

export function splitProblems(heldOutCount = DEFAULT_HELD_OUT): Split {
  const shuffled = new Rng(SPLIT_SEED).shuffle(allProblems());
  return { heldOut: shuffled.slice(0, heldOutCount), train: shuffled.slice(heldOutCount) };
}

/** The sub-expression reduced first and what remains once its value is substituted. */
export interface Step {
  reduction: Reduction;
  /** e.g. "4*2". */
  subExpression: string;
  /** The exact value of the sub-expression. */
  value: number;
}

export function stepOf(p: Problem, reduction: Reduction): Step {
  return reduction === 0
    ? { reduction, subExpression: `${p.a}${p.op1}${p.b}`, value: apply(p.a, p.op1, p.b) }
    : { reduction, subExpression: `${p.b}${p.op2}${p.c}`, value: apply(p.b, p.op2, p.c) };
}

/** The expression after substituting `value` for the reduced sub-expression, e.g. "3+8". */
export function rewritten(p: Problem, reduction: Reduction, value: number): string {
  return reduction === 0 ? `${value}${p.op2}${p.c}` : `${p.a}${p.op1}${value}`;
}

/** The value the rewritten expression evaluates to (the Solver's faithful answer to a plan). */
export function rewrittenValue(p: Problem, reduction: Reduction, value: number): number {
  return reduction === 0 ? apply(value, p.op2, p.c) : apply(p.a, p.op1, value);
}

/** The Planner's text: the problem with the reduced sub-expression replaced by `value`. */
export function planText(p: Problem, reduction: Reduction, value: number): string {
  return rewritten(p, reduction, value);
}

/** The Solver's text: the plan, '=', and the final value it writes. */
export function solutionText(plan: string, finalValue: number): string {
  return `${plan}=${finalValue}`;
}

/** The final answer of a Solver's text: the integer after its last '='; null when there is none. */
export function extractAnswer(text: string): number | null {
  const m = /=(-?\d+)\s*$/.exec(text.trim());
  return m ? Number(m[1]) : null;
}

/** What a Planner's text says: which operator it reduced and the value it wrote (null parts when malformed). */
export interface ParsedPlan {
  reduction: Reduction | null;
  value: number | null;
}

const BINARY = /^(-?\d+)([-+*])(-?\d+)$/;

/** The value of a plan "x o y" as written; null when it is not one binary operation. */
export function evaluatePlan(text: string): number | null {
  const m = BINARY.exec(text.trim());
  return m ? apply(Number(m[1]), m[2] as Op, Number(m[3])) : null;
}

export function parsePlan(p: Problem, text: string): ParsedPlan {
  const m = BINARY.exec(text.trim());
  if (!m) return { reduction: null, value: null };
  const x = Number(m[1]);
  const op = m[2] as Op;
  const y = Number(m[3]);
  // "v o2 c" keeps the right operand: the left operator was reduced; "a o1 v" the other way round.
  const left = op === p.op2 && y === p.c;
  const right = op === p.op1 && x === p.a;
  if (left && right) return y === stepOf(p, 1).value && x !== stepOf(p, 0).value ? { reduction: 1, value: y } : { reduction: 0, value: x };
  if (left) return { reduction: 0, value: x };
  if (right) return { reduction: 1, value: y };
  return { reduction: null, value: null };
}

/** A plan is right when it reduces the operator precedence says to reduce first and its value is exact. */
export function isRightPlan(p: Problem, text: string): boolean {
  const plan = parsePlan(p, text);
  const right = stepOf(p, correctReduction(p));
  // The two orders agree on a+b+c, a*b*c and a+b-c; either reduction is right there.
  if (plan.reduction === null || plan.value === null) return false;
  if (plan.value !== stepOf(p, plan.reduction).value) return false;
  return plan.reduction === right.reduction || rewrittenValue(p, plan.reduction, plan.value) === p.answer;
}
