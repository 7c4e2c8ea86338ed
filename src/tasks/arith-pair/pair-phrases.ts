// The fixed text fragments of every system of the arith-pair task, one token each in its phrase
// tokenizer (./phrase-tokenizer.ts): the pair's (studyPhrases, the demo's) and, for the 4-agent
// system and the single agents, their system prompts, later-turn prompts, feedback lines and
// verdicts. A fragment left out is spelt character by character: sequences get longer, nothing
// else changes.
import { consistencyFeedback, type MathAgentAnswer } from '../../env/math-env.ts';
import { mathAttribution, MATH_CONCLUSIONS, renderVerdict } from '../../opd/pac.ts';
import { conditionText, DEFAULT_ROLE_CONDITIONS } from '../../opd/role-conditions.ts';
import { splitRoleLine } from '../../opd/teacher-context.ts';
import type { Workflow } from '../../workflow/index.ts';
import { fragments } from './phrase-tokenizer.ts';
import { studyPhrases } from './study-task.ts';

const X = '\u0001';

function systemPhrases(workflow: Workflow): string[] {
  const out: string[] = [];
  const answers = (correct: boolean): MathAgentAnswer[] => workflow.agents.map((a) => ({ agent: a.name, role: a.role, answer: X, correct, ...(a.role === 'Tool-User' ? { program: { found: true, status: 'ok' } } : {}) }));
  if (workflow.agents.some((a) => a.role === 'Tool-User')) {
    for (const agree of [true, false]) out.push(...fragments(consistencyFeedback(answers(false), agree)));
    for (const agent of workflow.agents) out.push(`${agent.name} (${agent.role}) `, `${agent.name} (${agent.role}): the program `);
    for (const c of MATH_CONCLUSIONS) {
      const r = c === 'BOTH_CONSISTENT' || c === 'COMPUTATION_INCONSISTENT';
      const t = c === 'BOTH_CONSISTENT' || c === 'DERIVATION_INCONSISTENT';
      const v = renderVerdict(mathAttribution(workflow.agents.map((a) => ({ agent: a.name, role: a.role, answer: X, correct: a.role === 'Tool-User' ? t : r, ...(a.role === 'Tool-User' ? { programStatus: 'ok' } : {}) }))));
      out.push(...fragments(`\n\n${v}`));
    }
  }
  for (const agent of workflow.agents) {
    const { roleLine, rest } = splitRoleLine(agent.systemPrompt, 'first-sentence');
    out.push(roleLine, rest, `\n\n${rest}`, conditionText(DEFAULT_ROLE_CONDITIONS, agent.role));
    const history = [{ t: 0, outputs: workflow.agents.map((a) => ({ agent: a.name, role: a.role, text: X })), feedback: X }];
    for (const m of workflow.observe({ agent, t: 1, problem: X, visible: [], history, position: 0, agents: workflow.agents })) out.push(...fragments(m.content));
  }
  return out;
}

/** `systems[0]` is the Reasoner–Tool-User pair (the demo's phrases); the rest add their own. */
export function pairTaskPhrases(systems: readonly Workflow[]): string[] {
  const [pair, ...rest] = systems;
  return [...studyPhrases(pair!), ...rest.flatMap(systemPhrases)];
}
