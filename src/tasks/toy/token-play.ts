// What the toy tasks on raw token ids share: the sampling parameters of one turn and the
// ActionRecord of a sampled reply (its text is the token ids, there being no tokenizer).
import type { Sampling } from '../../rl/task.ts';
import type { ActionRecord } from '../../workflow/trajectory.ts';

export function sampleParams(s: Sampling, maxNewTokens: number, seed: number) {
  return { temperature: s.temperature, topP: s.topP, topK: s.topK, maxNewTokens, stopTokenIds: [], stopStrings: [], seed };
}

export function tokenAction(agent: string, agentIndex: number, policy: string, promptTokens: number[], r: { tokens: number[]; logprobs: number[]; stopReason: ActionRecord['stopReason'] }, reward: number): ActionRecord {
  return { agent, agentIndex, step: 0, policy, promptTokens, actionTokens: r.tokens, behaviourLogprobs: r.logprobs, stopReason: r.stopReason, text: r.tokens.join(' '), reward };
}
