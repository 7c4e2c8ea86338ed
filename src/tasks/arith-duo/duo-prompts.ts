// What each agent of the demo's Duo (Planner → Solver, spec section 2) sees, as chat messages.
// The problem is the first user message; each agent has its own system prompt; the Solver sees
// the Planner's reply and then the turn message naming it. Role prompts are the role labels only:
// the tiny model's vocabulary has no room for prose, and the roles are all it needs.
//
// Two label sets: the prescribed roles (Planner, Solver) and the spec's anonymous variant, which
// keeps the graph with position-indexed generic labels ("The {ordinal} agent in the sequential
// pipeline", written here as a1 and a2, from letters and digits the vocabulary already has, so both
// variants have the same model shape). A model built from scratch has no prior for either set: to it a
// label is an identifier. The comparison matters on a pretrained LLM, where the names carry meaning.
//
// Pretraining transcripts are rendered through these same functions, so the model is trained on
// exactly the token sequences the agents are prompted with.
import type { ChatMessage, Tokenizer } from '../../tokenizer/index.ts';

export const PLANNER = 'Planner';
export const SOLVER = 'Solver';

/** The label each agent's system prompt and turn message carry. */
export interface DuoRoles {
  planner: string;
  solver: string;
}

export type DuoRoleStyle = 'named' | 'anonymous';
export const DUO_ROLE_STYLES: readonly DuoRoleStyle[] = ['named', 'anonymous'];

export const NAMED_ROLES: DuoRoles = { planner: PLANNER, solver: SOLVER };
export const ANONYMOUS_ROLES: DuoRoles = { planner: 'a1', solver: 'a2' };

export function duoRoles(style: DuoRoleStyle): DuoRoles {
  return style === 'anonymous' ? ANONYMOUS_ROLES : NAMED_ROLES;
}

export function plannerMessages(problemText: string, roles: DuoRoles = NAMED_ROLES): ChatMessage[] {
  return [
    { role: 'system', content: roles.planner },
    { role: 'user', content: problemText },
  ];
}

export function solverMessages(problemText: string, planText: string, roles: DuoRoles = NAMED_ROLES): ChatMessage[] {
  return [
    { role: 'system', content: roles.solver },
    { role: 'user', content: problemText },
    { role: 'assistant', content: planText },
    { role: 'user', content: roles.solver },
  ];
}

export function plannerPrompt(tokenizer: Tokenizer, problemText: string, roles: DuoRoles = NAMED_ROLES): number[] {
  return tokenizer.encodeChat(plannerMessages(problemText, roles), { addGenerationPrompt: true });
}

export function solverPrompt(tokenizer: Tokenizer, problemText: string, planText: string, roles: DuoRoles = NAMED_ROLES): number[] {
  return tokenizer.encodeChat(solverMessages(problemText, planText, roles), { addGenerationPrompt: true });
}
