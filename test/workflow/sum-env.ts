// A fixture for the branching samplers' tests (tree-sampling, MAGRPO's joint tree): two agents acting
// in sequence (a then b) over two turns, in a copyable environment whose rewards are the numbers the
// agents write, so every return and advantage can be computed by hand.
import { sequentialGraph, type StepInput, type StepOutcome, type TaskEnv, type Workflow } from '../../src/workflow/index.ts';

/** Team reward = a's number + b's number; role-local reward = the agent's own number. Copyable. */
export class SumEnv implements TaskEnv {
  readonly seen: string[][] = [];
  constructor(readonly problemId: string, readonly firstMessage: string) {}
  onStep(step: StepInput): StepOutcome {
    this.seen.push(step.outputs.map((o) => o.text));
    const v = Object.fromEntries(step.outputs.map((o) => [o.agent, Number(o.text)]));
    return { teamReward: v.a! + v.b!, perAgentReward: { a: v.a!, b: v.b! }, done: false };
  }
  finalScore() {
    return { score: this.seen.length, info: {} };
  }
  clone(): SumEnv {
    const c = new SumEnv(this.problemId, this.firstMessage);
    c.seen.push(...structuredClone(this.seen));
    return c;
  }
}

const agent = (name: string) => ({ name, role: name.toUpperCase(), systemPrompt: `You are ${name}.`, roleDescription: name, policy: `policy-${name}` });

/** a then b, two turns; each observation names the problem, the turn, what the agent sees and the history. */
export const sumWorkflow: Workflow = {
  name: 'ab',
  agents: [agent('a'), agent('b')],
  graph: sequentialGraph(['a', 'b']),
  horizon: 2,
  observe: (ctx) => [{ role: 'user', content: `${ctx.problem} t${ctx.t} ${ctx.agent.name} sees ${ctx.visible.map((o) => o.text).join(',')} after ${ctx.history.flatMap((h) => h.outputs.map((o) => o.text)).join(',')}` }],
};
