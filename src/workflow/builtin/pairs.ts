// The MAS-OPD / Stronger-MAS multi-turn pairs (spec section 2), horizon T = 4 by default:
//   code: Coder (a stdin/stdout Python program) + Tester (one test case: input and expected output);
//   math: Reasoner (answer in words after ####) + Tool-User (a program that prints the answer).
// At every turn all agents act at once (D ≡ 0). The environment runs the programs, compares, and
// reports the result as feedback; it ends the episode when the roles agree (StepOutcome.done).
// Golden tests never reach a prompt: the only environment text an agent sees is its feedback.
// With n agents per role (systems of 2n agents) agents are named coder_1..coder_n, tester_1..;
// each agent's later-turn prompt shows its counterparts (the other role's agents) from the
// previous turn.
//
// Turn 0:   system: role prompt;  user: problem
// Turn t>0: system: role prompt;  user: problem, own previous output, the counterparts' previous
//           outputs, the environment's feedback, and the symmetric question: where does the
//           inconsistency come from? revise or keep.
import type { ChatMessage } from '../../tokenizer/types.ts';
import type { SampleParams } from '../../engine/types.ts';
import type { Agent } from '../agent.ts';
import { emptyGraph } from '../graph.ts';
import type { ObservationContext, TurnRecord, Workflow } from '../workflow.ts';
import { ROLES, policyFor, type Domain, type PolicyChoice } from './roles.ts';

export interface PairOptions {
  domain: Domain;
  /** Agents per role: 1 (a pair) or more (systems of 2n agents). */
  agentsPerRole?: number;
  /** Horizon T (default 4). */
  horizon?: number;
  /** Whose previous outputs an agent sees: every agent of the other role (default) or only the one with its index. */
  counterparts?: 'all' | 'same-index';
  policies?: PolicyChoice;
  sampleParams?: Partial<SampleParams>;
}

interface PairRole {
  key: keyof typeof ROLES;
  /** What the agent produces, for the later-turn prompt ("your program", "the Tester's test case"). */
  artifact: string;
  description: string;
  systemPrompt: string;
}

const CODER: PairRole = {
  key: 'coder',
  artifact: 'program',
  description: 'Writes a Python program that solves the problem.',
  systemPrompt:
    'You are the Coder. You work with a Tester, who writes test cases for the same problem. Write a complete Python program ' +
    'that solves the problem, reading from standard input and printing to standard output. Give the whole program in one ```python code block.',
};

const TESTER: PairRole = {
  key: 'tester',
  artifact: 'test case',
  description: 'Writes a test case: an input and the output a correct program prints for it.',
  systemPrompt:
    'You are the Tester. You work with a Coder, who writes the program for the same problem. Do not write a solution. Write ' +
    'one test case that a correct program must pass, in exactly this format:\n**Test Input:**\n```\n<input>\n```\n**Test Output:**\n```\n<expected output>\n```',
};

const REASONER: PairRole = {
  key: 'reasoner',
  artifact: 'answer',
  description: 'Solves the problem by step-by-step reasoning and states the answer after ####.',
  systemPrompt:
    'You are the Reasoner. You work with a Tool-User, who solves the same problem by writing a program. Solve the problem by ' +
    'step-by-step mathematical reasoning in words, without code. End with the final answer on its own line after the marker ####, for example: #### 42',
};

const TOOL_USER: PairRole = {
  key: 'toolUser',
  artifact: 'program',
  description: 'Writes a Python program that computes and prints the answer.',
  systemPrompt:
    'You are the Tool-User. You work with a Reasoner, who solves the same problem by reasoning in words. Write a Python program ' +
    'that computes the answer to the problem and prints only the final answer. Give the whole program in one ```python code block.',
};

function pairRoles(domain: Domain): [PairRole, PairRole] {
  return domain === 'code' ? [CODER, TESTER] : [REASONER, TOOL_USER];
}

export function pairAgents(options: PairOptions): Agent[] {
  const n = options.agentsPerRole ?? 1;
  if (!Number.isInteger(n) || n < 1) throw new Error(`agentsPerRole must be a positive integer, got ${n}`);
  const roles = pairRoles(options.domain);
  const agents: Agent[] = [];
  for (const role of roles) {
    for (let i = 1; i <= n; i++) {
      const base = role.key === 'toolUser' ? 'tool_user' : role.key;
      const name = n === 1 ? base : `${base}_${i}`;
      agents.push({
        name,
        role: ROLES[role.key],
        roleDescription: role.description,
        systemPrompt: role.systemPrompt,
        policy: policyFor(options.policies, name, agents.length, 2 * n),
        ...(options.sampleParams ? { sampleParams: options.sampleParams } : {}),
      });
    }
  }
  return agents;
}

/** The index suffix of an agent name ("coder_3" → 3; a lone "coder" → 1). */
function agentIndex(name: string): number {
  const m = /_(\d+)$/.exec(name);
  return m ? Number(m[1]) : 1;
}

function feedbackFor(turn: TurnRecord, agent: string): string | undefined {
  return turn.feedbackFor?.[agent] ?? turn.feedback;
}

/** Later-turn prompt shared by both roles of a pair (symmetric by construction). */
export function pairObservation(domain: Domain, counterparts: 'all' | 'same-index') {
  const [first, second] = pairRoles(domain);
  return (ctx: ObservationContext): ChatMessage[] => {
    const messages: ChatMessage[] = [{ role: 'system', content: ctx.agent.systemPrompt }];
    const last = ctx.history[ctx.history.length - 1];
    if (!last) {
      messages.push({ role: 'user', content: ctx.problem });
      return messages;
    }
    const mine = ctx.agent.role === ROLES[first.key] ? first : second;
    const other = mine === first ? second : first;
    const own = last.outputs.find((o) => o.agent === ctx.agent.name);
    const theirs = last.outputs.filter(
      (o) => o.role === ROLES[other.key] && (counterparts === 'all' || agentIndex(o.agent) === agentIndex(ctx.agent.name)),
    );
    const parts = [`Problem:\n${ctx.problem}`, `Your ${mine.artifact} from the previous turn:\n${own?.text ?? '(none)'}`];
    theirs.forEach((o) => {
      const who = theirs.length > 1 ? `${ROLES[other.key]} ${agentIndex(o.agent)}` : `the ${ROLES[other.key]}`;
      parts.push(`The ${other.artifact} from ${who} in the previous turn:\n${o.text}`);
    });
    const feedback = feedbackFor(last, ctx.agent.name);
    parts.push(`Result of the environment's check:\n${feedback ?? '(no result)'}`);
    parts.push(
      `Your ${mine.artifact} and the ${ROLES[other.key]}'s ${other.artifact} are not yet consistent. First explain briefly where the ` +
        `inconsistency comes from: your ${mine.artifact}, the ${ROLES[other.key]}'s ${other.artifact}, or both. Then either revise your ` +
        `${mine.artifact} or keep it unchanged if you believe it is correct, and give the final version in the required format.`,
    );
    messages.push({ role: 'user', content: parts.join('\n\n') });
    return messages;
  };
}

/** Coder–Tester (domain 'code') or Reasoner–Tool-User (domain 'math'). */
export function multiTurnPair(options: PairOptions): Workflow {
  const agents = pairAgents(options);
  const n = options.agentsPerRole ?? 1;
  const base = options.domain === 'code' ? 'coder-tester' : 'reasoner-tool-user';
  return {
    name: n === 1 ? base : `${base}-${2 * n}`,
    agents,
    graph: emptyGraph(),
    horizon: options.horizon ?? 4,
    observe: pairObservation(options.domain, options.counterparts ?? 'all'),
  };
}

export const coderTester = (options: Omit<PairOptions, 'domain'> = {}): Workflow => multiTurnPair({ ...options, domain: 'code' });
export const reasonerToolUser = (options: Omit<PairOptions, 'domain'> = {}): Workflow => multiTurnPair({ ...options, domain: 'math' });
