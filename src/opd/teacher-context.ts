// The teacher's context for one response (spec section 5; MAS-OPD paper §3.1, §3.3):
//   u ⊕ r_i (⊕ c^{t-1})
// u is the student's own input (the chat messages it was prompted with, kept by the rollout) with
// the role line of its template removed; the role condition r_i is put where that line was; the
// PAC verdict c^{t-1} on the previous turn, when there is one, closes the input, so it sits after the
// record of turn t-1 and before the response of turn t. The student's messages are never changed.
// Both RAS passes use this function with the same u and verdict and differ only in the condition.
import type { RoleLineRule } from '../config/choices.ts';
import type { ChatMessage } from '../tokenizer/types.ts';

/**
 * Which part of the first system message is the role line:
 *   'first-sentence'  its first sentence ("You are the Reasoner." in the built-in pair prompts);
 *   'first-line'      its first line;
 *   'system-message'  all of it (templates whose system message is only the role).
 */
export { ROLE_LINE_RULES, type RoleLineRule } from '../config/choices.ts';

/** The first system message split into its role line and the rest of the template. */
export function splitRoleLine(content: string, rule: RoleLineRule): { roleLine: string; rest: string } {
  if (rule === 'system-message') return { roleLine: content, rest: '' };
  const end = rule === 'first-line' ? content.indexOf('\n') : firstSentenceEnd(content);
  if (end < 0) return { roleLine: content, rest: '' };
  return { roleLine: content.slice(0, end).trim(), rest: content.slice(end).replace(/^\s+/, '') };
}

/** Index just past the first sentence's full stop (a '.', '!' or '?' followed by whitespace or the end), or -1. */
function firstSentenceEnd(text: string): number {
  const m = /[.!?](?=\s|$)/.exec(text);
  return m ? m.index + 1 : -1;
}

/** u ⊕ condition ⊕ verdict, as chat messages (new objects; `student` is left as it is). */
export function teacherMessages(student: readonly ChatMessage[], condition: string, verdict: string | null, rule: RoleLineRule): ChatMessage[] {
  const system = student.findIndex((m) => m.role === 'system');
  if (system < 0) throw new Error('the student input has no system message, so it has no role line to replace with the role condition');
  const out = student.map((m) => ({ ...m }));
  const { rest } = splitRoleLine(out[system]!.content, rule);
  out[system]!.content = rest === '' ? condition : `${condition}\n\n${rest}`;
  if (verdict !== null) {
    let last = -1;
    out.forEach((m, k) => {
      if (m.role === 'user') last = k;
    });
    if (last < 0) out.push({ role: 'user', content: verdict });
    else out[last]!.content = `${out[last]!.content}\n\n${verdict}`;
  }
  return out;
}
