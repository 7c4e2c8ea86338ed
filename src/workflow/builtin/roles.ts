// Role names of the built-in workflows (environments dispatch on AgentOutput.role) and the
// spec's one-line role descriptions (spec section 2; Planner descriptions are our own words).
export const ROLES = {
  planner: 'Planner',
  solver: 'Solver',
  verifier: 'Verifier',
  reflector: 'Reflector',
  coder: 'Coder',
  tester: 'Tester',
  reasoner: 'Reasoner',
  toolUser: 'Tool-User',
} as const;

export type Domain = 'math' | 'code';

/** `Now it is {role}'s turn. {role description}` (spec section 2). */
export function turnMessage(role: string, roleDescription: string): string {
  return `Now it is ${role}'s turn. ${roleDescription}`;
}

const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];

export function ordinal(position: number): string {
  return ORDINALS[position] ?? `${position + 1}th`;
}

/**
 * Policy per agent: a string shares one adapter among all agents (parameter sharing), an array
 * gives one per agent in order, undefined gives each agent an adapter named after itself.
 */
export type PolicyChoice = string | readonly string[] | undefined;

export function policyFor(choice: PolicyChoice, agentName: string, index: number, count: number): string {
  if (choice === undefined) return agentName;
  if (typeof choice === 'string') return choice;
  if (choice.length !== count) throw new Error(`policies: expected ${count} adapter names (one per agent), got ${choice.length}`);
  return choice[index]!;
}
