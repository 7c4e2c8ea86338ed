// The centralised critic's view of a Flex-MG step (spec section 4: MARFT's critic values the
// joint state, not one agent's observation). Before the k-th action of step t (chain order) the
// critic reads:
//   user: the problem
//   for every earlier turn s < t: each output of that turn as  user: <role>  assistant: <text>,
//                                 then the turn's feedback (shared, then per agent) as user messages
//   for this turn: the k earlier actions as  user: <role>  assistant: <text>
//   user: <role of the agent about to act>      (+ the generation prompt)
// The rendering depends only on what happened, never on what the acting agent itself observes
// (its dependency-graph predecessors, its own system prompt): two agents that act in parallel
// (D = 0 between them) still see each other's actions here when they come earlier in chain order.
// Roles name the speakers; when several agents share a role, their agent names do.
import type { ChatMessage } from '../tokenizer/types.ts';
import type { TurnRecord } from './workflow.ts';

export interface JointAction {
  /** Who acted (a role, or an agent name when roles repeat). */
  speaker: string;
  text: string;
}

export interface JointStateInput {
  problem: string;
  /** Finished turns, oldest first. */
  history: readonly TurnRecord[];
  /** This turn's actions before the one being valued, in chain order (an orchestrator's included). */
  earlier: readonly JointAction[];
  /** The speaker about to act. */
  next: string;
  /** Speaker label of an agent name (role, or the name itself when roles repeat). */
  speakerOf: (agent: string) => string;
}

export function jointStateMessages(input: JointStateInput): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'user', content: input.problem }];
  const say = (speaker: string, text: string) => messages.push({ role: 'user', content: speaker }, { role: 'assistant', content: text });
  for (const turn of input.history) {
    for (const o of turn.outputs) say(input.speakerOf(o.agent), o.text);
    if (turn.feedback !== undefined) messages.push({ role: 'user', content: turn.feedback });
    for (const [agent, text] of Object.entries(turn.feedbackFor ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      messages.push({ role: 'user', content: `${input.speakerOf(agent)}: ${text}` });
    }
  }
  for (const a of input.earlier) say(a.speaker, a.text);
  messages.push({ role: 'user', content: input.next });
  return messages;
}

/** Speaker labels: the role where it names one agent, else the agent's own name. */
export function speakerLabels(agents: readonly { name: string; role: string }[]): (agent: string) => string {
  const count = new Map<string, number>();
  for (const a of agents) count.set(a.role, (count.get(a.role) ?? 0) + 1);
  const label = new Map(agents.map((a) => [a.name, count.get(a.role) === 1 ? a.role : a.name]));
  return (agent) => label.get(agent) ?? agent;
}
