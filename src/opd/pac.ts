// PAC, privileged attribution for coordination (spec section 5; MAS-OPD paper §3.3, Eq. 11–12, 24,
// App. F.6). After each finished turn a training-time verifier checks every artefact of the turn
// against the training references (two independent booleans for a pair); the attribution is
// rendered as text and enters the teacher's context only, before the next turn. A verdict states
// facts only, as the paper's do (App. F.6): what the agents produced and which artefact is right or
// wrong; it addresses no role and advises no revision, and it never contains a reference value.
//
// Template:
//   Verification result for the previous turn:
//   - Observation: <one line>
//   - Conclusion: <OUTCOME>. <which artefacts are right and which wrong>
// With more than two agents the rules give one line per agent in place of the pair's observation.

export const PAC_HEADER = 'Verification result for the previous turn:';

export const MATH_CONCLUSIONS = ['DERIVATION_INCONSISTENT', 'COMPUTATION_INCONSISTENT', 'BOTH_INCONSISTENT', 'BOTH_CONSISTENT'] as const;
export const CODE_CONCLUSIONS = ['PROGRAM_INCONSISTENT', 'TEST_INCONSISTENT', 'BOTH_INCONSISTENT', 'BOTH_CONSISTENT'] as const;
export type MathConclusion = (typeof MATH_CONCLUSIONS)[number];
export type CodeConclusion = (typeof CODE_CONCLUSIONS)[number];
export type PacConclusion = MathConclusion | CodeConclusion;

/** One turn's attribution, whoever produced it (rules or an attribution model). */
export interface Attribution {
  /** The observation line(s), without the leading "- Observation: ". */
  observations: string[];
  conclusion: PacConclusion;
  /** One sentence stating which artefacts are right and which wrong (a fact, no advice). */
  finding: string;
}

export function renderVerdict(a: Attribution): string {
  const lines = [PAC_HEADER];
  for (const o of a.observations) lines.push(`- Observation: ${o}`);
  lines.push(`- Conclusion: ${a.conclusion}. ${a.finding}`);
  return lines.join('\n');
}

const MATH_FINDINGS: Record<MathConclusion, string> = {
  DERIVATION_INCONSISTENT: 'The derivation is wrong and the computation is right.',
  COMPUTATION_INCONSISTENT: 'The computation is wrong and the derivation is right.',
  BOTH_INCONSISTENT: 'Both the derivation and the computation are wrong.',
  BOTH_CONSISTENT: 'Both the derivation and the computation are right.',
};

const CODE_FINDINGS: Record<CodeConclusion, string> = {
  PROGRAM_INCONSISTENT: 'The program is wrong and the test case is right.',
  TEST_INCONSISTENT: 'The test case is wrong and the program is right.',
  BOTH_INCONSISTENT: 'Both the program and the test case are wrong.',
  BOTH_CONSISTENT: 'Both the program and the test case are right.',
};

function outcome<C extends PacConclusion>(firstOk: boolean, secondOk: boolean, names: [C, C, C, C]): C {
  // names: [first wrong only, second wrong only, both wrong, both right]
  if (firstOk && secondOk) return names[3];
  if (!firstOk && !secondOk) return names[2];
  return firstOk ? names[1] : names[0];
}

/** What the maths rules read from one agent's turn (the environment's own reading of its output). */
export interface MathTurnAnswer {
  agent: string;
  role: string;
  /** The answer after ####, or the program's printed result; null when there is none. */
  answer: string | null;
  /** Tool-User: how its program run ended ('ok', 'no_program', 'runtime_error', ...). */
  programStatus?: string;
  /** The answer matches the reference (the verifier's boolean; the reference itself is never rendered). */
  correct: boolean;
}

function reported(a: MathTurnAnswer | undefined, what: 'derivation' | 'program'): string {
  if (!a) return what === 'derivation' ? 'no answer' : 'nothing';
  if (a.answer !== null) return a.answer;
  if (what === 'derivation') return 'no answer';
  if (a.programStatus === 'no_program') return 'nothing (no program was given)';
  return a.programStatus && a.programStatus !== 'ok' ? `nothing (the program failed: ${a.programStatus})` : 'nothing';
}

/**
 * Maths rules: "The derivation reported {a} and the program printed {b}." and one of the four
 * outcomes from (derivation correct, computation correct). With more than one agent per role, one
 * line per agent, and the outcome is BOTH_CONSISTENT only when every agent of a role is right.
 */
export function mathAttribution(answers: readonly MathTurnAnswer[], roles = { derivation: 'Reasoner', computation: 'Tool-User' }): Attribution {
  const derivations = answers.filter((a) => a.role === roles.derivation);
  const programs = answers.filter((a) => a.role === roles.computation);
  const derivationOk = derivations.length > 0 && derivations.every((a) => a.correct);
  const computationOk = programs.length > 0 && programs.every((a) => a.correct);
  const conclusion = outcome(derivationOk, computationOk, ['DERIVATION_INCONSISTENT', 'COMPUTATION_INCONSISTENT', 'BOTH_INCONSISTENT', 'BOTH_CONSISTENT'] as [MathConclusion, MathConclusion, MathConclusion, MathConclusion]);
  const observations =
    derivations.length <= 1 && programs.length <= 1
      ? [`The derivation reported ${reported(derivations[0], 'derivation')} and the program printed ${reported(programs[0], 'program')}.`]
      : answers.map((a) =>
          a.role === roles.computation
            ? `${a.agent} (${a.role}): the program printed ${reported(a, 'program')}, ${a.correct ? 'consistent' : 'inconsistent'} with the problem.`
            : `${a.agent} (${a.role}): the derivation reported ${reported(a, 'derivation')}, ${a.correct ? 'consistent' : 'inconsistent'} with the problem.`,
        );
  return { observations, conclusion, finding: MATH_FINDINGS[conclusion] };
}

/** What the code rules read from one turn of a Coder–Tester pair. */
export interface CodeTurnCheck {
  /** The Coder's program passes the golden tests. */
  programCorrect: boolean;
  /** The reference solution reproduces the Tester's declared output on its declared input. */
  testCorrect: boolean;
  /**
   * The Coder's program on the Tester's case (the first failing sample when one fails), when both
   * exist; `failure` when the run did not finish normally: its status and error text (what the
   * program said, in place of its empty output).
   */
  sample: { input: string; printed: string; declared: string; failure?: { status: string; error: string } } | null;
}

const clipped = (s: string, max = 200): string => {
  const t = s.replace(/\s+$/, '');
  return JSON.stringify(t.length <= max ? t : `${t.slice(0, max)}...`);
};

/** The last non-empty line of an error text: a Python traceback's exception ("ZeroDivisionError: division by zero"). */
const lastLine = (text: string): string => text.split('\n').map((l) => l.trim()).filter((l) => l !== '').at(-1) ?? '';

/**
 * Code rules: "On test input {x}, the program printed {y}, while the declared expected output was
 * {z}."; a run that failed shows its error (the last line of its error text) in place of the output:
 * "On test input {x}, the program failed (runtime_error: {error}), while …".
 */
export function codeAttribution(check: CodeTurnCheck): Attribution {
  const conclusion = outcome(check.programCorrect, check.testCorrect, ['PROGRAM_INCONSISTENT', 'TEST_INCONSISTENT', 'BOTH_INCONSISTENT', 'BOTH_CONSISTENT'] as [CodeConclusion, CodeConclusion, CodeConclusion, CodeConclusion]);
  const s = check.sample;
  const result = s?.failure ? `failed (${s.failure.status}: ${clipped(lastLine(s.failure.error))})` : `printed ${clipped(s?.printed ?? '')}`;
  const observation = s
    ? `On test input ${clipped(s.input)}, the program ${result}, while the declared expected output was ${clipped(s.declared)}.`
    : 'The program could not be run on a test case: the program or the test case is missing.';
  return { observations: [observation], conclusion, finding: CODE_FINDINGS[conclusion] };
}

/**
 * Produces the attribution of turn t of an episode (null: no verdict for that turn). The rules above
 * are one route; an attribution model (one call per turn) is another with the same result type.
 */
export type Attributor = (episode: { problemId: string; info: Record<string, unknown> }, t: number) => Attribution | null | Promise<Attribution | null>;
