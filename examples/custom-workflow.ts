// A user-defined Flex-MG workflow built from marft's pieces:
//   - four agents: an Analyst, two Solvers that work in parallel, and a Judge;
//   - D is a diamond at step 0 (analyst → solver_a, solver_b → judge), and a router lets the
//     two solvers see each other's previous answers through a chain at step 1;
//   - the environment checks the Judge's "#### answer" against the reference and ends the
//     episode when it is right (horizon 2).
// Run: node --import tsx examples/custom-workflow.ts   (a ScriptedSampler stands in for a model;
// pass engineSampler(engine) instead to train or evaluate a real one.)
import { CharTokenizer, type ChatMessage } from '../src/tokenizer/index.ts';
import {
  ScriptedSampler,
  extractHashAnswer,
  rollout,
  turnMessage,
  type Agent,
  type Edge,
  type ObservationContext,
  type StepInput,
  type StepOutcome,
  type TaskEnv,
  type Workflow,
} from '../src/workflow/index.ts';

const agents: Agent[] = [
  { name: 'analyst', role: 'Analyst', roleDescription: 'Restates the problem and lists what is known.', systemPrompt: 'You are the Analyst. List the facts in the problem.', policy: 'analyst' },
  { name: 'solver_a', role: 'Solver A', roleDescription: 'Solves the problem one way.', systemPrompt: 'You are Solver A. Solve it and end with #### answer.', policy: 'solver' },
  { name: 'solver_b', role: 'Solver B', roleDescription: 'Solves the problem another way.', systemPrompt: 'You are Solver B. Solve it and end with #### answer.', policy: 'solver' },
  { name: 'judge', role: 'Judge', roleDescription: 'Picks the right answer.', systemPrompt: 'You are the Judge. End with #### answer.', policy: 'judge' },
];

const diamond: Edge[] = [['analyst', 'solver_a'], ['analyst', 'solver_b'], ['solver_a', 'judge'], ['solver_b', 'judge']];
const chain: Edge[] = [['analyst', 'solver_a'], ['solver_a', 'solver_b'], ['solver_b', 'judge']];

/** System prompt, the problem, last step's feedback, then every visible output as a turn. */
function observe(ctx: ObservationContext): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: ctx.agent.systemPrompt }, { role: 'user', content: ctx.problem }];
  const last = ctx.history[ctx.history.length - 1];
  if (last?.feedback) messages.push({ role: 'user', content: `Feedback on the last attempt: ${last.feedback}` });
  for (const out of ctx.visible) messages.push({ role: 'user', content: `${out.role} said:\n${out.text}` });
  messages.push({ role: 'user', content: turnMessage(ctx.agent.role, ctx.agent.roleDescription) });
  return messages;
}

export const customWorkflow: Workflow = {
  name: 'analyst-two-solvers-judge',
  agents,
  graph: diamond,
  horizon: 2,
  observe,
  router: ({ t }) => (t === 0 ? diamond : chain),
};

/** Reward 1 when the Judge's answer equals the reference; the reference never reaches a prompt. */
export class ArithmeticEnv implements TaskEnv {
  private correct = false;
  constructor(
    readonly problemId: string,
    readonly firstMessage: string,
    private readonly reference: string,
  ) {}
  onStep(step: StepInput): StepOutcome {
    const judge = step.outputs.find((o) => o.agent === 'judge')!;
    this.correct = extractHashAnswer(judge.text) === this.reference;
    return { teamReward: this.correct ? 1 : 0, done: this.correct, feedback: this.correct ? undefined : 'The answer was not accepted.' };
  }
  finalScore() {
    return { score: this.correct ? 1 : 0, info: { correct: this.correct } };
  }
}

export async function runExample() {
  const tokenizer = new CharTokenizer();
  // A stand-in policy: solver_b is wrong at step 0, so the Judge first picks 7, then 8.
  const sampler = new ScriptedSampler(tokenizer, ({ meta }) => {
    const { agent, t } = meta!;
    if (agent === 'analyst') return 'We add 5 and 3.';
    if (agent === 'solver_a') return '5 + 3 = 8\n#### 8';
    if (agent === 'solver_b') return t === 0 ? '5 + 3 = 7\n#### 7' : 'Solver A is right.\n#### 8';
    return t === 0 ? '#### 7' : '#### 8';
  });
  const envs = [new ArithmeticEnv('add-5-3', 'What is 5 + 3?', '8'), new ArithmeticEnv('add-5-3-again', 'Compute 5 + 3.', '8')];
  const params = { temperature: 1, topP: 1, topK: 0, maxNewTokens: 64, stopTokenIds: [], stopStrings: [], seed: 0 };
  return rollout(customWorkflow, envs, { sampler, tokenizer, params });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const ep of await runExample()) {
    console.log(`${ep.problemId}: score ${ep.outcome} after ${ep.steps.length} step(s)`);
    for (const a of ep.actions) console.log(`  t=${a.step} #${a.agentIndex} ${a.agent.padEnd(8)} ${a.promptTokens.length} prompt + ${a.actionTokens.length} action tokens: ${JSON.stringify(a.text)}`);
  }
}
