// Token-level views of an Episode for trainers: loss masks and per-action boundaries.
import { actionSequence, type ActionRecord, type Episode } from './trajectory.ts';

/**
 * Loss mask over actionSequence(a).tokens: 0 on the prompt (observation), 1 on every sampled
 * token (the stop token too, since the policy chose it). Shape [promptTokens + actionTokens].
 */
export function actionLossMask(a: ActionRecord): Uint8Array {
  const { tokens, scoreFrom } = actionSequence(a);
  const mask = new Uint8Array(tokens.length);
  mask.fill(1, scoreFrom);
  return mask;
}

export interface ActionSpan {
  /** Index into episode.actions. */
  action: number;
  agent: string;
  step: number;
  agentIndex: number;
  /** [start, end) of this action's tokens in the episode's concatenated action tokens. */
  start: number;
  end: number;
}

/** Per-agent, per-step boundaries of the episode's sampled tokens, in execution order. */
export function actionSpans(episode: Episode): ActionSpan[] {
  let offset = 0;
  return episode.actions.map((a, k) => {
    const span = { action: k, agent: a.agent, step: a.step, agentIndex: a.agentIndex, start: offset, end: offset + a.actionTokens.length };
    offset = span.end;
    return span;
  });
}

/** Throws when an episode breaks the trajectory contract (what a trainer relies on). */
export function checkEpisode(episode: Episode): void {
  const where = (k: number) => `episode '${episode.problemId}', action ${k}`;
  let lastStep = -1;
  let lastIndex = -1;
  episode.actions.forEach((a, k) => {
    if (a.behaviourLogprobs.length !== a.actionTokens.length) {
      throw new Error(`${where(k)}: ${a.behaviourLogprobs.length} behaviour logprobs for ${a.actionTokens.length} action tokens`);
    }
    if (a.promptTokens.length === 0) throw new Error(`${where(k)}: empty prompt`);
    const inOrder = a.step > lastStep ? a.agentIndex === 0 : a.step === lastStep && a.agentIndex === lastIndex + 1;
    if (!inOrder) throw new Error(`${where(k)}: out of execution order (step ${a.step}, agentIndex ${a.agentIndex})`);
    lastStep = a.step;
    lastIndex = a.agentIndex;
  });
  episode.steps.forEach((s, t) => {
    if (s.t !== t) throw new Error(`episode '${episode.problemId}': step ${t} is numbered ${s.t}`);
    if (s.done !== (t === episode.steps.length - 1)) throw new Error(`episode '${episode.problemId}': only the last step may be done`);
  });
}
