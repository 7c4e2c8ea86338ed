// The teacher's context for one response (spec section 5; MAS-OPD paper §3.1, §3.3):
//   u ⊕ r_i (⊕ c^{t-1})
// u is the student's own input (the chat messages it was prompted with, kept by the rollout) with
// the role line of its template removed; the role condition r_i is put where that line was; the
// PAC verdict c^{t-1} on the previous turn, when there is one, closes the input, so it sits after the
// record of turn t-1 and before the response of turn t. The student's messages are never changed.
// Both RAS passes use this function with the same u and verdict and differ only in the condition.
// The role line must take everything of the template that says which role the student plays: a
// sentence left behind ("You work with a Tool-User, who …" in the Reasoner's prompt) would sit
// beside the contrasting condition ("You are the Tool-User …") and tell the teacher the role anyway,
// so A_role would cancel. Hence the default rule, role-sentences.
import type { RoleLineRule } from '../config/choices.ts';
import type { ChatMessage } from '../tokenizer/types.ts';
import { DEFAULT_ROLE_CONDITIONS } from './role-conditions.ts';

/**
 * Which part of the first system message is the role line:
 *   'role-sentences'  its first sentence and every directly following sentence that addresses the
 *                     agent ("You …") and names a role: who it is and who it works with ("You are
 *                     the Reasoner. You work with a Tool-User, who solves the same problem by
 *                     writing a program." in the built-in pair prompts);
 *   'first-sentence'  its first sentence ("You are the Reasoner.");
 *   'first-line'      its first line;
 *   'system-message'  all of it (templates whose system message is only the role).
 */
export { ROLE_LINE_RULES, type RoleLineRule } from '../config/choices.ts';

/** The role names role-sentences looks for by default: the built-in table's roles. */
export const DEFAULT_ROLE_NAMES: readonly string[] = Object.keys(DEFAULT_ROLE_CONDITIONS.conditions);

/** The first system message split into its role line and the rest of the template; `roleNames` for role-sentences. */
export function splitRoleLine(content: string, rule: RoleLineRule, roleNames: readonly string[] = DEFAULT_ROLE_NAMES): { roleLine: string; rest: string } {
  if (rule === 'system-message') return { roleLine: content, rest: '' };
  const end = rule === 'first-line' ? content.indexOf('\n') : rule === 'first-sentence' ? firstSentenceEnd(content, 0) : roleSentencesEnd(content, roleNames);
  if (end < 0) return { roleLine: content, rest: '' };
  return { roleLine: content.slice(0, end).trim(), rest: content.slice(end).replace(/^\s+/, '') };
}

/** Index just past the first sentence from `from` (a '.', '!' or '?' followed by whitespace or the end), or -1. */
function firstSentenceEnd(text: string, from: number): number {
  const m = /[.!?](?=\s|$)/.exec(text.slice(from));
  return m ? from + m.index + 1 : -1;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** End of the first sentence and of each following "You …" sentence that names one of `roleNames`, or -1. */
function roleSentencesEnd(text: string, roleNames: readonly string[]): number {
  let end = firstSentenceEnd(text, 0);
  if (end < 0 || roleNames.length === 0) return end;
  const names = new RegExp(`(?<![\\p{L}\\p{N}-])(?:${[...roleNames].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}-])`, 'u');
  for (;;) {
    const start = end + (/^\s*/.exec(text.slice(end))![0].length);
    const next = firstSentenceEnd(text, start);
    if (next < 0) return end;
    const sentence = text.slice(start, next);
    if (!/^You\b/.test(sentence) || !names.test(sentence)) return end;
    end = next;
  }
}

/** u ⊕ condition ⊕ verdict, as chat messages (new objects; `student` is left as it is). */
export function teacherMessages(student: readonly ChatMessage[], condition: string, verdict: string | null, rule: RoleLineRule, roleNames: readonly string[] = DEFAULT_ROLE_NAMES): ChatMessage[] {
  const system = student.findIndex((m) => m.role === 'system');
  if (system < 0) throw new Error('the student input has no system message, so it has no role line to replace with the role condition');
  const out = student.map((m) => ({ ...m }));
  const { rest } = splitRoleLine(out[system]!.content, rule, roleNames);
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
