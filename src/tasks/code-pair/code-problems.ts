// The code counterpart of the arith-pair study's problems (src/tasks/arith-pair/study-task.ts): the
// same order-sensitive two-operator arithmetic, as a programming problem with stdin/stdout golden
// tests, played by the Coder–Tester pair (src/workflow/builtin/pairs.ts) in the real code
// environment (src/env/code-env.ts: programs and test cases run in the sandbox).
//
//   statement  "Read an integer x from standard input and print the value of 3+4*x."
//   golden     x = 2, 5, 7 on stdin, the value of the expression on stdout
//   Coder      "```python\nx = int(input())\nprint(3+4*x)\n```"        (right order: as written)
//              "```python\nx = int(input())\nprint((3+4)*x)\n```"      (wrong: parentheses force the other)
//   Tester     "4*6=24\n3+24=27\n**Test Input:**\n```\n6\n```\n**Test Output:**\n```\n27\n```"
//              (a few lines of scratch work for an input it picks, then the case in the prompt's format)
//
// What is learnt is the arith-pair study's one choice, which operator to reduce first, made by the
// Coder in the program it writes and by the Tester in the output it declares. The problems are the
// expressions `a o1 b o2 x` (a, b in 1..9, o1, o2 in + - *) whose two orders give different values
// at every golden input, so a wrong-order program fails every golden test.
import type { CodeProblem } from '../../env/datasets/types.ts';
import { Rng } from '../../core/rng.ts';
import { extractTestCase } from '../../workflow/builtin/formats.ts';
import { apply, correctReduction, MAX_OPERAND, MIN_OPERAND, OPS, SPLIT_SEED, type Op, type Reduction } from '../arith-duo/task.ts';

export const GOLDEN_INPUTS: readonly number[] = [2, 5, 7];
/** The inputs a scripted Tester picks from. */
export const TESTER_INPUTS: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 9];

/** One problem: the expression a o1 b o2 x. */
export interface CodeExpression {
  a: number;
  op1: Op;
  b: number;
  op2: Op;
}

export function expressionText(e: CodeExpression, x: string | number = 'x'): string {
  return `${e.a}${e.op1}${e.b}${e.op2}${x}`;
}

/** The value at x when reduction `r` is applied (0: the first operator first, 1: the second). */
export function valueAt(e: CodeExpression, x: number, r: Reduction): number {
  return r === 0 ? apply(apply(e.a, e.op1, e.b), e.op2, x) : apply(e.a, e.op1, apply(e.b, e.op2, x));
}

export function rightReduction(e: CodeExpression): Reduction {
  return correctReduction(e);
}

export function orderSensitiveEverywhere(e: CodeExpression): boolean {
  return GOLDEN_INPUTS.every((x) => valueAt(e, x, 0) !== valueAt(e, x, 1));
}

export function allExpressions(): CodeExpression[] {
  const out: CodeExpression[] = [];
  for (let a = MIN_OPERAND; a <= MAX_OPERAND; a++)
    for (const op1 of OPS)
      for (let b = MIN_OPERAND; b <= MAX_OPERAND; b++)
        for (const op2 of OPS) {
          const e = { a, op1, b, op2 };
          if (orderSensitiveEverywhere(e)) out.push(e);
        }
  return out;
}

export interface CodeSplit {
  train: CodeExpression[];
  heldOut: CodeExpression[];
}

/** The split never depends on the run's seed (the arith tasks' split seed). */
export function codeSplit(heldOut: number): CodeSplit {
  const all = new Rng(SPLIT_SEED).shuffle(allExpressions());
  if (heldOut >= all.length) throw new Error(`code-pair: heldOut ${heldOut} leaves no training problem (there are ${all.length})`);
  return { heldOut: all.slice(0, heldOut), train: all.slice(heldOut) };
}

/** The expression the program prints: as written (right order) or parenthesised to force the other. */
export function programExpression(e: CodeExpression, r: Reduction): string {
  if (r === rightReduction(e)) return expressionText(e);
  return r === 0 ? `(${e.a}${e.op1}${e.b})${e.op2}x` : `${e.a}${e.op1}(${e.b}${e.op2}x)`;
}

export const PROGRAM_HEAD = 'x = int(input())\nprint(';

export function programSource(e: CodeExpression, r: Reduction): string {
  return `${PROGRAM_HEAD}${programExpression(e, r)})\n`;
}

export function coderText(e: CodeExpression, r: Reduction): string {
  return '```python\n' + programSource(e, r) + '```';
}

export const TEST_INPUT_HEAD = '**Test Input:**\n```\n';
export const TEST_OUTPUT_HEAD = '\n```\n**Test Output:**\n```\n';
export const TEST_END = '\n```';

/** The Tester's scratch work at input x under reduction r (the sub-expression first, then the rest), then its case. */
export function testerText(e: CodeExpression, x: number, r: Reduction): string {
  const first = r === 0 ? { text: `${e.a}${e.op1}${e.b}`, value: apply(e.a, e.op1, e.b) } : { text: `${e.b}${e.op2}${x}`, value: apply(e.b, e.op2, x) };
  const rest = r === 0 ? `${first.value}${e.op2}${x}` : `${e.a}${e.op1}${first.value}`;
  const v = valueAt(e, x, r);
  return `${first.text}=${first.value}\n${rest}=${v}\n${TEST_INPUT_HEAD}${x}${TEST_OUTPUT_HEAD}${v}${TEST_END}`;
}

export function codeStatement(e: CodeExpression): string {
  return `Read an integer x from standard input and print the value of ${expressionText(e)}.`;
}

export function codeProblem(e: CodeExpression): CodeProblem {
  const right = rightReduction(e);
  return {
    domain: 'code',
    id: expressionText(e),
    dataset: 'code-pair',
    statement: codeStatement(e),
    tests: { kind: 'stdio', tests: GOLDEN_INPUTS.map((x) => ({ stdin: `${x}\n`, stdout: `${valueAt(e, x, right)}\n` })) },
    referenceSolution: programSource(e, right),
    meta: {},
  };
}

/** The problem's expression from its id ("3+4*x"). */
export function expressionOf(id: string): CodeExpression {
  const m = /^(\d)([-+*])(\d)([-+*])x$/.exec(id);
  if (!m) throw new Error(`not a code-pair problem id: ${JSON.stringify(id)}`);
  return { a: Number(m[1]), op1: m[2] as Op, b: Number(m[3]), op2: m[4] as Op };
}

/** Whether a Tester's reply holds a case whose declared output is the expression's value at its input (a missing or malformed case is not). */
export function testerCaseRight(e: CodeExpression, text: string): boolean {
  const c = extractTestCase(text);
  if (!c || !/^-?\d+$/.test(c.input.trim()) || !/^-?\d+$/.test(c.output.trim())) return false;
  return valueAt(e, Number(c.input.trim()), rightReduction(e)) === Number(c.output.trim());
}
