// The fixed text fragments of every system of the code-pair task, one token each in its phrase
// tokenizer (../arith-pair/phrase-tokenizer.ts): the system prompts, the later-turn prompts, the
// code environment's feedback lines, the problem statement's wording and the fixed parts of the
// program and of the test case. A fragment left out is spelt character by character: sequences get
// longer, nothing else changes.
import { caseFeedback, type CaseCheck } from '../../env/code-env.ts';
import type { Workflow } from '../../workflow/index.ts';
import { fragments } from '../arith-pair/phrase-tokenizer.ts';
import { PROGRAM_HEAD, TEST_END, TEST_INPUT_HEAD, TEST_OUTPUT_HEAD } from './code-problems.ts';

const X = '\u0001';
/** The feedback quotes its values with JSON.stringify, which escapes \u0001: a marker it leaves as is. */
const Q = '\u00a7';

function feedbackPhrases(coder: string, tester: string): string[] {
  const check = (agree: boolean, status = 'ok'): CaseCheck => ({ coder, tester, input: Q, declared: Q, status, printed: Q, agree, ...(status === 'ok' ? {} : { error: Q }) });
  const cases = [{ tester, testCase: { input: Q, output: Q } }];
  const rendered = [
    caseFeedback([coder], new Map([[coder, Q]]), cases, [check(true)]),
    caseFeedback([coder], new Map([[coder, Q]]), cases, [check(false)]),
    caseFeedback([coder], new Map([[coder, Q]]), cases, [check(false, 'runtime_error')]),
    caseFeedback([coder], new Map([[coder, null]]), [{ tester, testCase: null }], []),
  ];
  return rendered.flatMap((r) => r.split('\n')).flatMap((line) => line.split(Q)).filter((f) => f.length > 1);
}

export function codePairPhrases(systems: readonly Workflow[]): string[] {
  const out: string[] = ['```python\n' + PROGRAM_HEAD, ')\n```', TEST_INPUT_HEAD, TEST_OUTPUT_HEAD, TEST_END, 'Read an integer x from standard input and print the value of '];
  for (const workflow of systems) {
    const coder = workflow.agents.find((a) => a.role === 'Coder');
    const tester = workflow.agents.find((a) => a.role === 'Tester');
    if (coder && tester) out.push(...feedbackPhrases(coder.name, tester.name));
    for (const agent of workflow.agents) {
      out.push(agent.systemPrompt);
      const history = [{ t: 0, outputs: workflow.agents.map((a) => ({ agent: a.name, role: a.role, text: X })), feedback: X }];
      for (const m of workflow.observe({ agent, t: 1, problem: X, visible: [], history, position: 0, agents: workflow.agents })) out.push(...fragments(m.content));
    }
  }
  return out;
}
