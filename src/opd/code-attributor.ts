// The code PAC rules on episodes of the Coder–Tester pair run through TurnRecordingEnv over CodeEnv:
// turn t's check is CodeEnv's verifier reading of that turn (`verification` in episode.info.turns[t]).
//   - the program is consistent when it passes every golden test (every Coder's, with several);
//   - the test is consistent when the reference solution reproduces the Tester's declared output on
//     its declared input (every Tester's); a problem without a reference solution gets no verdict
//     (its Tester cases cannot be judged);
//   - the observation is the Coder's program on the Tester's case: the first disagreeing run (by
//     coder, then tester), else the first run. Its three values are the Tester's input, what the
//     Coder's program printed and the Tester's declared output: a golden test or an output of the
//     reference solution never enters a verdict. A run that did not finish (a crash, a timeout)
//     shows its status and the program's error text in place of its (empty) output. No run (a
//     program or a case missing): the observation says so.
//   - not judged here (CodeEnv decides it, src/env/code-env.ts): the reference solution runs on the
//     Tester's input as written and its output is compared line by line with the declared one, so a
//     declared output with the right values in another layout counts as a wrong test case
//     (docs/mas-opd.md lists it).
import { codeAttribution, type Attribution, type CodeTurnCheck } from './pac.ts';
import type { CodeTurnVerification } from '../env/code-env.ts';

export function codeTurnCheck(info: Record<string, unknown>, t: number): CodeTurnCheck | null {
  const turns = info.turns as Array<{ verification?: CodeTurnVerification | null }> | undefined;
  const v = turns?.[t]?.verification;
  if (!v || !v.hasReference || v.coders.length === 0 || v.testers.length === 0) return null;
  const shown = v.checks.find((c) => !c.agree) ?? v.checks[0];
  return {
    programCorrect: v.coders.every((c) => c.hasProgram && c.goldenPassed),
    testCorrect: v.testers.every((c) => c.hasCase && c.reproduced),
    sample: shown ? { input: shown.input, printed: shown.printed, declared: shown.declared, ...(shown.status !== 'ok' ? { failure: { status: shown.status, error: shown.error ?? '' } } : {}) } : null,
  };
}

export function codeAttributor(episode: { info: Record<string, unknown> }, t: number): Attribution | null {
  const check = codeTurnCheck(episode.info, t);
  return check ? codeAttribution(check) : null;
}
