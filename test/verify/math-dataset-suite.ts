// A verifier suite assembled from the benchmarks' own answer formats (issue 3: "its agreement rate
// on a suite you assemble from the datasets' answer formats"). Each gold answer is paired with
// re-formatted variants that must be judged equal and with perturbed variants that must not; the
// label comes from how the variant was made, never from the verifier.
import { loadDataset, type MathProblem } from '../../src/env/datasets/index.ts';
import { splitTopLevel } from '../../src/verify/math/structure.ts';

export interface SuiteCase {
  dataset: string;
  kind: string;
  gold: string;
  pred: string;
  equal: boolean;
}

/**
 * Bumps the last digit (9 → 8, else +1) outside a trailing unit ("\mbox{ cm}^2"): a different value in
 * every answer format that has such a digit.
 */
function bumpLastDigit(s: string): string | null {
  const unit = /\\(?:mbox|text)\{[^{}]*\}(?:\^\d)?$/.exec(s);
  const m = /(\d)(?!.*\d)/s.exec(unit ? s.slice(0, unit.index) : s);
  if (!m) return null;
  const d = Number(m[1]);
  return s.slice(0, m.index) + String(d === 9 ? 8 : d + 1) + s.slice(m.index + 1);
}

function withThousands(n: string): string {
  return n.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function math500Cases(problems: MathProblem[]): SuiteCase[] {
  const out: SuiteCase[] = [];
  for (const p of problems) {
    const a = p.answer;
    const add = (kind: string, pred: string, equal: boolean): void => void out.push({ dataset: 'math500', kind, gold: a, pred, equal });
    add('boxed-in-sentence', `Therefore the answer is $\\boxed{${a}}$.`, true);
    add('dollar-wrapped', `$${a}$`, true);
    add('no-spaces', a.replace(/\s+/g, ''), true);
    if (a.includes('\\frac')) add('dfrac', a.replace(/\\frac/g, '\\dfrac'), true);
    if (/^\(.*\)$/.test(a) && !a.includes('\\left')) add('left-right', `\\left${a.slice(0, -1)}\\right)`, true);
    if (/^\d{4,}$/.test(a)) add('thousands', withThousands(a), true);
    const fr = /^(-?)\\frac\{(\d+)\}\{(\d+)\}$/.exec(a);
    if (fr) add('decimal', `${fr[1]}${(Number(fr[2]) / Number(fr[3])).toPrecision(8)}`, true);
    const bumped = bumpLastDigit(a);
    if (bumped !== null) add('last-digit-changed', bumped, false);
  }
  return out;
}

function gsm8kCases(problems: MathProblem[]): SuiteCase[] {
  const out: SuiteCase[] = [];
  for (const p of problems) {
    const gold = p.solution!;
    const n = p.answer;
    const add = (kind: string, pred: string, equal: boolean): void => void out.push({ dataset: 'gsm8k', kind, gold, pred, equal });
    add('bare', n, true);
    add('boxed', `So the total is \\boxed{${n}}.`, true);
    add('hashes', `Some working.\n#### ${n}`, true);
    if (/^\d+$/.test(n)) add('dollars-cents', `\\$${withThousands(n)}.00`, true);
    add('answer-is', `The answer is ${n}.`, true);
    add('off-by-one', String(Number(n) + 1), false);
  }
  return out;
}

function olympiadCases(problems: MathProblem[]): SuiteCase[] {
  const out: SuiteCase[] = [];
  for (const p of problems) {
    const a = p.answer;
    // Answers in words ("f(x)=ax+b, where b is an arbitrary integer") or with stray $ are left out: no label can be built by editing them.
    if (/\$|\b[a-z]{4,}\b/i.test(a.replace(/\\[a-zA-Z]+/g, ''))) continue;
    const add = (kind: string, pred: string, equal: boolean): void => void out.push({ dataset: 'olympiadbench', kind, gold: a, pred, equal });
    add('boxed', `\\boxed{${a}}`, true);
    if (p.meta['is_multiple_answer'] === true) {
      const items = splitTopLevel(a, ',');
      // Dropping an item changes the answer only when the items are distinct values.
      if (items.length > 1 && new Set(items.map((x) => x.replace(/^.*=/, '').replace(/\s/g, ''))).size === items.length) {
        add('reordered', [...items].reverse().join(', '), true);
        add('item-dropped', items.slice(1).join(', '), false);
      }
    }
    const bumped = bumpLastDigit(a);
    if (bumped !== null) add('last-digit-changed', bumped, false);
  }
  return out;
}

function integerAnswerCases(problems: MathProblem[], dataset: string): SuiteCase[] {
  const out: SuiteCase[] = [];
  for (const p of problems) {
    const a = p.answer;
    out.push({ dataset, kind: 'boxed-padded', gold: a, pred: `\\boxed{${a.padStart(3, '0')}}`, equal: true });
    out.push({ dataset, kind: 'wrong', gold: a, pred: String(Number(a) + 10), equal: false });
  }
  return out;
}

export function datasetSuite(): SuiteCase[] {
  const math = (name: string): MathProblem[] => loadDataset(name).problems as MathProblem[];
  return [
    ...math500Cases(math('math500')),
    ...gsm8kCases(math('gsm8k')),
    ...olympiadCases(math('olympiadbench')),
    ...integerAnswerCases(math('aime2024'), 'aime2024'),
    ...integerAnswerCases(math('aime2025'), 'aime2025'),
    ...integerAnswerCases(math('amc23'), 'amc23'),
  ];
}
