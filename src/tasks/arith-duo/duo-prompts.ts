// What each agent of the demo's Duo (Planner → Solver, spec section 2) sees, as chat messages.
// The problem is the first user message; each agent has its own system prompt; the Solver sees
// the Planner's reply and then the turn message naming it. Role prompts are the role names only:
// the tiny model's vocabulary has no room for prose, and the roles are all it needs.
//
// Pretraining transcripts are rendered through these same functions, so the model is trained on
// exactly the token sequences the agents are prompted with.
import type { ChatMessage, Tokenizer } from '../../tokenizer/index.ts';

export const PLANNER = 'Planner';
export const SOLVER = 'Solver';

export function plannerMessages(problemText: string): ChatMessage[] {
  return [
    { role: 'system', content: PLANNER },
    { role: 'user', content: problemText },
  ];
}

export function solverMessages(problemText: string, planText: string): ChatMessage[] {
  return [
    { role: 'system', content: SOLVER },
    { role: 'user', content: problemText },
    { role: 'assistant', content: planText },
    { role: 'user', content: SOLVER },
  ];
}

export function plannerPrompt(tokenizer: Tokenizer, problemText: string): number[] {
  return tokenizer.encodeChat(plannerMessages(problemText), { addGenerationPrompt: true });
}

export function solverPrompt(tokenizer: Tokenizer, problemText: string, planText: string): number[] {
  return tokenizer.encodeChat(solverMessages(problemText, planText), { addGenerationPrompt: true });
}
